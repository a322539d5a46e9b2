"""dkm.book.ablations: the studies, switches of a run against the protocol, and paired
comparisons."""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dkm.annealing import constant, paper_annealing
from dkm.book import ablations
from dkm.book.ablations import (
    STUDIES,
    STUDY_SEEDS,
    Variant,
    with_paper_figure,
    alpha_points,
    compare,
    describe,
    difference_text,
    paper_verdicts,
    rescaling_effects,
    switches,
    table_view,
    towards_dkm_chain,
    variant_scores,
)
from dkm.book.snapshots import Snapshot, write_snapshot
from dkm.methods.config import jsonable
from dkm.protocol import paper
from dkm.protocol.results import config_hash, record_arithmetic

REPO_ROOT = Path(__file__).resolve().parents[1]


def _params(variant, dataset, fingerprint="f00d", scale=1.0, arithmetic="native"):
    """The parameters a run of ``variant`` records, computed through the protocol (as
    :func:`dkm.protocol.grid.run_grid` does; imports TensorFlow)."""
    from types import SimpleNamespace

    from dkm.data import PAPER_STATISTICS, paper_dataset
    from dkm.methods.common import LoopConfig
    from dkm.protocol.experiments import configure, run_params

    data = SimpleNamespace(name=dataset,
                           n_samples=PAPER_STATISTICS[paper_dataset(dataset)]["samples"])
    config = configure(variant.method, data, scale=scale, overrides=variant.overrides_for(dataset))
    return run_params(variant.method, config, LoopConfig(progress=False), scale, fingerprint,
                      arithmetic)


def _record(method, seed, acc, variant=None, dataset="usps", **changed):
    """A run of ``variant`` (the protocol's by default) with ``changed`` parameters, read as
    the book reads a committed record: against the protocol's run of its method."""
    params = {**_params(variant or Variant(method), dataset), **changed}
    record = {"dataset": dataset, "method": method, "seed": seed, "params": params,
              "metrics": {"test": {"acc": acc, "nmi": acc, "ari": acc}}}
    protocol = {(dataset, method, "f00d", 1.0): _params(Variant(method), dataset)}
    return ablations.identified("results/ablations/study.jsonl", [record], protocol)[0]


def _variant(name, method, **overrides):
    """The variant of study ``name`` for ``method`` whose overrides include ``overrides``."""
    return next(v for v in STUDIES[name].variants if v.method == method
                and all(v.overrides.get(k) == value for k, value in overrides.items()))


@pytest.mark.parametrize("store", ["ablations/dcn-authors.jsonl", "ablations/alpha.jsonl",
                                   "native/ablations/dcn-authors.jsonl",
                                   "native/ablations/alpha.jsonl",
                                   "reproducible/ablations/dcn-authors.jsonl",
                                   "reproducible/ablations/alpha.jsonl"])
def test_every_committed_study_record_is_read_as_the_variant_whose_hash_it_has(store):
    path = REPO_ROOT / "results" / store
    name = path.stem
    records = [json.loads(line) for line in path.read_text().splitlines()]
    read = ablations.load_study(name, path.parent)
    assert records and [r["config_hash"] for r in read][:len(records)] == [
        r["config_hash"] for r in records]
    for r, identified in zip(records, read):
        params = r["params"]
        hashed = [v for v in STUDIES[name].variants if v.method == r["method"]
                  and config_hash(r["dataset"], r["method"], r["seed"], _params(
                      v, r["dataset"], params["data_fingerprint"], params["scale"],
                      record_arithmetic(r))) == r["config_hash"]]
        # the variant the protocol computes the record's hash from, and the one it is read as
        # from its parameters alone (without TensorFlow)
        assert hashed == [v for v in STUDIES[name].variants
                          if not variant_scores([identified], v, r["dataset"]).empty], (
            r["method"], r["seed"], identified["switches"])
        assert identified["study"] == name
        # the study's seeds, or more of the paper's (`ablate --seeds 10`: DCN^p (authors) on
        # USPS runs the ten seeds of the authors' own code)
        assert r["seed"] in paper.PAPER_SEEDS


def test_the_studies_declare_the_runs_of_the_book():
    from dkm.book.ablations import AUTHORS_DCN, TOWARDS_DKM

    assert STUDY_SEEDS == paper.PAPER_SEEDS[:3]
    assert list(STUDIES) == ["dcn-authors", "alpha", "towards-dkm", "weight-decay",
                            "alpha-rescaling", "lambda"]
    assert [(v.method, v.overrides) for v in STUDIES["dcn-authors"].variants] == [
        ("dcn-np-authors", {}), ("dcn-p-authors", {})]
    for variant in STUDIES["dcn-authors"].variants:  # the paper's DCN with the authors' switches
        dcn = variant.method.removesuffix("-authors")
        assert switches(_record(dcn, 1, 0.7, **_params(variant, "usps"))) == AUTHORS_DCN
    assert [describe(v.overrides) for v in STUDIES["alpha"].variants] == [
        "α = 1 for 100 epochs", "α = 10 for 100 epochs", "α = 100 for 100 epochs",
        "hard assignment (α → ∞)", describe({"schedule": paper_annealing(n_terms=20)}), "protocol"]
    assert STUDIES["alpha"].against == {"dkm-pa": "dkm-p"}
    assert STUDIES["alpha"].methods == ("dkm-p", "dkm-a", "dkm-pa")
    *switched, hard = STUDIES["towards-dkm"].variants
    assert [v.overrides for v in switched] == [
        {"epochs": 100}, *({**step, "epochs": 100} for _, step in TOWARDS_DKM[:-1])]
    assert hard in STUDIES["alpha"].variants and hard.overrides == {"assignment": "hard"}
    assert STUDIES["towards-dkm"].methods == ("dcn-p", "dkm-p")
    assert [v.overrides["weight_decay"] for v in STUDIES["weight-decay"].variants] == [1e-4, 1e-2]
    assert [describe(v.overrides_for("usps")) for v in STUDIES["lambda"].variants] == [
        "λ = 2", "λ = 3", "λ = 5"]
    assert [describe(v.overrides) for v in STUDIES["alpha-rescaling"].variants] == [
        "α rescaled as the embedding shrinks; α = 100 for 100 epochs",
        "α rescaled as the embedding shrinks; α = 10 for 100 epochs"]
    assert STUDIES["alpha-rescaling"].covers("20news")
    assert not STUDIES["alpha-rescaling"].covers("usps")


def test_a_variant_takes_the_tradeoff_of_its_reference_method_on_each_dataset():
    first = STUDIES["towards-dkm"].variants[0]
    for dataset in ("usps", "mnist", "20news"):
        assert first.overrides_for(dataset) == {
            "epochs": 100, "lam": paper.optimal_tradeoff("dkm-p", dataset)}
    assert first.overrides_for("usps")["lam"] != first.overrides_for("20news")["lam"]
    assert _params(first, "usps")["lambda"] == paper.optimal_tradeoff("dkm-p", "usps")
    assert describe(first.overrides_for("20news")) == "100 epochs; λ = 0.1"


def test_an_unknown_study_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown study 'beta'; choose among dcn-authors, alpha"):
        ablations.study("beta")
    with pytest.raises(ValueError, match="unknown study"):
        ablations.load_study("beta", ".")


