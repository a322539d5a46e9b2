"""Tests of dkm.book.stats: summaries, the paper's significance marks, comparisons."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats as scipy_stats

from dkm.book.stats import (
    CLAIM_KINDS,
    DEFAULT_GROUPS,
    claim_verdict,
    compare_with_paper,
    comparison_interval,
    detectable_difference,
    effect_size_bound,
    mean_interval,
    p_value_within_rounding,
    significance_marks,
    student_pvalue,
    welch_interval,
    summarize,
)
from dkm.protocol import paper


def runs_with(mean: float, std: float, n: int = 10) -> np.ndarray:
    """n runs whose mean and sample standard deviation are exactly the given ones."""
    base = np.linspace(-1.0, 1.0, n)
    return mean + std * (base - base.mean()) / base.std(ddof=1)


def test_summarize_uses_the_sample_standard_deviation() -> None:
    mean, std, n = summarize([1.0, 2.0, 3.0, 4.0])
    assert (mean, n) == (2.5, 4)
    assert std == pytest.approx(np.std([1, 2, 3, 4], ddof=1))


def test_summarize_single_run_and_errors() -> None:
    mean, std, n = summarize([0.7])
    assert (mean, n) == (0.7, 1) and math.isnan(std)
    with pytest.raises(ValueError, match="zero runs"):
        summarize([])
    with pytest.raises(ValueError, match="finite"):
        summarize([1.0, math.nan])


def test_welch_interval_by_hand() -> None:
    a, b = [1.0, 2.0, 3.0, 4.0], [2.0, 2.5, 3.0]
    # variances 5/3 and 1/4; standard error sqrt(5/12 + 1/12) = sqrt(1/2)
    se2 = (5 / 3) / 4 + 0.25 / 3
    dof = se2 ** 2 / (((5 / 3) / 4) ** 2 / 3 + (0.25 / 3) ** 2 / 2)
    half = scipy_stats.t.ppf(0.975, dof) * math.sqrt(se2)
    difference, low, high = welch_interval(a, b)
    assert difference == pytest.approx(0.0)
    assert (low, high) == pytest.approx((-half, half))


def test_welch_interval_of_constant_samples_and_too_few_runs() -> None:
    assert welch_interval([2.0, 2.0], [1.0, 1.0, 1.0]) == (1.0, 1.0, 1.0)
    # ten runs and three of the same value: their means round differently, the values do not
    assert welch_interval([5.33577] * 10, [5.33577] * 3) == (0.0, 0.0, 0.0)
    difference, low, high = welch_interval([2.0, 2.0], [0.0, 1.0, 2.0])
    assert low < difference == 1.0 < high
    with pytest.raises(ValueError, match="at least 2 runs"):
        welch_interval([1.0], [1.0, 2.0])


def test_student_pvalue_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 10), rng.normal(0.5, 2, 7)
    assert student_pvalue(a, b) == pytest.approx(scipy_stats.ttest_ind(a, b, equal_var=True).pvalue)


def test_student_pvalue_zero_variance() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert math.isnan(
            scipy_stats.ttest_ind([3.0, 3.0], [3.0, 3.0]).pvalue
        )  # why the special case
    assert student_pvalue([3.0, 3.0, 3.0], [3.0, 3.0]) == 1.0
    assert student_pvalue([3.0, 3.0, 3.0], [4.0, 4.0]) == 0.0
    assert (
        0 < student_pvalue([3.0, 3.0, 3.0], [3.0, 4.0]) < 1
    )  # one constant sample: SciPy's answer


def test_student_pvalue_needs_two_runs() -> None:
    with pytest.raises(ValueError, match="at least 2 runs"):
        student_pvalue([1.0], [1.0, 2.0])


def test_marks_match_scipy_on_a_hand_made_column() -> None:
    samples = {
        "km": [70.0, 71.0, 72.0, 70.5],
        "ae-km": [72.0, 73.0, 74.0, 73.5],
        "dcn-np": [40.0, 42.0, 41.0, 39.0],
        "dkm-a": [60.0, 80.0, 75.0, 70.0],
        "dcn-p": [74.5, 75.5, 76.0, 75.0],
        "dkm-p": [75.0, 76.0, 77.0, 76.5],
    }
    best = {"bold": "dkm-p", "underline": "dkm-a"}
    expected = {
        mark: {
            key
            for key, runs in samples.items()
            if key == best[mark] or scipy_stats.ttest_ind(runs, samples[best[mark]]).pvalue > 0.05
        }
        for mark in best
    }
    assert significance_marks(samples) == expected
    assert (
        "ae-km" not in expected["bold"] and "dcn-p" in expected["bold"]
    )  # the example discriminates
    assert expected["underline"] >= {
        "km",
        "ae-km",
        "dkm-p",
    }  # every row is tested against both bests


def test_km_is_marked_but_never_defines_a_best() -> None:
    samples = {"km": [90.0, 90.5, 91.0], "dkm-p": [80.0, 81.0, 82.0], "dkm-a": [70.0, 71.0, 72.0]}
    marks = significance_marks(samples)
    assert marks == {"bold": {"dkm-p"}, "underline": {"dkm-a"}}
    close = {**samples, "km": [80.5, 81.0, 81.5]}
    assert significance_marks(close)["bold"] == {"dkm-p", "km"}


def test_custom_groups_and_empty_rows() -> None:
    samples = {"a": [1.0, 2.0, 3.0], "b": [1.5, 2.5, 3.5], "c": []}
    assert significance_marks(samples, {"bold": samples.keys()}) == {"bold": {"a", "b"}}
    assert significance_marks(samples, {"bold": {"c"}}) == {"bold": frozenset()}


def test_single_runs_mark_only_the_best() -> None:
    samples = {"dkm-p": [80.0], "dcn-p": [79.9], "dkm-a": [50.0, 51.0], "dcn-np": [50.4]}
    marks = significance_marks(samples)
    assert marks["bold"] == {"dkm-p"}  # the best has one run: nothing can be tested
    assert marks["underline"] == {"dkm-a"}  # dcn-np has one run: it is not tested


def test_zero_variance_marks() -> None:
    samples = {"dkm-p": [80.0, 80.0], "dcn-p": [80.0, 80.0], "ae-km": [79.0, 79.0]}
    assert significance_marks(samples)["bold"] == {"dkm-p", "dcn-p"}


def _paper_column(table: str, dataset: str, metric: str) -> dict[str, np.ndarray]:
    """Runs with the paper's exact means and standard deviations, keyed by method id."""
    return {
        paper.method_id(row["model"]): runs_with(row["mean"], row["std"])
        for row in paper.reported_results()
        if (row["table"], row["dataset"], row["metric"])
        == (paper.TABLE_KEYS[table], dataset, metric)
    }


