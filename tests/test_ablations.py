"""dkm.ablations: switches of a run against the protocol, and paired comparisons."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from dkm.ablations import compare, describe, protocol_params, switches
from dkm.annealing import constant, paper_annealing
from dkm.experiments import _jsonable


def _record(method, seed, acc, **changed):
    params = protocol_params("usps", method, "f00d")
    params.update(changed)
    return {"dataset": "usps", "method": method, "seed": seed, "params": params,
            "metrics": {"test": {"acc": acc, "nmi": acc, "ari": acc}}}


def test_a_protocol_record_has_no_switches_and_an_ablation_its_own():
    assert switches(_record("dkm-p", 1, 0.7)) == {}
    schedule = _jsonable(constant(10.0, 100))
    assert switches(_record("dkm-p", 1, 0.7, schedule=schedule, weight_decay=0.01)) == {
        "schedule": schedule, "weight_decay": 0.01}


def test_describe_names_each_switch():
    from dkm.methods.dcn import AUTHORS_DCN

    assert describe({}) == "protocol"
    assert describe(AUTHORS_DCN) == "the DKM authors' DCN"
    assert describe({**AUTHORS_DCN, "weight_decay": 0.5}) == "the DKM authors' DCN; weight decay 0.5"
    assert describe({"update": "last-sample"}) == "last sample of each batch updated"
    assert describe({"schedule": _jsonable(constant(10.0, 100))}) == "α = 10 for 100 epochs"
    assert describe({"schedule": _jsonable(paper_annealing(n_terms=20))}).startswith(
        "annealing: 20 values of α from 0.1 to")
    assert describe({"assignment": "hard"}) == "hard assignment (α → ∞)"
    assert describe({"epochs": 3, "kmeans_restarts": 2}) == "3 epochs; kmeans_restarts = 2"
    from dkm.methods.dcn import TOWARDS_DKM

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


def test_compare_ignores_protocol_records_of_other_configurations():
    other = _record("dkm-p", 1, 0.1, assignment="hard")
    ablation = copy.deepcopy(other)
    table = compare([ablation], [other])
    assert table.loc[0, "paired"] == 0 and np.isnan(table.loc[0, "difference"])