def test_run_study_runs_every_variant_into_the_studys_store(monkeypatch, tmp_path):
    import dkm.protocol.grid
    from dkm.data import from_arrays

    calls = []
    monkeypatch.setattr(dkm.protocol.grid, "run_grid",
                        lambda datasets, methods, seeds, results, **kw: calls.append(
                            (datasets[0].name, methods, seeds, results, kw)) or 2)
    data = [from_arrays(np.zeros((4, 2)), np.array([0, 1, 0, 1]), name=name)
            for name in ("usps", "mnist")]
    added = ablations.run_study("towards-dkm", data, [5], tmp_path / "ablations", progress=False,
                                log=lambda message: None)
    variants = STUDIES["towards-dkm"].variants
    assert added == 2 * 2 * len(variants)
    assert [(c[0], c[1], c[2]) for c in calls] == [
        (name, [v.method], [5]) for name in ("usps", "mnist") for v in variants]
    assert {c[3] for c in calls} == {tmp_path / "ablations" / "towards-dkm.jsonl"}
    assert [c[4]["overrides"] for c in calls] == [
        v.overrides_for(name) for name in ("usps", "mnist") for v in variants]
    assert {c[4]["cache_dir"] for c in calls} == {tmp_path / ".pretraining-cache"}


def test_run_study_runs_only_the_variants_of_the_methods_asked_for(monkeypatch, tmp_path):
    import dkm.protocol.grid
    from dkm.data import from_arrays

    calls = []
    monkeypatch.setattr(dkm.protocol.grid, "run_grid",
                        lambda datasets, methods, seeds, results, **kw: calls.append(
                            (methods, kw["overrides"])) or 1)
    data = [from_arrays(np.zeros((4, 2)), np.array([0, 1, 0, 1]), name="usps")]
    quiet = {"progress": False, "log": lambda message: None}
    assert ablations.run_study("alpha", data, [5], tmp_path, methods=["dkm-a", "dkm-pa"],
                               **quiet) == 2
    assert calls == [(["dkm-a"], _variant("alpha", "dkm-a").overrides_for("usps")),
                     (["dkm-pa"], {})]
    with pytest.raises(ValueError, match="'alpha' study has no variant of dcn-p; its methods "
                                         "are dkm-p, dkm-a, dkm-pa"):
        ablations.run_study("alpha", data, [5], tmp_path, methods=["dkm-a", "dcn-p"], **quiet)
    assert len(calls) == 2  # refused before running


def test_load_study_and_protocol_records_read_the_stores_the_book_reads(tmp_path):
    from dkm.protocol.results import ResultsStore

    assert ablations.load_study("alpha", tmp_path) == []
    protocol = _committed("20news.jsonl", method="dkm-p", seed=STUDY_SEEDS[0])
    hard = _committed("ablations/alpha.jsonl", dataset="20news", method="dkm-p",
                      seed=STUDY_SEEDS[0], params={**protocol["params"], "assignment": "hard"})
    ResultsStore(tmp_path / "ablations" / "alpha.jsonl").append(hard)
    ResultsStore(tmp_path / "20news.jsonl").append(protocol)
    [read] = ablations.load_study("alpha", tmp_path / "ablations")
    assert {k: read[k] for k in hard} == hard
    assert (read["study"], read["switches"]) == ("alpha", {"assignment": "hard"})
    [against] = ablations.protocol_records(tmp_path, ["usps", "20news"])
    assert {k: against[k] for k in protocol} == protocol
    assert (against["study"], against["switches"]) == (None, {})
    # a record that says what it is is read as it says
    ResultsStore(tmp_path / "ablations" / "weight-decay.jsonl").append(
        {**hard, "study": "weight-decay", "switches": {"weight_decay": 0.01}})
    [said] = ablations.load_study("weight-decay", tmp_path / "ablations")
    assert (said["study"], said["switches"]) == ("weight-decay", {"weight_decay": 0.01})


def test_a_record_without_its_protocol_run_does_not_say_its_switches(tmp_path):
    from dkm.protocol.results import ResultsStore

    hard = _committed("ablations/alpha.jsonl", dataset="20news", method="dkm-p",
                      seed=STUDY_SEEDS[0])
    ResultsStore(tmp_path / "ablations" / "alpha.jsonl").append(hard)
    [read] = ablations.load_study("alpha", tmp_path / "ablations")
    with pytest.raises(ValueError, match="does not say its switches: read it through "
                                         "dkm.book.ablations.identified, from a results folder "
                                         "that holds the protocol's run"):
        switches(read)
    # the DKM authors' DCN, which no protocol store runs, is its study's own configuration
    authors = _committed("ablations/dcn-authors.jsonl", method="dcn-p-authors")
    [read] = ablations.identified("ablations/dcn-authors.jsonl", [authors], {})
    assert switches(read) == {}


def test_a_protocol_record_has_no_switches_and_an_ablation_its_own():
    assert switches(_record("dkm-p", 1, 0.7)) == {}
    schedule = jsonable(constant(10.0, 100))
    assert switches(_record("dkm-p", 1, 0.7, schedule=schedule, weight_decay=0.01)) == {
        "schedule": schedule, "weight_decay": 0.01}


def test_describe_names_each_switch():
    from dkm.book.ablations import AUTHORS_DCN

    assert describe({}) == "protocol"
    assert describe(AUTHORS_DCN) == "the DKM authors' DCN"
    assert describe({**AUTHORS_DCN, "weight_decay": 0.5}) == "the DKM authors' DCN; weight decay 0.5"
    assert describe({"update": "last-sample"}) == "last sample of each batch updated"
    assert describe({"schedule": jsonable(constant(10.0, 100))}) == "α = 10 for 100 epochs"
    assert describe({"schedule": jsonable(paper_annealing(n_terms=20))}).startswith(
        "annealing: 20 values of α from 0.1 to")
    assert describe({"assignment": "hard"}) == "hard assignment (α → ∞)"
    assert describe({"epochs": 3, "kmeans_restarts": 2}) == "3 epochs; kmeans_restarts = 2"
    from dkm.book.ablations import TOWARDS_DKM

    assert describe({**TOWARDS_DKM[1][1], "lambda": 1.0}) == \
        f"towards DKM, step 2: {TOWARDS_DKM[1][0]}; λ = 1"


def test_compare_pairs_each_variant_with_the_protocol_on_the_same_seeds():
    protocol = [_record("dkm-p", s, a) for s, a in [(1, 0.70), (2, 0.72), (3, 0.74), (4, 0.9)]]
    hard = [_record("dkm-p", s, a, assignment="hard") for s, a in [(1, 0.60), (2, 0.66), (3, 0.65),
                                                                  (9, 0.5)]]
    decayed = [_record("dkm-p", 1, 0.71, weight_decay=0.01)]
    table = compare(hard + decayed, protocol).set_index("variant")
    row = table.loc["hard assignment (α → ∞)"]
    differences = np.array([60 - 70, 66 - 72, 65 - 74])
    assert (row["n"], row["paired"]) == (4, 3)
    assert row["mean"] == pytest.approx(np.mean([60, 66, 65, 50]))
    assert row["protocol mean"] == pytest.approx(72.0)
    assert row["difference"] == pytest.approx(differences.mean())
    half = 4.302652729911275 * differences.std(ddof=1) / np.sqrt(3)  # t(0.975, 2)
    assert (row["low"], row["high"]) == pytest.approx(
        (differences.mean() - half, differences.mean() + half))
    single = table.loc["weight decay 0.01"]
    assert single["difference"] == pytest.approx(1.0) and np.isnan(single["low"])