def test_rule_reproduces_table2_mnist_acc() -> None:
    # IDEC^np 61.8±3.0; DKM^a 82.3±3.2 underlined; IDEC^p 85.7±2.4 bold; DKM^p 84.0±2.2 both.
    marks = significance_marks(_paper_column("table2", "MNIST", "ACC"))
    assert marks == {"bold": {"idec-p", "dkm-p"}, "underline": {"dkm-a", "dkm-p"}}


def test_rule_on_table1_usps_acc() -> None:
    marks = significance_marks(_paper_column("table1", "USPS", "ACC"), DEFAULT_GROUPS)
    # As in the paper: AE-KM 72.9±0.8 underlined (p = 0.25 against DKM^a 75.5±6.8), KM not,
    # DKM^a and DKM^p bold and underlined.
    assert {"ae-km", "dkm-a", "dkm-p"} <= marks["underline"] and "km" not in marks["underline"]
    assert marks["bold"] == {"dkm-a", "dkm-p"}
    # Unlike the paper, which does not underline DCN^p 73.0±0.8 (p = 0.26): an inconsistency.
    assert "dcn-p" in marks["underline"]


def test_compare_with_paper_matches_welch() -> None:
    values = runs_with(74.0, 1.5, n=5)
    result = compare_with_paper(values, 75.7, 1.3, 10)
    expected = scipy_stats.ttest_ind_from_stats(74.0, 1.5, 5, 75.7, 1.3, 10, equal_var=False).pvalue
    assert result.p_value == pytest.approx(expected)
    assert result.difference == pytest.approx(-1.7)
    assert (result.test, result.n, result.paper_n) == ("welch", 5, 10)
    assert result.verdict == ("consistent" if expected > 0.05 else "worse")


