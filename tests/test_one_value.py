"""Quantities the book states on more than one page: each page reads one function, and the
counts that pages define differently add up as the pages say."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dkm.book import ablations, analysis
from dkm.protocol.results import ResultsStore, dataset_stores

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


def _reruns(rows):
    columns = ["config_hash", "rerun", "own_code", "moved", "difference"]
    return pd.DataFrame(rows, columns=columns)


def test_machine_moved_is_own_code_and_the_reruns_that_give_its_score():
    table = _reruns([
        ("a", 70.0, True, True, -2.0),    # own code, moved: the machine
        ("a", 70.0, False, True, -2.0),   # the same score as the own-code rerun: the machine
        ("a", 71.0, False, True, -1.0),   # another score: not established
        ("b", 60.0, False, True, 9.0),    # no own-code rerun of its configuration
        ("c", 50.0, True, False, 0.0),    # did not move
    ])
    assert analysis.machine_moved(table).tolist() == [True, True, False, False, False]


def test_machine_moved_on_an_empty_table():
    assert analysis.machine_moved(_reruns([])).empty


@pytest.fixture(scope="module")
def rerun_table():
    return analysis.every_rerun(RESULTS, ROOT / "benchmarks" / "results")


def test_the_reruns_split_into_the_machines_and_the_not_established(rerun_table):
    """The front page and the reproducing chapter count the moved reruns one way: those the
    machine alone moved and the others, which together are every moved rerun (the pages once
    said 4 moved with the record's own code and 'the other 22' of 31)."""
    by_machine = analysis.machine_moved(rerun_table)
    assert by_machine.sum() <= rerun_table.moved.sum()
    assert (rerun_table.own_code & rerun_table.moved <= by_machine).all()
    own = rerun_table[rerun_table.own_code & rerun_table.moved]
    for row in rerun_table[by_machine].itertuples():
        assert ((own.config_hash == row.config_hash) & (own.rerun == row.rerun)).any()


def test_the_largest_move_is_not_attributed_to_the_machine_unless_it_is(rerun_table):
    """Chapter 9's opening once called the largest move of any rerun the machine's."""
    by_machine = analysis.machine_moved(rerun_table)
    largest = rerun_table.difference.abs().idxmax()
    machine_most = rerun_table[by_machine].difference.abs().max()
    assert by_machine[largest] == (machine_most == rerun_table.difference.abs().max())


@pytest.fixture(scope="module")
def checked():
    stores = dataset_stores(RESULTS)
    records = ablations.protocol_records(RESULTS, list(stores))
    return analysis.check_claims(records)


def test_the_verdict_totals_add_up_as_the_pages_define_them(checked):
    """The front page counts the paper's three datasets, the results chapter adds the sharp
    file, and the reproducing chapter adds the verdicts against a collapsed model: one set of
    verdicts, three stated scopes."""
    given = analysis.verdicts_given(checked)
    on_paper_data = analysis.verdicts_given(checked[checked.dataset != "usps-sharp"])
    sharp = analysis.verdicts_given(checked[checked.dataset == "usps-sharp"])
    assert len(on_paper_data) + len(sharp) == len(given)
    both_decide = analysis.verdict_changes(checked, checked)
    assert len(both_decide) == len(given) + len(analysis.collapsed_verdicts(checked))


def test_the_flips_of_the_paper_data_are_among_all_flips(checked):
    """‡ on the front page (the paper's datasets) and in the results chapter (with the sharp
    file) count one set of cells in two scopes."""
    every = analysis.flips(checked)
    on_paper_data = analysis.flips(checked[checked.dataset != "usps-sharp"])
    assert set(on_paper_data.index) <= set(every.index)


def test_a_search_counts_its_stores_runs_and_the_protocols_at_the_papers_value():
    """Chapter 8 counts a search's runs with the protocol's runs at the paper's value, the
    compute table the records of the search's store alone."""
    store = analysis.search_store(RESULTS, "20news")
    _, searched = analysis.stored_search(store, "20news", ["dkm-p", "dkm-a"])
    held = list(ResultsStore(store).records())
    cost = analysis.compute(RESULTS)
    in_compute = cost[(cost.kind == "λ search") & (cost.dataset == "20news")]
    assert len(in_compute) == len(held)
    protocol = {r["config_hash"] for r in ResultsStore(RESULTS / "20news.jsonl").records()}
    from_protocol = [r for r in searched if r["config_hash"] in protocol]
    assert len(searched) == len(held) + len(from_protocol)


def test_the_time_per_seed_is_read_from_the_protocols_records_alone():
    """Chapters 10 and 11 read each method's mean time per protocol run from one table."""
    cost = analysis.compute(RESULTS)
    protocol = cost[cost.kind == "protocol"]
    stores = {path.relative_to(RESULTS).as_posix() for path in dataset_stores(RESULTS).values()}
    assert set(protocol.store) == stores