def test_compare_of_the_embedding_scores_kmeans_on_the_final_embedding():
    def with_embedding(record, acc):
        return {**record, "kmeans_on_embedding": {"test": {"acc": acc, "nmi": acc, "ari": acc}}}

    protocol = [with_embedding(_record("dkm-p", s, a), e)
                for s, a, e in [(1, 0.70, 0.71), (2, 0.72, 0.70)]]
    hard = [with_embedding(_record("dkm-p", s, a, assignment="hard"), e)
            for s, a, e in [(1, 0.20, 0.69), (2, 0.30, 0.71)]]
    hard.append(_record("dkm-p", 3, 0.25, assignment="hard"))  # no k-means on its embedding
    clusters = compare(hard, protocol).loc[0]
    assert (clusters["n"], clusters["difference"]) == (3, pytest.approx(-46.0))
    embedding = compare(hard, protocol, of="embedding").loc[0]
    assert (embedding["n"], embedding["paired"]) == (2, 2)
    assert embedding["difference"] == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="of must be one of"):
        compare(hard, protocol, of="representatives")


def test_compare_ignores_protocol_records_of_other_configurations():
    other = _record("dkm-p", 1, 0.1, assignment="hard")
    ablation = copy.deepcopy(other)
    table = compare([ablation], [other])
    assert table.loc[0, "paired"] == 0 and np.isnan(table.loc[0, "difference"])


def test_compare_pairs_a_method_without_protocol_runs_with_the_one_it_names():
    protocol = [_record("dkm-p", s, a) for s, a in [(1, 0.70), (2, 0.72)]]
    annealed = [_record("dkm-pa", s, a) for s, a in [(1, 0.75), (2, 0.80)]]
    alone = compare(annealed, protocol).loc[0]
    assert alone["against"] == "dkm-pa" and alone["paired"] == 0
    row = compare(annealed, protocol, against=STUDIES["alpha"].against).loc[0]
    assert (row["method"], row["variant"], row["against"], row["paired"]) == (
        "dkm-pa", "protocol", "dkm-p", 2)
    assert row["difference"] == pytest.approx(6.5)


def test_variant_scores_keep_the_variants_own_runs():
    hard = _variant("alpha", "dkm-p", assignment="hard")
    records = [_record("dkm-p", 2, 0.7), _record("dkm-p", 1, 0.6, hard), _record("dkm-p", 3, 0.5, hard),
               _record("dkm-p", 4, 0.4, _variant("alpha", "dkm-p", schedule=constant(10.0, 100))),
               _record("dkm-p", 5, 0.3, hard, dataset="mnist")]
    scores = variant_scores(records, hard, "usps")
    assert scores.to_dict() == pytest.approx({1: 60.0, 3: 50.0})
    assert variant_scores(records, Variant("dkm-p"), "usps").to_dict() == pytest.approx({2: 70.0})
    assert variant_scores(records, Variant("dkm-p"), "20news").empty


def test_alpha_points_place_each_dkm_p_variant_at_its_alpha():
    records = [_record("dkm-p", 1, 0.7), _record("dkm-p", 1, 0.6, _variant("alpha", "dkm-p",
                                                                           assignment="hard")),
               _record("dkm-p", 1, 0.5, _variant("alpha", "dkm-p", schedule=constant(10.0, 100))),
               _record("dkm-pa", 1, 0.9, _variant("alpha", "dkm-pa"))]
    points = alpha_points(records, "usps")
    assert list(points["alpha"]) == [10.0, 1000.0, math.inf]
    assert list(points["score"]) == pytest.approx([50.0, 70.0, 60.0])


def test_rescaling_effects_pair_each_rescaled_alpha_with_the_same_alpha_held_constant():
    def held(alpha):
        return _variant("alpha", "dkm-p", schedule=constant(alpha, 100))

    def rescaled(alpha):
        return _variant("alpha-rescaling", "dkm-p", schedule=constant(alpha, 100))

    records = [_record("dkm-p", s, a, held(100.0), "20news") for s, a in [(1, .2), (2, .1), (3, .3)]]
    records += [_record("dkm-p", s, a, rescaled(100.0), "20news")
                for s, a in [(1, .5), (2, .5), (4, .9)]]
    records += [_record("dkm-p", 1, 0.9, held(10.0), "20news"), _record("dkm-p", 1, 0.7)]
    table = rescaling_effects(records, "20news")
    assert list(table.alpha) == [100.0]  # α = 10 has no rescaled run
    row = table.iloc[0]
    assert row.paired == 2 and row.seeds == (1, 2)
    assert (row.constant, row.rescaled, row.difference) == pytest.approx((15.0, 50.0, 35.0))
    assert row.low < row.difference < row.high
    assert difference_text(row, "points", seeds=True).endswith("points over 2 seeds")
    assert rescaling_effects([], "20news").empty


def test_the_towards_dkm_chain_walks_from_dcn_p_to_dkm_p_in_order():
    towards = STUDIES["towards-dkm"].variants
    records = [_record("dkm-p", 1, 0.80), _record("dcn-p", 1, 0.70),
               _record("dcn-p", 1, 0.72, towards[0]), _record("dcn-p", 1, 0.74, towards[2]),
               _record("dkm-p", 1, 0.78, _variant("towards-dkm", "dkm-p", assignment="hard"))]
    chain = towards_dkm_chain(records, "usps")
    assert list(chain["step"].cat.categories) == [
        "DCN^p", "+ λ and epochs of DKM^p", "+ step 1", "+ step 2", "+ step 3 = DKM^p, hard",
        "DKM^p"]
    assert list(chain.sort_values("step")["score"]) == pytest.approx([70, 72, 74, 78, 80])
    assert "+ step 1" not in set(chain["step"])


def test_the_authors_dcn_is_held_against_the_papers_dcn_figure_and_the_protocols_dcn():
    runs = [_record("dcn-p-authors", s, a) for s, a in [(1, 0.73), (2, 0.74), (3, 0.72)]]
    table = with_paper_figure(compare(runs, [_record("dcn-p", 1, 0.75), _record("dcn-p", 2, 0.80)]))
    assert table.loc[0, ["against", "paired", "protocol mean"]].tolist() == ["dcn-p", 2, 77.5]
    assert table.loc[0, "difference"] == pytest.approx(-4.0)
    assert table.loc[0, "paper"] == paper.reported("table1", "dcn-p", "usps", "acc")[0] == 73.0
    assert table.loc[0, "against paper"] == pytest.approx(0.0)
    verdicts = paper_verdicts(runs).set_index("metric")
    assert verdicts.loc["acc", "verdict"] == "consistent"
    assert verdicts.loc["nmi", "paper mean"] == paper.reported("table1", "dcn-p", "usps", "nmi")[0]
    low = paper_verdicts([_record("dcn-p-authors", s, 0.6) for s in (1, 2, 3)])
    assert set(low["verdict"]) == {"worse"}
    with pytest.raises(ValueError, match="the paper reports no ACC of 'DKM\\^pa'"):
        paper_verdicts([_record("dkm-pa", 1, 0.7)])


