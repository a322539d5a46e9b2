"""Tests of dkm.metrics: ACC against brute force, NMI and ARI against hand formulas."""
from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from dkm.metrics import AVERAGE_METHODS, acc, ari, evaluate, nmi


def brute_force_acc(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Best accuracy over every injective map between clusters and classes."""
    classes = list(np.unique(y_true))
    clusters = list(np.unique(y_pred))
    best = 0
    if len(clusters) <= len(classes):
        maps = (dict(zip(clusters, image)) for image in
                itertools.permutations(classes, len(clusters)))
    else:
        maps = ({c: k for c, k in zip(chosen, classes)} for chosen in
                itertools.permutations(clusters, len(classes)))
    for mapping in maps:
        hits = sum(mapping.get(p) == t for t, p in zip(y_true, y_pred))
        best = max(best, hits)
    return best / len(y_true)


def formula_nmi(y_true, y_pred, method: str = "geometric") -> float:
    """The paper's NMI written out with counters, no arrays."""
    n = len(y_true)
    joint = Counter(zip(y_true, y_pred))
    a, b = Counter(y_true), Counter(y_pred)
    mi = sum(c / n * math.log(n * c / (a[i] * b[j])) for (i, j), c in joint.items())
    h_a = -sum(c / n * math.log(c / n) for c in a.values())
    h_b = -sum(c / n * math.log(c / n) for c in b.values())
    mean = {"geometric": math.sqrt(h_a * h_b), "arithmetic": (h_a + h_b) / 2,
            "min": min(h_a, h_b), "max": max(h_a, h_b)}[method]
    return mi / mean


def random_pair(rng: np.random.Generator, n: int, k_true: int, k_pred: int):
    return rng.integers(0, k_true, n), rng.integers(0, k_pred, n)


# --- ACC -------------------------------------------------------------------

@pytest.mark.parametrize("k_true, k_pred", [(2, 2), (3, 3), (4, 4), (6, 6),
                                            (3, 5), (2, 6), (5, 3), (6, 2)])
def test_acc_matches_brute_force(k_true: int, k_pred: int) -> None:
    rng = np.random.default_rng(100 * k_true + k_pred)
    for _ in range(5):
        y_true, y_pred = random_pair(rng, 40, k_true, k_pred)
        assert acc(y_true, y_pred) == pytest.approx(brute_force_acc(y_true, y_pred))


def test_acc_unmatched_clusters_count_as_errors() -> None:
    # Three clusters for one class: only the largest cluster can be matched.
    assert acc([0, 0, 0, 0], [7, 7, 8, 9]) == pytest.approx(0.5)
    # Two classes, one cluster: the larger class is matched.
    assert acc([0, 0, 0, 1], [5, 5, 5, 5]) == pytest.approx(0.75)


def test_acc_arbitrary_label_values() -> None:
    y_true = np.array([10, 10, -3, -3, 42, 42])
    y_pred = np.array([1000, 1000, 5, 5, -1, 7])
    assert acc(y_true, y_pred) == pytest.approx(5 / 6)
    assert acc(y_true, y_pred) == pytest.approx(brute_force_acc(y_true, y_pred))


def test_acc_invariant_to_cluster_renaming() -> None:
    rng = np.random.default_rng(0)
    y_true, y_pred = random_pair(rng, 200, 4, 4)
    renamed = np.array([30, 10, 20, 0])[y_pred]
    assert acc(y_true, renamed) == pytest.approx(acc(y_true, y_pred))


# --- NMI -------------------------------------------------------------------

@pytest.mark.parametrize("method", AVERAGE_METHODS)
def test_nmi_matches_formula(method: str) -> None:
    rng = np.random.default_rng(2)
    y_true, y_pred = random_pair(rng, 150, 4, 6)
    expected = formula_nmi(list(y_true), list(y_pred), method)
    assert nmi(y_true, y_pred, method) == pytest.approx(expected, rel=1e-10)


def test_nmi_hand_computed() -> None:
    # Classes [0,0,1,1], clusters [0,0,0,1]: H(C) = ln 2,
    # H(S) = -(3/4 ln 3/4 + 1/4 ln 1/4), I = H(S) - H(S|C) = H(S) - ln(2)/2.
    h_c = math.log(2)
    h_s = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    mi = h_s - 0.5 * math.log(2)
    y_true, y_pred = [0, 0, 1, 1], [0, 0, 0, 1]
    assert nmi(y_true, y_pred) == pytest.approx(mi / math.sqrt(h_c * h_s))
    assert nmi(y_true, y_pred, "arithmetic") == pytest.approx(2 * mi / (h_c + h_s))


def test_nmi_default_is_geometric_not_sklearn_default() -> None:
    y_true, y_pred = [0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1]
    geometric = normalized_mutual_info_score(y_true, y_pred, average_method="geometric")
    arithmetic = normalized_mutual_info_score(y_true, y_pred)
    assert geometric != pytest.approx(arithmetic)
    assert nmi(y_true, y_pred) == pytest.approx(geometric)


@pytest.mark.parametrize("y_true, y_pred, expected", [
    ([3, 3, 3], [1, 1, 1], 1.0),        # one group on both sides
    ([3, 3, 3, 3], [0, 1, 2, 3], 0.0),  # one class, all singletons
    ([0, 1, 2, 3], [5, 5, 5, 5], 0.0),  # one cluster
])
def test_nmi_degenerate_cases_match_sklearn(y_true, y_pred, expected: float) -> None:
    assert nmi(y_true, y_pred) == expected
    assert normalized_mutual_info_score(y_true, y_pred) == expected


def test_nmi_unknown_average_method() -> None:
    with pytest.raises(ValueError, match="average_method"):
        nmi([0, 1], [0, 1], "harmonic")


# --- ARI -------------------------------------------------------------------

@pytest.mark.parametrize("y_true, y_pred", [
    ([3, 3, 3], [1, 1, 1]),
    ([0, 1, 2], [7, 8, 9]),
    ([4], [2]),
])
def test_ari_degenerate_identical_partitions(y_true, y_pred) -> None:
    assert ari(y_true, y_pred) == 1.0
    assert adjusted_rand_score(y_true, y_pred) == 1.0


def test_ari_hand_computed() -> None:
    # Classes [0,0,1,1], clusters [0,0,0,1]: 1 pair together in both, 2 pairs within classes,
    # 3 within clusters, 6 in all: expected index 2 * 3 / 6 = 1, maximum (2 + 3) / 2, so 0.
    assert ari([0, 0, 1, 1], [0, 0, 0, 1]) == pytest.approx(0.0, abs=1e-12)
    # Classes [0,0,0,1,1,1], clusters [0,0,1,1,2,2]: index 2, 6 and 3 pairs of 15: (2 - 1.2) / 3.3
    assert ari([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]) == pytest.approx(0.8 / 3.3)


# --- all three -------------------------------------------------------------

@pytest.mark.parametrize("y_pred", [
    [0, 0, 1, 1, 2, 2],
    [2, 2, 0, 0, 1, 1],
    [-5, -5, 90, 90, 3, 3],
])
def test_perfect_clustering_scores_one(y_pred) -> None:
    y_true = [0, 0, 1, 1, 2, 2]
    for method in AVERAGE_METHODS:
        assert nmi(y_true, y_pred, method) == pytest.approx(1.0, abs=1e-12)
    assert evaluate(y_true, y_pred) == pytest.approx({"acc": 1.0, "nmi": 1.0, "ari": 1.0})


def test_evaluate_returns_plain_fractions() -> None:
    rng = np.random.default_rng(6)
    y_true, y_pred = random_pair(rng, 100, 3, 4)
    scores = evaluate(y_true, y_pred, average_method="arithmetic")
    assert set(scores) == {"acc", "nmi", "ari"}
    assert all(type(value) is float for value in scores.values())
    assert scores["acc"] == acc(y_true, y_pred)
    assert scores["nmi"] == nmi(y_true, y_pred, "arithmetic")
    assert scores["ari"] == ari(y_true, y_pred)
    assert 0.0 <= scores["acc"] <= 1.0 and 0.0 <= scores["nmi"] <= 1.0


def test_accepts_whole_floats_bools_and_lists() -> None:
    assert acc(np.array([0.0, 0.0, 1.0]), [1, 1, 0]) == 1.0
    assert acc(np.array([True, True, False]), (4, 4, 9)) == 1.0


# --- validation ------------------------------------------------------------

@pytest.mark.parametrize("metric", [acc, nmi, ari, evaluate])
@pytest.mark.parametrize("y_true, y_pred, message", [
    ([0, 1, 2], [0, 1], r"same length, got 3 and 2"),
    ([], [], r"empty"),
    ([0.0, np.nan], [0, 1], r"y_true contains NaN"),
    ([0, 1], [0.5, 1.0], r"y_pred must hold integer labels.*0\.5"),
    ([0, 1], [np.inf, 1.0], r"y_pred must hold integer labels.*inf"),
    (["a", "b"], [0, 1], r"y_true must hold integer labels, got dtype"),
    ([[0, 1]], [0, 1], r"y_true must be 1-D.*\(1, 2\)"),
    (3, [0], r"y_true must be 1-D"),
])
def test_bad_inputs_raise(metric, y_true, y_pred, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        metric(y_true, y_pred)