@pytest.mark.parametrize("mean, verdict", [(75.5, "consistent"), (80.0, "better"), (70.0, "worse")])
def test_compare_with_paper_verdicts(mean: float, verdict: str) -> None:
    assert compare_with_paper(runs_with(mean, 1.0), 75.7, 1.3).verdict == verdict


@pytest.mark.parametrize(
    "value, verdict", [(75.7 + 2.5, "consistent"), (75.7 + 2.6, "better"), (75.7 - 2.6, "worse")]
)
def test_single_run_uses_a_z_rule(value: float, verdict: str) -> None:
    result = compare_with_paper([value], 75.7, 1.3)  # 1.96 * 1.3 = 2.548
    assert (result.test, result.verdict) == ("z", verdict)
    assert result.p_value == pytest.approx(2 * scipy_stats.norm.sf(abs(value - 75.7) / 1.3))


def test_compare_zero_variance() -> None:
    same = compare_with_paper([50.0, 50.0], 50.0, 0.0)
    assert (same.verdict, same.p_value) == ("consistent", 1.0)
    higher = compare_with_paper([51.0, 51.0], 50.0, 0.0)
    assert (higher.verdict, higher.p_value) == ("better", 0.0)
    assert compare_with_paper([49.0], 50.0, 0.0).verdict == "worse"


def test_compare_errors() -> None:
    with pytest.raises(ValueError, match="paper_n"):
        compare_with_paper([1.0, 2.0], 1.0, 1.0, paper_n=1)
    with pytest.raises(ValueError, match="std >= 0"):
        compare_with_paper([1.0, 2.0], 1.0, -1.0)
    with pytest.raises(ValueError, match="zero runs"):
        compare_with_paper([], 1.0, 1.0)


def test_rounding_reads_the_paper_figure_most_favourably() -> None:
    # MNIST KM ARI: two runs at 36.68 against the paper's 36.6 ± 0.1 (p = 0.04); read as
    # 36.65 ± 0.15, the figure the rounding allows that is nearest ours, they agree.
    values = [36.680, 36.675]
    comparison = compare_with_paper(values, 36.6, 0.1)
    assert comparison.verdict == "better"
    expected = scipy_stats.ttest_ind_from_stats(
        np.mean(values), np.std(values, ddof=1), 2, 36.65, 0.15, 10, equal_var=False).pvalue
    assert p_value_within_rounding(comparison) == pytest.approx(expected)
    assert p_value_within_rounding(comparison) > 0.05


def test_rounding_searches_the_spread_where_welch_is_not_monotone() -> None:
    # two widely spread runs: a wider paper spread raises Welch's degrees of freedom and
    # lowers p, so the most favourable reading is the narrowest spread the rounding allows
    comparison = compare_with_paper([55.0, 65.0], 70.0, 1.0)
    at = {spread: scipy_stats.ttest_ind_from_stats(
        60.0, np.std([55.0, 65.0], ddof=1), 2, 69.95, spread, 10, equal_var=False).pvalue
        for spread in (0.95, 1.05)}
    assert at[0.95] > at[1.05]
    assert p_value_within_rounding(comparison) == pytest.approx(at[0.95])


def test_rounding_moves_the_mean_by_half_a_step_at_most() -> None:
    far = compare_with_paper(runs_with(70.0, 1.0), 75.7, 1.3)
    expected = scipy_stats.ttest_ind_from_stats(70.0, 1.0, 10, 75.65, 1.35, 10, equal_var=False)
    assert p_value_within_rounding(far) == pytest.approx(expected.pvalue)
    assert p_value_within_rounding(far) < 0.05
    inside = compare_with_paper([75.72], 75.7, 0.0)  # a single run within the rounding
    assert inside.verdict == "better" and p_value_within_rounding(inside) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="resolution"):
        p_value_within_rounding(far, resolution=0.0)