def test_table_view_typesets_labels_and_rounds():
    frame = pd.DataFrame([{"dataset": "usps", "method": "dkm-pa", "variant": "protocol",
                           "against": "dkm-p", "n": 3, "mean": 71.26, "difference": 1.04,
                           "low": -0.51, "high": 2.6},
                          {"dataset": "usps", "method": "dkm-p", "variant": "x",
                           "against": "dkm-p", "n": 1, "mean": 70.0, "difference": np.nan,
                           "low": np.nan, "high": np.nan}])
    shown = table_view(frame, ["dataset", "method", "against", "mean", "difference", "interval"])
    assert shown.iloc[0].tolist() == ["USPS", "DKM<sup>pa</sup>", "DKM<sup>p</sup>", "71.3",
                                      "+1.0", "[−0.5,\u00a0+2.6]"]
    assert shown.iloc[1].tolist()[-2:] == ["–", "–"]
    # the difference and its interval in one cell, on one line
    together = table_view(frame, ["difference [95 %]"])["difference [95 %]"].tolist()
    assert together == ["+1.0\u00a0[−0.5,\u00a0+2.6]", "–"]
    # a label with a space keeps to one line in HTML
    authors = table_view(frame.assign(method="dcn-p-authors"), ["method"])
    assert authors.iloc[0, 0] == "DCN<sup>p</sup>\u00a0(authors)"


def _norm_snapshot(path, pretraining, training, overrides=None, method="dkm-p", provenance=None):
    """A two-point snapshot of ``method`` whose embedding norms are the given curves."""
    history = {"embedding_norm": np.asarray(training, dtype=float),
               "loss": np.zeros(len(training))}
    if pretraining is not None:
        history["pretrain_embedding_norm"] = np.asarray(pretraining, dtype=float)
    meta = {"dataset": "usps", "seed": 8905, "methods": [method], "provenance": provenance or {}}
    if overrides is not None:
        meta["overrides"] = {method: overrides}
    write_snapshot(path, Snapshot(meta, np.arange(2), np.zeros(2, int),
                                  {method: np.zeros((2, 3))}, {method: np.zeros(2, int)},
                                  {method: history}))


def test_embedding_norm_curves_join_the_pretraining_and_the_training_of_each_snapshot(tmp_path):
    assert ablations.embedding_norm_curves(tmp_path / "none", "usps", 8905) == ({}, 0)
    # the protocol's snapshot is written before the weight-decay study's (no overrides in meta)
    _norm_snapshot(tmp_path / "usps-8905-dkm-p-decay-2.npz", [5, 4], [1], {"weight_decay": 1e-2})
    _norm_snapshot(tmp_path / "usps-8905-dkm-p-decay-1.npz", [5, 4], [2, 2],
                   {"weight_decay": 1e-4})
    _norm_snapshot(tmp_path / "usps-8905.npz", [5, 4], [3, 3, 3])
    # neither this seed, nor this method, nor a decay snapshot
    _norm_snapshot(tmp_path / "usps-9129.npz", [9], [9])
    _norm_snapshot(tmp_path / "usps-8905-dcn-p-decay-1.npz", [9], [9], {"weight_decay": 1e-4},
                   method="dcn-p")
    _norm_snapshot(tmp_path / "usps-8905-dkm-p-alpha-1.npz", [5, 4], [9], {"assignment": "hard"})
    curves, pretraining_epochs = ablations.embedding_norm_curves(tmp_path, "usps", 8905)
    assert pretraining_epochs == 2
    assert list(curves) == ["protocol", "weight decay 0.0001", "weight decay 0.01"]
    assert [c.tolist() for c in curves.values()] == [[5, 4, 3, 3, 3], [5, 4, 2, 2], [5, 4, 1]]
    alpha, _ = ablations.embedding_norm_curves(tmp_path, "usps", 8905, variants="alpha-*")
    assert list(alpha) == ["protocol", "hard assignment (α → ∞)"]


def test_embedding_norm_curves_refuse_snapshots_of_two_arithmetics(tmp_path):
    from dkm.reproducibility.arithmetic import reproducible_environment

    reproducible = {"arithmetic": {"environment": reproducible_environment({})}}
    _norm_snapshot(tmp_path / "usps-8905.npz", [5, 4], [3], provenance=reproducible)
    _norm_snapshot(tmp_path / "usps-8905-dkm-p-decay-1.npz", [5, 4], [2], {"weight_decay": 1e-4})
    with pytest.raises(ValueError, match="made in two arithmetics"):
        ablations.embedding_norm_curves(tmp_path, "usps", 8905)


def test_final_assignment_reads_each_run_at_its_last_alpha(tmp_path):
    labels = np.array([0, 0, 1, 1])
    embedding = np.array([[-1.1], [-0.9], [0.9], [1.1]])  # cluster means at -1 and +1

    def snapshot(path, alphas, overrides=None, used=labels):
        meta = {"dataset": "usps", "seed": 8905, "methods": ["dkm-p"],
                **({"overrides": {"dkm-p": overrides}} if overrides else {})}
        history = {"embedding_norm": np.array([2.0, 1.5]), "alpha": np.asarray(alphas, float),
                   "loss": np.zeros(2)}
        write_snapshot(path, Snapshot(meta, np.arange(4), labels, {"dkm-p": embedding},
                                      {"dkm-p": used}, {"dkm-p": history}))

    assert ablations.final_assignment(tmp_path, "usps", 8905).empty
    snapshot(tmp_path / "usps-8905.npz", [1000.0, 1000.0])
    snapshot(tmp_path / "usps-8905-dkm-p-alpha-1.npz", [1.0, 1.0],
             {"schedule": {"alphas": [1.0], "epochs_per_alpha": 100}},  # as save_snapshot writes it
             used=np.zeros(4, int))
    snapshot(tmp_path / "usps-8905-dkm-p-alpha-1-rescaled.npz", [1.0, 2.5],
             {"schedule": {"alphas": [1.0], "epochs_per_alpha": 100}, "alpha_rescaling": True})
    table = ablations.final_assignment(tmp_path, "usps", 8905)
    rescaled_label = "α rescaled as the embedding shrinks; α = 1 for 100 epochs"
    assert list(table.index) == ["protocol", rescaled_label, "α = 1 for 100 epochs"]
    assert table.loc["protocol", "alpha"] == 1000.0
    assert list(table.rescaled) == [False, True, False]
    rescaled = table.loc[rescaled_label]
    assert (rescaled.first_alpha, rescaled.alpha) == (1.0, 2.5)  # the α it started and ended at
    assert table.loc["protocol", "largest_weight"] == pytest.approx(1.0)
    assert table.loc["protocol", "clusters_used"] == 2
    assert table.loc["protocol", "embedding_norm"] == 1.5
    assert table.loc["protocol", "critical_alpha"] == pytest.approx(1 / (4 * embedding.var()))
    # one cluster: its only representative takes every point's whole weight
    assert table.loc["α = 1 for 100 epochs", "clusters_used"] == 1
    assert table.loc["α = 1 for 100 epochs", "largest_weight"] == pytest.approx(1.0)


def test_embedding_norm_curves_refuse_pretrainings_of_different_lengths(tmp_path):
    _norm_snapshot(tmp_path / "usps-8905.npz", [5, 4], [3])
    _norm_snapshot(tmp_path / "usps-8905-dkm-p-decay-1.npz", None, [2], {"weight_decay": 1e-4})
    with pytest.raises(ValueError, match=r"different numbers of epochs: \[0, 2\]"):
        ablations.embedding_norm_curves(tmp_path, "usps", 8905)


def test_embedding_norm_curves_refuse_two_snapshots_with_the_same_switches(tmp_path):
    for tag in ("a", "b"):
        _norm_snapshot(tmp_path / f"usps-8905-dkm-p-decay-{tag}.npz", [5], [3],
                       {"weight_decay": 1e-4})
    with pytest.raises(ValueError, match="both 'weight decay 0.0001'"):
        ablations.embedding_norm_curves(tmp_path, "usps", 8905)


def test_cli_ablate_refuses_an_unknown_study(tmp_path, cli):
    completed = cli("ablate", "--study", "beta", "--dataset", "digits", "--results",
                     str(tmp_path), cwd=tmp_path)
    assert completed.returncode == 2
    assert "unknown study 'beta'; choose among dcn-authors" in completed.stderr
    assert "Traceback" not in completed.stderr
    help_text = "".join(cli("ablate", "--help", cwd=tmp_path).stdout.split())  # unwrapped
    assert all(name in help_text for name in STUDIES)
    completed = cli("ablate", "--study", "alpha", "--method", "dcn-p", "--dataset", "digits",
                     "--results", str(tmp_path), cwd=tmp_path)
    assert completed.returncode == 2
    assert "'alpha' study has no variant of dcn-p" in completed.stderr
    assert not (tmp_path / "alpha.jsonl").exists()


def test_a_study_designed_for_some_datasets_refuses_the_others_before_running(monkeypatch):
    import dkm.protocol.grid
    from dkm.data import from_arrays

    monkeypatch.setattr(dkm.protocol.grid, "run_grid", lambda *args, **kw: pytest.fail("ran"))
    assert STUDIES["lambda"].datasets == ("usps",) and STUDIES["alpha"].datasets is None
    assert STUDIES["lambda"].covers("usps") and not STUDIES["lambda"].covers("20news")
    assert STUDIES["alpha"].covers("20news")
    data = [from_arrays(np.zeros((4, 2)), np.array([0, 1, 0, 1]), name=name)
            for name in ("usps", "20news")]
    with pytest.raises(ValueError, match="'lambda' study is designed for usps only, not '20news'"):
        ablations.run_study("lambda", data, [5], progress=False, log=lambda message: None)
    assert ablations.pending("lambda", [], ["usps", "20news"]).dataset.unique().tolist() == ["usps"]