def _interval(differences: np.ndarray) -> tuple[float, float]:
    """The 95 % t interval of the mean of paired differences."""
    interval = scipy_stats.ttest_1samp(differences, 0.0).confidence_interval(0.95)
    return float(interval.low), float(interval.high)


@pytest.mark.parametrize("centre, spread, verdict", [
    (0.3, 0.5, "holds"),         # equivalent: the interval lies inside (−1, 1)
    (4.0, 0.5, "fails"),         # not equivalent: wholly above the margin
    (-4.0, 0.5, "fails"),        # ... or wholly below it
    (0.0, 4.0, "inconclusive"),  # too wide to decide, though it holds 0
    (1.2, 0.5, "inconclusive"),  # beyond the margin, but not wholly
])
def test_the_equivalence_test_on_constructed_differences(centre, spread, verdict) -> None:
    differences = runs_with(centre, spread)
    assert claim_verdict("on par", *_interval(differences), margin=1.0) == verdict


def test_equivalence_is_two_one_sided_tests() -> None:
    """The interval rule gives the verdicts of SciPy's one-sided t-tests at 2.5 %, each way."""
    rng = np.random.default_rng(0)
    margin, alpha, seen = 1.0, 0.025, set()
    for _ in range(400):
        differences = rng.normal(rng.uniform(-3, 3), rng.uniform(0.1, 3), size=10)

        def rejects(bound: float, alternative: str) -> bool:
            return scipy_stats.ttest_1samp(differences, bound, alternative=alternative).pvalue < alpha

        low, high = _interval(differences)
        equivalent = rejects(-margin, "greater") and rejects(margin, "less")
        different = rejects(margin, "greater") or rejects(-margin, "less")
        expected = "holds" if equivalent else "fails" if different else "inconclusive"
        assert claim_verdict("on par", low, high, margin) == expected
        seen.add(expected)
        better = ("holds" if rejects(0.0, "greater") else "fails" if rejects(margin, "less")
                  else "inconclusive")
        assert claim_verdict("better", low, high, margin) == better
        not_worse = ("holds" if rejects(-margin, "greater") else "fails"
                     if rejects(-margin, "less") else "inconclusive")
        assert claim_verdict("not worse", low, high, margin) == not_worse
    assert seen == {"holds", "fails", "inconclusive"}


@pytest.mark.parametrize("kind, low, high, verdict", [
    ("better", 0.2, 3.0, "holds"), ("better", -0.5, 0.8, "fails"), ("better", -0.5, 3.0, "inconclusive"),
    ("better", 0.2, 0.8, "holds"),            # shown above 0, if by less than the margin
    ("not worse", -0.8, 0.5, "holds"), ("not worse", -3.0, -1.5, "fails"),
    ("not worse", -3.0, 0.5, "inconclusive"),
    ("on par", -1.0, 0.5, "inconclusive"),    # the margin's own bound is not inside
])
def test_each_kind_of_claim_reads_its_interval_against_the_margin(kind, low, high, verdict) -> None:
    assert claim_verdict(kind, low, high, margin=1.0) == verdict


def test_claim_verdict_refuses_what_it_cannot_decide() -> None:
    assert CLAIM_KINDS == ("better", "on par", "not worse")
    with pytest.raises(ValueError, match="unknown kind"):
        claim_verdict("worse", 0.0, 1.0, margin=1.0)
    with pytest.raises(ValueError, match="margin"):
        claim_verdict("on par", 0.0, 1.0, margin=0.0)
    with pytest.raises(ValueError, match="interval"):
        claim_verdict("on par", math.nan, 1.0, margin=1.0)
    with pytest.raises(ValueError, match="interval"):
        claim_verdict("on par", 1.0, 0.0, margin=1.0)


def test_the_detectable_difference_is_where_students_test_reaches_5_percent() -> None:
    difference = detectable_difference(2.0, 1.0, 10)
    a, b = runs_with(50.0 + difference, 2.0), runs_with(50.0, 1.0)
    assert student_pvalue(a, b) == pytest.approx(0.05)
    assert detectable_difference(2.0, 1.0, 10, alpha=0.01) > difference
    assert detectable_difference(2.0, 1.0, 40) < difference
    with pytest.raises(ValueError, match="at least 2"):
        detectable_difference(1.0, 1.0, 1)
    with pytest.raises(ValueError, match="finite"):
        detectable_difference(-1.0, 1.0, 10)