def test_cli_ablate_runs_a_study_resumably(tmp_path, cli):
    args = ("ablate", "--study", "weight-decay", "--dataset", "digits", "--seeds", "1",
            "--scale", "0.02", "--results", str(tmp_path / "ablations"), "--quiet")
    first = cli(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "2 new records" in first.stdout
    records = [json.loads(line) for line in
               (tmp_path / "ablations" / "weight-decay.jsonl").read_text().splitlines()]
    assert sorted(r["params"]["weight_decay"] for r in records) == [1e-4, 1e-2]
    # each record says what it is: its study, and its switches against the protocol's run
    assert [(r["study"], r["switches"]) for r in records] == [
        ("weight-decay", {"weight_decay": r["params"]["weight_decay"]}) for r in records]
    assert (tmp_path / ".pretraining-cache").is_dir()
    again = cli(*args, cwd=tmp_path)
    assert again.returncode == 0 and "0 new records" in again.stdout


def test_pending_lists_the_seeds_each_variant_still_lacks():
    decay = STUDIES["weight-decay"].variants
    records = [_record("dkm-p", 8905, 0.7, decay[0]), _record("dkm-p", 291, 0.7, decay[0]),
               _record("dkm-p", 9129, 0.7),  # the protocol's run is not the study's
               *(_record("dkm-p", seed, 0.7, decay[1]) for seed in STUDY_SEEDS)]
    left = ablations.pending("weight-decay", records, ["usps", "20news"])
    assert left.to_dict("records") == [
        {"dataset": "usps", "method": "dkm-p", "variant": "weight decay 0.0001",
         "missing": (9129,)},
        {"dataset": "20news", "method": "dkm-p", "variant": "weight decay 0.0001",
         "missing": STUDY_SEEDS},
        {"dataset": "20news", "method": "dkm-p", "variant": "weight decay 0.01",
         "missing": STUDY_SEEDS}]
    assert ablations.pending("weight-decay", records, ["usps"], seeds=[8905]).empty


def _scored(method, seed, validation, test, variant=None, **changed):
    record = _record(method, seed, test, variant, **changed)
    record["metrics"]["validation"] = {"acc": validation, "nmi": 0.0, "ari": 0.0}
    record["config_hash"] = config_hash("usps", method, seed, record["params"])
    return record


def test_tradeoff_points_keep_runs_that_changed_only_the_tradeoff_once_each():
    cliff = STUDIES["lambda"].variants
    protocol = _scored("dkm-p", 1, 0.70, 0.72)
    records = [protocol, dict(protocol),  # the same run in two stores
               _scored("dkm-p", 2, 0.71, 0.73),
               _scored("dkm-p", 1, 0.50, 0.40, cliff[0]),
               _scored("dkm-p", 1, 0.20, 0.18, **{"lambda": 10.0}),  # a line-search run
               _scored("dkm-p", 1, 0.9, 0.9, _variant("weight-decay", "dkm-p")),  # not λ alone
               _scored("dcn-p", 1, 0.9, 0.9)]
    points = ablations.tradeoff_points(records, "usps")
    assert points.to_dict("list") == {"tradeoff": [1.0, 1.0, 2.0, 10.0], "seed": [1, 2, 1, 1],
                                      "validation": pytest.approx([70, 71, 50, 20]),
                                      "test": pytest.approx([72, 73, 40, 18])}
    with pytest.raises(ValueError, match="km has no trade-off"):
        ablations.tradeoff_points(records, "usps", method="km")


def test_the_tradeoff_choice_is_the_best_mean_validation_and_its_regret_the_test_gap():
    points = pd.DataFrame({"tradeoff": [0.1, 0.1, 1.0, 10.0], "seed": [1, 2, 1, 1],
                           "validation": [70.0, 74.0, 71.0, 20.0], "test": [75.0, 76.0, 71.5, 19.0]})
    assert ablations.tradeoff_choice(points) == pytest.approx(
        {"chosen": 0.1, "test_chosen": 75.5, "best": 0.1, "test_best": 75.5, "regret": 0.0})
    points.loc[2, "validation"] = 80.0
    assert ablations.tradeoff_choice(points) == pytest.approx(
        {"chosen": 1.0, "test_chosen": 71.5, "best": 0.1, "test_best": 75.5, "regret": 4.0})
    with pytest.raises(ValueError, match="no runs"):
        ablations.tradeoff_choice(points.iloc[:0])


def test_tradeoff_means_average_each_value_within_the_range_and_count_its_seeds():
    points = pd.DataFrame({"tradeoff": [0.1, 1.0, 1.0, 2.0, 10.0, 10.0], "seed": [1, 1, 2, 1, 1, 2],
                           "validation": [0.0] * 6, "test": [70.0, 76.0, 78.0, 79.0, 20.0, 24.0]})
    means = ablations.tradeoff_means(points, 1, 10)
    assert means.index.tolist() == [1.0, 2.0, 10.0]
    assert means.to_dict("list") == {"test": [77.0, 79.0, 22.0], "seeds": [2, 1, 2]}
    assert ablations.tradeoff_means(points).index.tolist() == [0.1, 1.0, 2.0, 10.0]


def test_excludes_zero_and_the_temperature_rows_of_a_comparison():
    table = pd.DataFrame({"method": ["dkm-p", "dkm-p", "dkm-p", "dkm-a"], "paired": [3, 3, 1, 3],
                          "low": [-0.5, 0.2, np.nan, -4.0], "high": [0.4, 1.0, np.nan, -1.0]})
    assert ablations.excludes_zero(table).tolist() == [False, True, False, True]
    assert ablations.temperature_effects(table).index.tolist() == [0, 1]


def test_shrinkage_by_dataset_indexes_each_dataset_s_runs():
    usps = ({"protocol": np.array([1.0, 4.0, 3.0]), "weight decay 0.01": np.array([1.0, 4.0, 5.0])}, 2)
    news = ({"protocol": np.array([2.0, 1.0])}, 1)
    table = ablations.shrinkage_by_dataset({"usps": usps, "mnist": ({}, 0), "20news": news})
    assert table.index.names == ["dataset", "run"]
    assert table.index.tolist() == [("usps", "protocol"), ("usps", "weight decay 0.01"),
                                    ("20news", "protocol")]
    assert table.pretrained.tolist() == [4.0, 4.0, 2.0]
    assert table.shrinks.tolist() == [True, False, True]
    empty = ablations.shrinkage_by_dataset({"usps": ({}, 0)})
    assert empty.empty and empty.index.names == ["dataset", "run"]
    assert empty.shrinks.dtype == bool


def test_zero_nmi_variants_lists_a_variant_only_when_every_seed_has_nmi_0():
    protocol = [_record("dkm-p", s, 0.5) for s in (1, 2, 3)]
    collapsed = [_record("dkm-p", s, 0.0, weight_decay=0.01) for s in (1, 2, 3)]
    mixed = [_record("dkm-p", s, a, weight_decay=1e-4) for s, a in [(1, 0.0), (2, 0.4), (3, 0.0)]]
    listed = ablations.zero_nmi_variants(collapsed + mixed, protocol)
    assert listed.variant.tolist() == ["weight decay 0.01"]
    assert ablations.zero_nmi_variants(collapsed, protocol, seeds_needed=4).empty


def test_difference_text_writes_the_interval_only_where_there_is_one():
    table = pd.DataFrame({"difference": [1.23, -2.0], "low": [-0.61, np.nan],
                          "high": [3.04, np.nan], "paired": [3, 1]})
    with_interval, one_seed = table.itertuples()
    assert ablations.difference_text(with_interval) == "+1.2 [−0.6, +3.0]"
    assert ablations.difference_text(with_interval, "points") == "+1.2 [−0.6, +3.0] points"
    assert ablations.difference_text(with_interval, "points", seeds=True) == (
        "+1.2 [−0.6, +3.0] points over 3 seeds")
    assert ablations.difference_text(one_seed, "points", seeds=True) == "−2.0 points on one seed"
    assert ablations.difference_text(table.iloc[1]) == "−2.0"
    assert ablations.paired_difference_text((1.23, -0.61, 3.04, 3), "points") == (
        "+1.2 [−0.6, +3.0] points")


def test_temperature_by_dataset_names_the_variants_whose_interval_excludes_zero():
    temperature = pd.DataFrame({
        "dataset": ["usps", "usps", "20news", "20news"], "variant": ["α = 1", "hard", "α = 1", "hard"],
        "paired": [3, 3, 2, 3], "difference": [0.2, -0.4, -3.0, 0.5],
        "low": [-0.5, -1.0, -5.0, -0.1], "high": [0.9, 0.2, -1.0, 1.1]})
    by_dataset = ablations.temperature_by_dataset(temperature)
    assert by_dataset.index.tolist() == ["usps", "20news"]
    assert by_dataset.to_dict("list") == {"seeds": [3, 2], "largest": [0.4, 3.0],
                                          "moved": [False, True]}
    none = ablations.temperature_by_dataset(temperature.iloc[:0])
    assert none.empty and none.moved.dtype == bool and none[~none.moved].empty


def test_agreement_by_dataset_needs_every_verdict_consistent_and_counts_the_fewest_seeds():
    verdicts = pd.DataFrame({"dataset": ["usps", "usps", "20news", "20news", "usps"],
                             "n": [3, 3, 1, 1, 2],
                             "verdict": ["consistent", "consistent", "consistent", "better",
                                         "consistent"]})
    agreement = ablations.agreement_by_dataset(verdicts)
    assert agreement.index.tolist() == ["usps", "20news"]
    assert agreement.to_dict("list") == {"seeds": [2, 1], "consistent": [True, False],
                                         "complete": [False, False]}
    assert ablations.agreement_by_dataset(verdicts, seeds_needed=2).complete.tolist() == [True, False]


def test_agreement_by_dataset_counts_no_seed_where_a_method_has_no_run():
    verdicts = pd.DataFrame({"dataset": ["usps", "usps", "20news"],
                             "method": ["dcn-np-authors", "dcn-p-authors", "dcn-np-authors"],
                             "n": [3, 3, 3], "verdict": ["consistent"] * 3})
    agreement = ablations.agreement_by_dataset(verdicts, ["dcn-np-authors", "dcn-p-authors"])
    assert agreement.to_dict("list") == {"seeds": [3, 0], "consistent": [True, True],
                                         "complete": [True, False]}
    assert ablations.agreement_by_dataset(verdicts).seeds.tolist() == [3, 3]


def _committed(path, **match):
    """The first committed record of ``results/<path>`` whose fields equal ``match``."""
    from dkm.protocol.results import ResultsStore

    return next(r for r in ResultsStore(REPO_ROOT / "results" / path).records()
                if all(r[key] == value for key, value in match.items()))


def test_study_tradeoff_points_gather_the_ablation_seeds_runs_of_the_stores_the_book_reads(
        tmp_path):
    from dkm.protocol.results import ResultsStore

    protocol = _committed("usps.jsonl", method="dkm-p", seed=STUDY_SEEDS[0])
    not_a_study_seed = _committed("usps.jsonl", method="dkm-p", seed=paper.PAPER_SEEDS[3])
    # the same run in the native arithmetic, which a rerun superseded: left out
    native = _committed("native/usps.jsonl", method="dkm-p", seed=STUDY_SEEDS[0])
    search = next(r for r in ResultsStore(REPO_ROOT / "results" / "reproducible"
                                          / "usps-lambda.jsonl").records()
                  if r["seed"] == STUDY_SEEDS[1] and r["params"]["lambda"] == 0.1)
    cliff = _committed("reproducible/ablations/lambda.jsonl", seed=STUDY_SEEDS[2])
    native_cliff = _committed("native/ablations/lambda.jsonl", seed=STUDY_SEEDS[1])
    for path, records in {"usps.jsonl": [protocol, not_a_study_seed],
                          "native/usps.jsonl": [native],
                          "reproducible/usps-lambda.jsonl": [search, protocol],  # in two stores
                          "reproducible/ablations/lambda.jsonl": [cliff],
                          "native/ablations/lambda.jsonl": [native_cliff]}.items():
        for record in records:
            ResultsStore(tmp_path / path).append(record)
    points = ablations.study_tradeoff_points(tmp_path)
    expected = sorted([(1.0, STUDY_SEEDS[0], protocol), (0.1, STUDY_SEEDS[1], search),
                       (cliff["params"]["lambda"], STUDY_SEEDS[2], cliff)], key=lambda t: t[0])
    assert list(zip(points.tradeoff, points.seed)) == [(value, seed) for value, seed, _ in expected]
    assert points.test.tolist() == pytest.approx(
        [100 * r["metrics"]["test"]["acc"] for _, _, r in expected])
    assert ablations.study_tradeoff_points(tmp_path, metric="nmi").test.tolist() == pytest.approx(
        [100 * r["metrics"]["test"]["nmi"] for _, _, r in expected])
    assert ablations.study_tradeoff_points(tmp_path, "usps-sharp").empty  # no such store


def _cliff_table(*intervals, dataset="usps"):
    """A compare() table of the "lambda" study: (difference, low, high) per value, None: no row."""
    labels = [describe(v.overrides) for v in STUDIES["lambda"].variants]
    rows = [{"dataset": dataset, "method": "dkm-p", "variant": label, "difference": interval[0],
             "low": interval[1], "high": interval[2]}
            for label, interval in zip(labels, intervals) if interval is not None]
    return pd.DataFrame(rows, columns=["dataset", "method", "variant", "difference", "low", "high"])


def test_tradeoff_onset_is_the_first_value_of_the_study_whose_interval_excludes_zero():
    steady, loss, gain, no_interval = (0.2, -1.0, 1.4), (-10.9, -15.3, -6.5), (3.0, 1.0, 5.0), \
        (-9.0, np.nan, np.nan)
    assert ablations.tradeoff_onset(_cliff_table(steady, steady, loss)) == {
        "steady": 3.0, "onset": 5.0, "change": -10.9}
    # the first value moves it: steady at the protocol's own λ on USPS, the paper's 1
    assert ablations.tradeoff_onset(_cliff_table(loss, steady, steady)) == {
        "steady": 1.0, "onset": 2.0, "change": -10.9}
    assert ablations.tradeoff_onset(_cliff_table(steady, gain, loss)) == {
        "steady": 2.0, "onset": 3.0, "change": 3.0}
    assert ablations.tradeoff_onset(_cliff_table(steady, steady, steady)) == {
        "steady": 5.0, "onset": None, "change": None}
    # the walk stops at a value without an interval, or without runs
    for unknown in (no_interval, None):
        assert ablations.tradeoff_onset(_cliff_table(steady, unknown, loss)) == {
            "steady": 2.0, "onset": None, "change": None}
    assert ablations.tradeoff_onset(_cliff_table(loss, loss, loss, dataset="20news")) == {
        "steady": 1.0, "onset": None, "change": None}


def test_embedding_shrinkage_reads_each_curve_where_the_pretraining_ends_and_at_its_end():
    curves = {"protocol": np.array([5.0, 7.7, 6.0, 3.1]),
              "weight decay 0.01": np.array([5.0, 7.0, 7.5, 8.0])}
    shrinkage = ablations.embedding_shrinkage(curves, 2)
    assert shrinkage.index.tolist() == ["protocol", "weight decay 0.01"]
    assert shrinkage.to_dict("list") == {"pretrained": [7.7, 7.0], "trained": [3.1, 8.0],
                                         "shrinks": [True, False]}
    assert ablations.embedding_shrinkage(curves, 3).pretrained.tolist() == [6.0, 7.5]
    with pytest.raises(ValueError, match="no pretraining epoch"):
        ablations.embedding_shrinkage(curves, 0)
    assert ablations.embedding_shrinkage({}, 0).empty


def test_step_effects_pair_each_step_with_the_one_before_on_their_common_seeds():
    steps = ["DCN^p", "+ step 1", "+ step 2", "DKM^p"]
    chain = pd.DataFrame({
        "step": pd.Categorical(["DCN^p"] * 3 + ["+ step 1"] * 3 + ["+ step 2"] + ["DKM^p"] * 2,
                               categories=steps, ordered=True),
        "seed": [1, 2, 3, 1, 2, 3, 1, 1, 2],
        "score": [70.0, 72.0, 74.0, 71.0, 74.0, 74.0, 60.0, 75.0, 76.0]})
    effects = ablations.step_effects(chain)
    assert effects.step.tolist() == steps[1:] and effects.previous.tolist() == steps[:-1]
    assert effects.paired.tolist() == [3, 1, 1]
    assert effects.difference.tolist() == pytest.approx([1.0, -11.0, 15.0])
    # differences 1, 2, 0: mean 1, sd 1, half-width t(0.975, 2) / sqrt(3)
    half = 4.302652729749464 / math.sqrt(3)
    assert [effects.low[0], effects.high[0]] == pytest.approx([1 - half, 1 + half])
    assert effects.low[1:].isna().all() and effects.high[1:].isna().all()


def test_each_step_of_the_towards_dkm_chain_says_what_it_changes():
    from dkm.book.ablations import TOWARDS_DKM

    chain = towards_dkm_chain([], "usps")
    switches_by_step = ablations.towards_dkm_switches()
    assert list(switches_by_step) == list(chain.step.cat.categories)
    assert list(switches_by_step.values())[2:5] == [text for text, _ in TOWARDS_DKM]


def test_assignment_sharpness_is_hard_for_far_clusters_and_uniform_for_close_ones():
    # Two clusters around ±1 on a line: squared distance 4 between the centres.
    embedding = np.array([[-1.1], [-0.9], [0.9], [1.1]])
    labels = np.array([0, 0, 1, 1])
    sharpness = ablations.assignment_sharpness(embedding, labels, [0.0, 1.0, 100.0])
    assert sharpness[0.0] == pytest.approx(0.5)  # 1/K
    # to the centres -1 and +1: the points at ±1.1 are 0.01 and 4.41 away, those at ±0.9
    # 0.01 and 3.61: gaps of 4.4 and 3.6 between the two squared distances
    def expected(scale):
        return np.mean([1 / (1 + np.exp(-scale * gap)) for gap in (4.4, 3.6)])

    assert sharpness[1.0] == pytest.approx(expected(1.0))
    assert sharpness[100.0] == pytest.approx(1.0)
    shrunk = ablations.assignment_sharpness(embedding / 100, labels, [1.0])
    assert shrunk[1.0] == pytest.approx(expected(1e-4))
    with pytest.raises(ValueError, match="expected points"):
        ablations.assignment_sharpness(embedding[:, 0], labels, [1.0])


def test_pretrained_sharpness_reads_ae_km_from_either_snapshot(tmp_path):
    from dkm.book.snapshots import Snapshot, write_snapshot

    embedding, labels = np.array([[-1.1], [-0.9], [0.9], [1.1]]), np.array([0, 0, 1, 1])

    def snapshot(methods):
        return Snapshot({"methods": methods}, np.arange(4), labels,
                        {m: embedding for m in methods}, {m: labels for m in methods},
                        {m: {} for m in methods})

    assert ablations.pretrained_sharpness(tmp_path, "usps", 1).empty
    assert ablations.pretrained_embedding(tmp_path, "usps", 1) is None
    write_snapshot(tmp_path / "usps-1.npz", snapshot(["dkm-p"]))
    assert ablations.pretrained_sharpness(tmp_path, "usps", 1).empty
    write_snapshot(tmp_path / "usps-1-ae-km.npz", snapshot(["ae-km"]))
    assert ablations.pretrained_embedding(tmp_path, "usps", 1)[1].tolist() == labels.tolist()
    read = ablations.pretrained_sharpness(tmp_path, "usps", 1, alphas=[1.0])
    assert read[1.0] == pytest.approx(ablations.assignment_sharpness(embedding, labels, [1.0])[1.0])


def test_hard_from_start_keeps_the_datasets_whose_pretrained_assignment_is_nearly_hard(tmp_path):
    from dkm.book.snapshots import Snapshot, write_snapshot

    labels = np.array([0, 0, 1, 1])
    far = np.array([[-1.1], [-0.9], [0.9], [1.1]])  # largest weight ≈ 0.98 at α = 1
    close = far / 10  # ≈ 0.51 at α = 1

    for dataset, embedding in (("usps", far), ("20news", close)):
        write_snapshot(tmp_path / f"{dataset}-1-ae-km.npz",
                       Snapshot({"methods": ["ae-km"]}, np.arange(4), labels,
                                {"ae-km": embedding}, {"ae-km": labels}, {"ae-km": {}}))
    assert ablations.assignment_sharpness(far, labels, [1.0])[1.0] >= ablations.NEARLY_HARD
    assert ablations.hard_from_start(tmp_path, ["20news", "usps", "mnist"], seed=1) == ["usps"]
    # at a higher α the close clusters are nearly hard too
    assert ablations.hard_from_start(tmp_path, ["20news", "usps"], seed=1, alpha=1000.0) == [
        "20news", "usps"]


def test_a_study_gives_the_variants_of_the_methods_asked_for_on_a_dataset():
    alpha = STUDIES["alpha"]
    assert [v.method for v in alpha.variants_for("usps", ["dkm-a"])] == ["dkm-a"]
    assert alpha.variants_for("20news") == alpha.variants
    with pytest.raises(ValueError, match="'alpha' study has no variant of dcn-p"):
        alpha.variants_for("usps", ["dcn-p", "dkm-p"])
    with pytest.raises(ValueError, match="designed for 20news only, not 'usps'"):
        STUDIES["alpha-rescaling"].variants_for("usps")


def test_paper_margins_give_the_share_of_the_papers_margin_that_a_variant_accounts_for():
    from dkm.protocol import paper

    comparison = pd.DataFrame({"dataset": ["usps", "usps-sharp"],
                               "method": ["dcn-np-authors", "dcn-p-authors"],
                               "against": ["dcn-np", "dcn-p"], "difference": [-20.0, 1.0],
                               "low": [-30.0, np.nan], "high": [-10.0, np.nan]})
    margins = ablations.paper_margins(comparison)
    # DCN^np: the claims of DKM^a and DCN^p over it; DCN^p: of DKM^p over it (on its paper dataset)
    assert list(margins.claim) == ["dkm-a>dcn-np", "dcn-p>dcn-np", "dkm-p>dcn-p"]
    assert list(margins.over) == ["DKM^a", "DCN^p", "DKM^p"]
    published = (paper.reported("table1", "DKM^a", "usps", "acc")[0]
                 - paper.reported("table1", "DCN^np", "usps", "acc")[0])
    first, _, second = margins.itertuples()
    assert first.margin == pytest.approx(published)
    assert (first.gap, first.gap_low, first.gap_high) == (20.0, 10.0, 30.0)
    assert first.share == pytest.approx(20.0 / published)
    assert second.gap == -1.0 and np.isnan(second.gap_low)   # scores above: a negative share
    assert second.share < 0
    # only the claims that a model is better give a margin
    from dkm.book.analysis import CLAIMS
    assert ablations.paper_margins(comparison, claims=[c for c in CLAIMS
                                                       if c.kind != "better"]).empty
    assert list(ablations.paper_margins(comparison, "nmi").claim) == list(margins.claim)
    assert list(ablations.paper_margins(comparison, family="dkm").claim) == [
        "dkm-a>dcn-np", "dkm-p>dcn-p"]
    assert ablations.paper_margins(comparison.iloc[:0]).empty


def test_a_margin_reads_as_the_gap_of_the_papers_margin_of_its_claim_on_its_dataset():
    comparison = pd.DataFrame({"dataset": ["usps-sharp"], "method": ["dcn-p-authors"],
                               "against": ["dcn-p"], "difference": [-1.94], "low": [-3.0],
                               "high": [-0.5]})
    row = next(ablations.paper_margins(comparison).itertuples())
    assert ablations.margin_claim(row) == "DKM<sup>p</sup> over DCN<sup>p</sup>"
    assert ablations.margin_claim(row, "markdown") == "DKM^p over DCN^p"
    assert row.gap == pytest.approx(1.9, abs=0.05)


def test_an_interval_end_that_just_excludes_zero_does_not_read_as_zero():
    from types import SimpleNamespace

    from dkm.book.ablations import difference_text
    row = SimpleNamespace(difference=-2.61, low=-5.21, high=-0.0087, paired=3)
    assert difference_text(row) == "−2.6 [−5.2, −0.01]"
    assert difference_text(SimpleNamespace(difference=1.0, low=0.0, high=2.04, paired=3)) == \
        "+1.0 [0.0, +2.0]"


def test_the_studies_and_their_protocol_runs_are_read_in_the_arithmetic_the_folder_declares():
    from dkm.protocol.results import READ, ResultsStore, protocol_store, study_store

    root = Path(__file__).resolve().parents[1] / "results"
    studies, protocol = ablations.studies_with_protocol(root, ["usps", "20news", "mnist"])
    for dataset in ("usps", "20news", "mnist"):
        declared = ResultsStore(protocol_store(root, dataset)).arithmetics()
        runs = [r for r in [*protocol, *(r for runs in studies.values() for r in runs)]
                if r["dataset"] == dataset]
        assert {record_arithmetic(r) for r in runs} == declared, dataset
        for name, records in studies.items():  # a study's store the book reads, whole
            store = study_store(root, dataset, name)
            own = [r["config_hash"] for r in ResultsStore(store).records()
                   if r["dataset"] == dataset] if store.is_file() else []
            assert set(own) <= {r["config_hash"] for r in records}, (dataset, name)
    assert READ["usps"].studies == "reproducible/ablations"
    assert {record_arithmetic(r) for r in protocol if r["dataset"] == "usps"} == {"reproducible"}


def _rerun_of(path, record):
    """The committed record of ``results/<path>`` of the same run as ``record`` in the other
    arithmetic."""
    from dkm.protocol.results import ResultsStore

    same = {k: v for k, v in record["params"].items() if k != "arithmetic"}
    return next(r for r in ResultsStore(REPO_ROOT / "results" / path).records()
                if r["method"] == record["method"] and r["seed"] == record["seed"]
                and {k: v for k, v in r["params"].items() if k != "arithmetic"} == same)


def test_a_dataset_is_read_in_the_stores_its_line_declares_the_superseded_ones_left_out(tmp_path):
    from dkm.protocol.results import ResultsStore

    native_protocol = _committed("native/usps.jsonl", method="dkm-p", seed=STUDY_SEEDS[2])
    protocol = _committed("usps.jsonl", method="dkm-p", seed=STUDY_SEEDS[2])
    native_cliff = _committed("native/ablations/lambda.jsonl", seed=STUDY_SEEDS[2])
    cliff = _rerun_of("reproducible/ablations/lambda.jsonl", native_cliff)
    for path, record in {"usps.jsonl": protocol, "native/usps.jsonl": native_protocol,
                         "native/ablations/lambda.jsonl": native_cliff,
                         "reproducible/ablations/lambda.jsonl": cliff}.items():
        ResultsStore(tmp_path / path).append(record)
    studies, against = ablations.studies_with_protocol(tmp_path, ["usps"])
    assert [r["config_hash"] for r in studies["lambda"]] == [cliff["config_hash"]]
    assert [r["config_hash"] for r in against] == [protocol["config_hash"]]
    assert studies["lambda"][0]["switches"] == {"lambda": cliff["params"]["lambda"]}
    points = ablations.study_tradeoff_points(tmp_path)
    assert points.test.tolist() == pytest.approx(
        [100 * r["metrics"]["test"]["acc"] for r in (protocol, cliff)])
    # a variant set against a protocol run of the other arithmetic is refused
    [native_read] = ablations.identified("native/ablations/lambda.jsonl", [native_cliff],
                                         ablations.protocol_parameters(tmp_path))
    with pytest.raises(ValueError, match="usps: native and reproducible"):
        ablations.compare([native_read], against)
    assert len(ablations.compare(studies["lambda"], against)) == 1