def test_mean_interval_is_students_t_interval_of_the_mean() -> None:
    mean, low, high = mean_interval([70.0, 72.0, 77.0], confidence=0.9)
    half = scipy_stats.t.ppf(0.95, 2) * np.std([70.0, 72.0, 77.0], ddof=1) / math.sqrt(3)
    assert (mean, low, high) == pytest.approx((73.0, 73.0 - half, 73.0 + half))
    assert mean_interval([5.0, 5.0]) == (5.0, 5.0, 5.0)
    single = mean_interval([4.0])
    assert single[0] == 4.0 and math.isnan(single[1]) and math.isnan(single[2])
    with pytest.raises(ValueError, match="zero runs"):
        mean_interval([])


def test_a_better_claim_inside_zero_and_the_margin_holds() -> None:
    """DKM^p > AE-KM on 20NEWS ACC, +1.7 [1.2, 2.2] against δ = 2.7: above 0 and below δ; the
    claim says which model is better, not by how much, so it holds."""
    assert claim_verdict("better", 1.2, 2.2, margin=2.7) == "holds"
    assert claim_verdict("better", -0.1, 2.2, margin=2.7) == "fails"


def test_effect_size_bound_without_the_paper_s_spread_is_our_interval() -> None:
    differences = np.array([1.0, 1.6, 0.7, 1.9, 1.2])
    se = differences.std(ddof=1) / math.sqrt(differences.size)
    low, high = scipy_stats.ttest_1samp(differences, 0.0).confidence_interval(0.95)
    assert effect_size_bound(se, differences.size - 1, 0.0, 0.0, 10) == pytest.approx(
        (high - low) / 2)


def test_effect_size_bound_is_welch_s_half_width_with_the_paper_s_runs() -> None:
    """Ours against one of the paper's models (the other's spread zero): Welch's interval of
    the two samples, which the old rule (the paper's difference in our interval) ignored."""
    ours = np.array([3.0, 4.5, 2.0, 3.7])
    theirs = np.array([0.0, 2.0, -1.0, 1.5, 0.5, -0.5, 1.0, 2.5, 0.0, -1.0])
    interval = scipy_stats.ttest_ind(ours, theirs, equal_var=False).confidence_interval(0.95)
    bound = effect_size_bound(ours.std(ddof=1) / 2, 3, theirs.std(ddof=1), 0.0, 10)
    assert bound == pytest.approx((interval.high - interval.low) / 2)
    assert effect_size_bound(0.0, 3, 0.0, 0.0, 10) == 0.0
    with pytest.raises(ValueError, match="spreads"):
        effect_size_bound(-1.0, 3, 1.0, 1.0, 10)
    with pytest.raises(ValueError, match="dof"):
        effect_size_bound(1.0, 0, 1.0, 1.0, 10)


@pytest.mark.parametrize("runs, paper_mean, paper_std", [
    ([80.0, 82.0, 84.0], 84.0, 2.2), ([80.0, 81.0, 80.5, 79.0], 84.0, 2.2),
    ([70.0, 70.0], 70.0, 0.0), ([71.0], 70.0, 0.5), ([72.0], 70.0, 0.5),
])
def test_consistent_is_a_comparison_interval_that_holds_zero(runs, paper_mean,
                                                               paper_std) -> None:
    comparison = compare_with_paper(runs, paper_mean, paper_std, 10)
    low, high = comparison_interval(comparison)
    assert low <= comparison.difference <= high
    assert (comparison.verdict == "consistent") == (low < 0 < high or low == high == 0)
    if comparison.test == "welch" and comparison.std > 0:
        theirs = paper_mean + paper_std * np.array([1.0, -1.0] * 5) * math.sqrt(9 / 10)
        interval = scipy_stats.ttest_ind(runs, theirs, equal_var=False).confidence_interval(0.95)
        assert (low, high) == pytest.approx((interval.low, interval.high))
