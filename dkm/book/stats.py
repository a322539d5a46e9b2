"""Summaries, the paper's significance marks and comparisons with the paper.

Summaries
---------
:func:`summarize` gives the mean, the standard deviation and the number of
runs. The paper reports "average and standard deviation computed over 10
runs" without saying which standard deviation; this module uses the sample
standard deviation (``ddof=1``), the one Student's t-test is built on. With
10 runs it is 5 % larger than the population one (``ddof=0``), which is
below the rounding of most of the paper's figures.

Significance marks
------------------
The paper marks, in each column (dataset × metric) of its Tables 1-2 and of
the supplement's ARI tables, the cells "with no significant difference
(p > 0.05) to the best approach with (resp. without) pretraining": bold
relative to the best mean among the pretrained methods, underlined relative
to the best mean among the methods without pretraining. Every row of the
column, whatever its group, is tested against both bests; the test is
Student's two-sample t-test with equal variances on the runs
(``scipy.stats.ttest_ind(..., equal_var=True)``). :func:`significance_marks`
implements this for any grouping; :data:`DEFAULT_GROUPS` is the paper's:
AE-KM, DCN^p, IDEC^p, DKM^p (and DKM^pa) are pretrained, DCN^np, IDEC^np and
DKM^a are not, and KM is compared with both bests but never defines one.

What the paper's marks confirm and contradict. Replaying the rule on the
published means and standard deviations (``ttest_ind_from_stats``, 10 runs
each) reproduces 434 of the 444 mark decisions (cell × mark) of the six
marked tables:

* every row is compared with both bests, whatever its own group: in Table 1,
  USPS ACC, AE-KM (72.9±0.8) is underlined, i.e. not significantly
  different from the best method *without* pretraining, DKM^a (75.5±6.8;
  p = 0.25), while KM (67.3±0.1; p = 0.001) is not; on RCV1 NMI, KM
  (31.3±5.4) is both bold and underlined;
* KM and AE-KM are never the best of a column in the paper, so the tables
  cannot tell whether they could define a best; the defaults put AE-KM, an
  autoencoder pretrained like DCN^p and DKM^p, with the pretrained methods
  and KM, which learns no representation, in neither group;
* six disagreements are borderline (p between 0.038 and 0.048 from the
  rounded figures, marked as not significant in the paper: DKM^a against
  DKM^p on RCV1 ACC and NMI in Table 1, both directions, and DKM^a + KM
  against DKM^p + KM on MNIST NMI and RCV1 ACC in the friendliness table),
  explainable by the rounding of the published figures;
* four are not: Table 1 MNIST ACC, DKM^a (82.3±3.2) is not bold although
  p = 0.18 against DKM^p (84.0±2.2); Table 1 USPS ACC, DCN^p (73.0±0.8) is
  not underlined although AE-KM (72.9±0.8), with nearly the same figures, is
  (p = 0.26 against DKM^a); ARI of RCV1 in the k-Means-related table, AE-KM
  (23.9±4.3) and DCN^p (24.0±4.3) are not underlined although p = 0.12 and
  0.11 against the best without pretraining, DKM^a (20.7±4.4), while KM
  (20.6±2.8) is. A Welch test instead of Student's gives the same ten
  disagreements, so they are not due to the choice of test.

Degenerate cases. SciPy returns NaN when both samples have zero variance;
:func:`student_pvalue` then returns 1.0 for identical constants (not
significantly different) and 0.0 for different constants (significantly
different). A test needs at least 2 runs on each side: a cell with fewer
runs is never marked unless it is the best itself, and when the best has a
single run only the best is marked.

Comparison with the paper
-------------------------
:func:`compare_with_paper` tests the reproduced runs against the paper's
mean, standard deviation and number of runs with Welch's t-test from summary
statistics (``ttest_ind_from_stats(..., equal_var=False)``), since the two
implementations need not share a variance. With a single reproduced run no
variance can be estimated; the run is then treated as one draw from the
paper's distribution: ``z = (x - paper_mean) / paper_std`` with a two-sided
normal p value, i.e. "consistent" when ``|x - paper_mean| < 1.96 ·
paper_std``.

"Consistent" is that test's verdict: a non-significant difference at 5 %. Its 95 % interval
(:func:`comparison_interval`) holds zero exactly then, and its half-width is the smallest
difference the test could have detected with these runs and the paper's.

Comparative claims
------------------
A claim that one model is *better* than another, *on par* with it or *not worse* is decided by
:func:`claim_verdict` from a confidence interval of the difference of their scores (first minus
second; paired or not, the caller's choice) and an equivalence margin ``δ``, the smallest
difference that counts:

* *better*, a superiority test: holds when the interval lies above 0; fails when it lies below
  ``δ`` (no advantage as large as the margin is left);
* *on par*, an equivalence test (two one-sided tests, Schuirmann 1987): holds when the
  interval lies inside ``(−δ, δ)``; fails when it lies wholly outside ``[−δ, δ]``;
* *not worse*, a non-inferiority test: holds when the interval lies above ``−δ``; fails when
  it lies below ``−δ``.

Otherwise the verdict is *inconclusive*: the interval is too wide to decide. An interval of a
*better* claim inside ``(0, δ)`` both lies above 0 and below ``δ``: the claim *holds* (a
significant advantage, smaller than the margin), since the claim says which model is better, not
by how much; whether the size reproduced is the effect-size test's to say. A two-sided
interval at level ``1 − 2a`` lies above a bound exactly when the one-sided t-test at level
``a`` rejects that bound, so each verdict is that of one-sided tests at ``a``; with the
95 % interval, ``a`` is 2.5 %. :func:`detectable_difference` gives a margin from
two samples' standard deviations: the smallest difference of their means that Student's
t-test would call significant.

Effect sizes
------------
Whether the paper's difference of two models agrees with ours is a test of two differences with
their own uncertainties: ours, a mean of same-seed differences with standard error ``se`` on
``n − 1`` degrees of freedom, and the paper's, the difference of two means of ``m`` unpaired
runs each with standard error ``sqrt(s_a²/m + s_b²/m)``. They agree when
``|d_ours − d_paper|`` is at most :func:`effect_size_bound`,
``t(1 − α/2, ν) · sqrt(se² + s_a²/m + s_b²/m)``, with ``ν`` the Welch–Satterthwaite degrees of
freedom of the three variance terms: a two-sided Welch-type test at ``α``. With the paper's
spread set to zero it is the test of whether the paper's difference lies in our interval.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence, Set
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, TypeVar

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as _scipy_stats

from dkm.protocol import registry

__all__ = [
    "ALPHA",
    "significance_verdict",
    "PRETRAINED",
    "NOT_PRETRAINED",
    "DEFAULT_GROUPS",
    "COMPARISON_VERDICTS",
    "summarize",
    "mean_interval",
    "paired_interval",
    "student_interval",
    "student_pvalue",
    "welch_interval",
    "significance_marks",
    "marks_from_figures",
    "Comparison",
    "compare_with_paper",
    "p_value_within_rounding",
    "CLAIM_KINDS",
    "CLAIM_VERDICTS",
    "claim_verdict",
    "detectable_difference",
    "comparison_interval",
    "effect_size_bound",
]

#: Significance level of every test (the paper's p > 0.05).
ALPHA = 0.05
#: Methods with autoencoder pretraining (:data:`dkm.protocol.registry.METHODS`).
PRETRAINED = registry.GroupMembers("pretrained")
#: Deep clustering methods without pretraining.
NOT_PRETRAINED = registry.GroupMembers("not pretrained")
#: The paper's marks: mark -> the rows whose best mean defines it.
DEFAULT_GROUPS: Mapping[str, Set[str]] = MappingProxyType(
    {"bold": PRETRAINED, "underline": NOT_PRETRAINED}
)
#: The verdicts of :func:`compare_with_paper` (:attr:`Comparison.verdict`).
COMPARISON_VERDICTS = ("consistent", "better", "worse")
#: What a comparative claim says of its first model against its second (:func:`claim_verdict`).
CLAIM_KINDS = ("better", "on par", "not worse")
ClaimKind = Literal["better", "on par", "not worse"]
#: The verdicts of :func:`claim_verdict`.
CLAIM_VERDICTS = ("holds", "fails", "inconclusive")

Key = TypeVar("Key", bound=Hashable)


def _runs(values: ArrayLike, name: str = "values") -> np.ndarray:
    """``values`` as a 1-D float array of finite numbers, or raise."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite numbers, got {array.tolist()}")
    return array


def summarize(values: ArrayLike) -> tuple[float, float, int]:
    """Mean, sample standard deviation (``ddof=1``) and number of runs.

    Parameters
    ----------
    values : array_like
        One number per run.

    Returns
    -------
    tuple of (float, float, int)
        The standard deviation is NaN for a single run.

    Raises
    ------
    ValueError
        If there are no values or one is not finite.
    """
    runs = _runs(values)
    if runs.size == 0:
        raise ValueError("cannot summarize zero runs")
    std = float(runs.std(ddof=1)) if runs.size > 1 else float("nan")
    return float(runs.mean()), std, int(runs.size)


def mean_interval(values: ArrayLike, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of the runs and its Student's t interval, ``(mean, low, high)``
    (``scipy.stats.ttest_1samp(...).confidence_interval``).

    The interval is NaN with a single run; a constant sample has its value at both ends.

    Raises
    ------
    ValueError
        If there are no values or one is not finite.

    Examples
    --------
    >>> [round(v, 2) for v in mean_interval([1.0, 2.0, 3.0])]
    [2.0, -0.48, 4.48]
    """
    mean, _, n = summarize(values)
    if n < 2:
        return mean, math.nan, math.nan
    runs = _runs(values)
    result = _scipy_test(_scipy_stats.ttest_1samp, runs, 0.0, spreads=[runs])
    return mean, *_ends(result, confidence)


def paired_interval(a: ArrayLike, b: ArrayLike,
                    confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of the pairs' differences ``a − b`` and its Student's t interval
    (``scipy.stats.ttest_rel(...).confidence_interval``): for runs on the same seeds.

    Raises
    ------
    ValueError
        If the samples differ in length or have fewer than 2 pairs.
    """
    first, second = _runs(a, "a"), _runs(b, "b")
    if first.size != second.size or first.size < 2:
        raise ValueError(f"a paired interval needs at least 2 pairs of runs, got {first.size} "
                         f"and {second.size} runs")
    differences = first - second
    result = _scipy_test(_scipy_stats.ttest_rel, first, second, spreads=[differences])
    return float(differences.mean()), *_ends(result, confidence)


def student_interval(a: ArrayLike, b: ArrayLike,
                     confidence: float = 0.95) -> tuple[float, float, float]:
    """Difference of two samples' means, ``mean(a) − mean(b)``, and its Student's t interval
    with pooled variance (``scipy.stats.ttest_ind(..., equal_var=True)``): the paper's test.

    Raises
    ------
    ValueError
        If either sample has fewer than 2 runs.
    """
    first, second = _two_samples(a, b, "Student's interval")
    result = _scipy_test(_scipy_stats.ttest_ind, first, second, spreads=[first, second])
    return float(first.mean() - second.mean()), *_ends(result, confidence)


def _scipy_test(test: Callable[..., Any], *samples: Any, spreads: Sequence[np.ndarray],
                **options: Any) -> Any:
    """SciPy's t-test ``test(*samples, **options)``, without its warning of precision loss
    when one of ``spreads`` (the samples whose variance it estimates) is constant: their
    variance is exactly 0, and the interval is the estimate at both ends."""
    with warnings.catch_warnings():
        if any(_constant(spread) for spread in spreads):
            warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
        return test(*samples, **options)


def _ends(result: Any, confidence: float) -> tuple[float, float]:
    """The ends of a t-test's confidence interval at ``confidence``."""
    low, high = result.confidence_interval(confidence)
    return float(low), float(high)


def _constant(runs: np.ndarray) -> bool:
    return bool(runs.max() == runs.min())


def _two_samples(a: ArrayLike, b: ArrayLike, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` as runs for a two-sample t statistic, or raise."""
    first, second = _runs(a, "a"), _runs(b, "b")
    if first.size < 2 or second.size < 2:
        raise ValueError(
            f"{what} needs at least 2 runs per sample, got {first.size} and {second.size}"
        )
    return first, second


def student_pvalue(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sided p value of Student's two-sample t-test (equal variances).

    Unlike SciPy, which returns NaN when both samples are constant, this
    returns 1.0 when the two constants are equal and 0.0 when they differ.

    Raises
    ------
    ValueError
        If either sample has fewer than 2 runs.
    """
    first, second = _two_samples(a, b, "Student's t-test")
    if _constant(first) and _constant(second):
        return 1.0 if first[0] == second[0] else 0.0
    return float(_scipy_test(_scipy_stats.ttest_ind, first, second, spreads=[first, second],
                             equal_var=True).pvalue)


def welch_interval(a: ArrayLike, b: ArrayLike,
                   confidence: float = 0.95) -> tuple[float, float, float]:
    """Difference of two independent samples' means, ``mean(a) − mean(b)``, and its Welch
    t interval: for runs on different seeds, where no pairing removes what seeds share.

    Two constant samples give the difference of their values as both ends of the interval
    (not of their computed means, whose rounding differs with the number of runs).

    Raises
    ------
    ValueError
        If either sample has fewer than 2 runs.
    """
    first, second = _two_samples(a, b, "Welch's interval")
    if _constant(first) and _constant(second):
        difference = float(first[0] - second[0])
        return difference, difference, difference
    difference = float(first.mean() - second.mean())
    result = _scipy_test(_scipy_stats.ttest_ind, first, second, spreads=[first, second],
                         equal_var=False)
    return difference, *_ends(result, confidence)


def _marked(means: Mapping[Key, float], members: Collection[Key], alpha: float,
            pvalue: Callable[[Key, Key], float | None]) -> frozenset[Key]:
    """The best of ``members`` (by ``means``) and every row not significantly different from it:
    ``pvalue(row, best)`` > ``alpha``, where ``None`` means the row cannot be tested."""
    candidates = [key for key in means if key in members]
    if not candidates:
        return frozenset()
    best = max(candidates, key=means.__getitem__)
    marked = {best}
    for key in means:
        p_value = None if key == best else pvalue(key, best)
        if p_value is not None and p_value > alpha:
            marked.add(key)
    return frozenset(marked)


def significance_marks(
    samples: Mapping[Key, Sequence[float]],
    groups: Mapping[str, Collection[Key]] = DEFAULT_GROUPS,
    *,
    alpha: float = ALPHA,
) -> dict[str, frozenset[Key]]:
    """The paper's marks for one column of a table.

    For each mark, the best row is the one with the highest mean among the
    rows of its group; the mark goes to the best row and to every row (of
    any group) whose runs are not significantly different from the best's
    (:func:`student_pvalue` > ``alpha``). Rows outside every group (KM in
    the paper) are marked but never define a best.

    Parameters
    ----------
    samples : mapping
        Row -> the runs of that row in this column (possibly empty: a row
        that was not run is never marked).
    groups : mapping
        Mark name -> the rows that may define its best. The default,
        :data:`DEFAULT_GROUPS`, keys rows by method id: ``"bold"`` for the
        pretrained methods and ``"underline"`` for those without pretraining.
        Use ``{"bold": samples.keys()}`` for "no significant difference to
        the best" over every row.
    alpha : float
        Significance level.

    Returns
    -------
    dict
        Mark name -> the rows that carry it; empty when no row of the group
        has a run. Rows with fewer than 2 runs are never tested, so they are
        marked only when they are the best; a best with a single run marks
        itself only.

    Examples
    --------
    >>> marks = significance_marks(
    ...     {"dkm-p": [75, 76, 77], "dcn-p": [74, 75, 76], "dkm-a": [60, 61, 62]})
    >>> sorted(marks["bold"]), sorted(marks["underline"])
    (['dcn-p', 'dkm-p'], ['dkm-a'])
    """
    runs = {key: _runs(values, f"samples[{key!r}]") for key, values in samples.items()}
    means = {key: float(values.mean()) for key, values in runs.items() if values.size}

    def pvalue(key: Key, best: Key) -> float | None:
        if runs[key].size < 2 or runs[best].size < 2:
            return None
        return student_pvalue(runs[key], runs[best])

    return {mark: _marked(means, members, alpha, pvalue) for mark, members in groups.items()}


def marks_from_figures(
    figures: Mapping[Key, tuple[float, float, int]],
    groups: Mapping[str, Collection[Key]] = DEFAULT_GROUPS,
    *,
    alpha: float = ALPHA,
) -> dict[str, frozenset[Key]]:
    """The paper's marks for one column, computed from its published figures.

    The rule of :func:`significance_marks` with Student's t-test computed
    from each row's mean, standard deviation and number of runs
    (``ttest_ind_from_stats``): what the paper's own figures give, not what
    it printed (it tested its runs, whose unrounded means and deviations
    are not published, and its test is not named, so a mark can differ).

    Parameters
    ----------
    figures : mapping
        Row -> ``(mean, std, runs)``, e.g. :func:`dkm.protocol.paper.reported`;
        a row the paper does not report is left out.
    groups : mapping
        Mark name -> the rows that may define its best, as for
        :func:`significance_marks`.
    alpha : float
        Significance level.

    Returns
    -------
    dict
        Mark name -> the rows that carry it.

    Examples
    --------
    The paper's Table 1 on 20NEWS, ACC:

    >>> marks = marks_from_figures({"dkm-p": (51.2, 2.8, 10), "dcn-p": (49.2, 2.9, 10),
    ...                             "dkm-a": (44.8, 2.4, 10)})
    >>> sorted(marks["bold"]), sorted(marks["underline"])
    (['dcn-p', 'dkm-p'], ['dkm-a'])
    """
    def pvalue(key: Key, best: Key) -> float | None:
        (mean, std, n), (best_mean, best_std, best_n) = figures[key], figures[best]
        if n < 2 or best_n < 2:
            return None
        if std == 0 and best_std == 0:
            return 1.0 if mean == best_mean else 0.0
        return float(_scipy_stats.ttest_ind_from_stats(
            mean, std, n, best_mean, best_std, best_n, equal_var=True).pvalue)

    means = {key: float(figure[0]) for key, figure in figures.items()}
    return {mark: _marked(means, members, alpha, pvalue) for mark, members in groups.items()}


@dataclass(frozen=True)
class Comparison:
    """A reproduced cell against the paper's figure.

    Attributes
    ----------
    verdict : str
        ``"consistent"`` (p > alpha), otherwise ``"better"`` or ``"worse"``
        by the sign of ``difference`` (higher is better for every metric).
    difference : float
        Reproduced mean minus the paper's mean.
    p_value : float
        Two-sided p value of ``test``.
    test : str
        ``"welch"`` (two or more runs) or ``"z"`` (a single run).
    mean, std, n : float, float, int
        The reproduced summary (:func:`summarize`).
    paper_mean, paper_std, paper_n : float, float, int
        The paper's figure.
    """

    verdict: str
    difference: float
    p_value: float
    test: str
    mean: float
    std: float
    n: int
    paper_mean: float
    paper_std: float
    paper_n: int


def _z_pvalue(difference: float, paper_std: float) -> float:
    if paper_std == 0:
        return 1.0 if difference == 0 else 0.0
    return float(2 * _scipy_stats.norm.sf(abs(difference) / paper_std))


def _welch_pvalue(
    mean: float, std: float, n: int, paper_mean: float, paper_std: float, paper_n: int
) -> float:
    if std == 0 and paper_std == 0:
        return 1.0 if mean == paper_mean else 0.0
    result = _scipy_stats.ttest_ind_from_stats(
        mean, std, n, paper_mean, paper_std, paper_n, equal_var=False
    )
    return float(result.pvalue)


def _paper_test(
    mean: float, std: float, n: int, paper_mean: float, paper_std: float, paper_n: int
) -> tuple[str, float]:
    """The test of :func:`compare_with_paper` and its p value."""
    if n == 1:
        return "z", _z_pvalue(mean - paper_mean, paper_std)
    return "welch", _welch_pvalue(mean, std, n, paper_mean, paper_std, paper_n)


def compare_with_paper(
    values: ArrayLike,
    paper_mean: float,
    paper_std: float,
    paper_n: int = 10,
    *,
    alpha: float = ALPHA,
) -> Comparison:
    """Is the reproduction consistent with the paper's mean ± std over n runs?

    Parameters
    ----------
    values : array_like
        The reproduced runs, in the paper's units (percent).
    paper_mean, paper_std, paper_n : float, float, int
        The paper's figure (see :func:`dkm.protocol.paper.reported`).
    alpha : float
        Significance level.

    Returns
    -------
    Comparison
        With two or more runs: Welch's t-test from the summaries. With one
        run: a z test against the paper's spread, ``z = (x - paper_mean) /
        paper_std`` (consistent when ``|x - paper_mean| < 1.96 · paper_std``
        at alpha = 0.05). With zero spread on both sides, equal means are
        consistent (p = 1) and different ones are not (p = 0).

    Raises
    ------
    ValueError
        With no runs, a non-finite value, a negative ``paper_std`` or
        ``paper_n < 2``.
    """
    if not np.isfinite([paper_mean, paper_std]).all() or paper_std < 0:
        raise ValueError(
            f"the paper's figure must be finite with std >= 0, got {paper_mean}±{paper_std}"
        )
    if paper_n < 2:
        raise ValueError(f"paper_n must be at least 2, got {paper_n}")
    mean, std, n = summarize(values)
    difference = mean - paper_mean
    test, p_value = _paper_test(mean, std, n, paper_mean, paper_std, paper_n)
    if p_value > alpha:
        verdict = "consistent"
    else:
        verdict = "better" if difference > 0 else "worse"
    return Comparison(
        verdict,
        difference,
        p_value,
        test,
        mean,
        std,
        n,
        float(paper_mean),
        float(paper_std),
        int(paper_n),
    )


def p_value_within_rounding(comparison: Comparison, resolution: float = 0.1) -> float:
    """The p value of ``comparison`` at the reading of the paper's rounded figure most
    favourable to agreement.

    The paper prints its means and standard deviations rounded to ``resolution``
    (0.1 point), so each stands for any value within half of it. The p value of
    :func:`compare_with_paper` grows as the paper's mean comes nearer to ours, so
    the mean is moved towards ours by up to ``resolution / 2``; it mostly grows
    with the paper's spread too, but not always (Welch's degrees of freedom
    change with it), so the standard deviation is searched over its interval
    (21 evenly spaced values). Above ``alpha``, the disagreement rests on the
    last printed digit of the paper's figure.

    Parameters
    ----------
    comparison : Comparison
        A result of :func:`compare_with_paper`.
    resolution : float, default=0.1
        The rounding step of the paper's figures, in their units.

    Returns
    -------
    float
        The largest p value over the rounding interval of the paper's figure.

    Raises
    ------
    ValueError
        If ``resolution`` is not a finite number > 0.
    """
    if not np.isfinite(resolution) or resolution <= 0:
        raise ValueError(f"resolution must be a finite number > 0, got {resolution}")
    half = resolution / 2
    gap = comparison.mean - comparison.paper_mean
    nearest_mean = comparison.paper_mean + float(np.clip(gap, -half, half))
    spreads = np.linspace(max(comparison.paper_std - half, 0.0), comparison.paper_std + half, 21)
    return max(_paper_test(comparison.mean, comparison.std, comparison.n, nearest_mean,
                           float(spread), comparison.paper_n)[1] for spread in spreads)


def claim_verdict(kind: ClaimKind, low: float, high: float, margin: float) -> str:
    """A comparative claim decided by a confidence interval of the difference and a margin.

    Parameters
    ----------
    kind : {"better", "on par", "not worse"}
        What the claim says of the first model against the second.
    low, high : float
        Confidence interval of the difference, first minus second.
    margin : float
        The equivalence margin ``δ`` (> 0), in the units of the difference.

    Returns
    -------
    {"holds", "fails", "inconclusive"}
        See the module's *Comparative claims*: superiority, equivalence and
        non-inferiority tests on the interval.

    Raises
    ------
    ValueError
        For an unknown ``kind``, a margin that is not a finite number > 0, or an
        interval that is not finite with ``low <= high``.

    Examples
    --------
    >>> claim_verdict("on par", -0.5, 0.8, margin=1.0)
    'holds'
    >>> claim_verdict("on par", -4.7, 3.1, margin=1.0)
    'inconclusive'
    >>> claim_verdict("better", -1.5, 0.5, margin=1.0)
    'fails'
    """
    if kind not in CLAIM_KINDS:
        raise ValueError(f"unknown kind of claim {kind!r}; expected one of {CLAIM_KINDS}")
    if not math.isfinite(margin) or margin <= 0:
        raise ValueError(f"the margin must be a finite number > 0, got {margin}")
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise ValueError(f"the interval must be finite with low <= high, got [{low}, {high}]")
    if kind == "better":
        holds, fails = low > 0, high < margin
    elif kind == "on par":
        holds, fails = -margin < low and high < margin, low > margin or high < -margin
    else:
        holds, fails = low > -margin, high < -margin
    return "holds" if holds else "fails" if fails else "inconclusive"


def significance_verdict(kind: ClaimKind, difference: float, detectable: float) -> str:
    """A comparative claim decided as the paper's own test decides it: by significance.

    The paper calls two means different when Student's two-sample t-test at 5 % rejects
    their equality, i.e. when they differ by more than ``detectable``
    (:func:`detectable_difference` of its standard deviations and runs): "better" holds for a
    significant positive difference, "on par" for a difference that is not significant,
    "not worse" unless the first model is significantly worse.

    Parameters
    ----------
    kind : {"better", "on par", "not worse"}
    difference : float
        The first model's mean minus the second's.
    detectable : float
        The smallest significant difference (> 0).

    Returns
    -------
    {"holds", "fails"}

    Examples
    --------
    >>> significance_verdict("on par", 2.8, detectable=1.5)
    'fails'
    >>> significance_verdict("better", 36.6, detectable=4.0)
    'holds'
    """
    if kind not in CLAIM_KINDS:
        raise ValueError(f"unknown kind of claim {kind!r}; expected one of {CLAIM_KINDS}")
    if not math.isfinite(detectable) or detectable <= 0:
        raise ValueError(f"the detectable difference must be a finite number > 0, "
                         f"got {detectable}")
    if kind == "better":
        holds = difference > detectable
    elif kind == "on par":
        holds = abs(difference) <= detectable
    else:
        holds = difference >= -detectable
    return "holds" if holds else "fails"


def detectable_difference(std_a: float, std_b: float, n: int, *, alpha: float = ALPHA) -> float:
    """The smallest difference of two means that Student's two-sample t-test calls significant.

    For two samples of ``n`` runs each with standard deviations ``std_a`` and ``std_b``,
    the test at level ``alpha`` (two-sided) rejects equal means exactly when the means
    differ by more than ``t(1 − alpha/2, 2n − 2) · s · sqrt(2/n)``, with ``s`` the pooled
    standard deviation ``sqrt((std_a² + std_b²) / 2)``.

    Raises
    ------
    ValueError
        If a standard deviation is negative or not finite, or ``n < 2``.

    Examples
    --------
    >>> round(detectable_difference(1.0, 1.0, 10), 2)
    0.94
    """
    if not (np.isfinite([std_a, std_b]).all() and min(std_a, std_b) >= 0):
        raise ValueError(f"standard deviations must be finite and >= 0, got {std_a}, {std_b}")
    if n < 2:
        raise ValueError(f"n must be at least 2, got {n}")
    pooled = math.sqrt((std_a ** 2 + std_b ** 2) / 2)
    return float(_scipy_stats.t.ppf(1 - alpha / 2, 2 * n - 2) * pooled * math.sqrt(2 / n))


def _welch_df(variances: Sequence[float], dofs: Sequence[float]) -> float:
    """Welch–Satterthwaite degrees of freedom of a sum of variance estimates, each on its own
    degrees of freedom (terms of zero variance carry none; infinite when all are zero)."""
    terms = [(v, d) for v, d in zip(variances, dofs) if v > 0]
    if not terms:
        return math.inf
    return sum(v for v, _ in terms) ** 2 / sum(v ** 2 / d for v, d in terms)


def comparison_interval(comparison: Comparison,
                        confidence: float = 0.95) -> tuple[float, float]:
    """The interval of :attr:`Comparison.difference` (ours − the paper's mean) that its test
    inverts: Welch's from the two summaries, or with a single run ours ± z · the paper's std.

    The test's verdict is "consistent" exactly when the interval holds zero (at
    ``confidence = 1 − alpha``); its half-width is the smallest difference that test could call
    significant.

    Raises
    ------
    ValueError
        If ``confidence`` is not in (0, 1).

    Examples
    --------
    >>> c = compare_with_paper([80.0, 82.0, 84.0], 84.0, 2.2, 10)
    >>> [round(v, 1) for v in comparison_interval(c)]
    [-5.9, 1.9]
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    quantile = 1 - (1 - confidence) / 2
    if comparison.test == "z":
        half = float(_scipy_stats.norm.ppf(quantile)) * comparison.paper_std
    else:
        variances = [comparison.std ** 2 / comparison.n,
                     comparison.paper_std ** 2 / comparison.paper_n]
        dof = _welch_df(variances, [comparison.n - 1, comparison.paper_n - 1])
        half = float(_scipy_stats.t.ppf(quantile, dof)) * math.sqrt(sum(variances))
    return comparison.difference - half, comparison.difference + half


def effect_size_bound(se: float, dof: float, paper_std_a: float, paper_std_b: float,
                      paper_n: int, *, alpha: float = ALPHA) -> float:
    """The largest gap between our difference of two models and the paper's that a two-sided
    Welch-type test at ``alpha`` calls an agreement (the module's *Effect sizes*).

    Parameters
    ----------
    se : float
        Standard error of our difference (of the mean of same-seed differences).
    dof : float
        Its degrees of freedom (seed pairs − 1).
    paper_std_a, paper_std_b : float
        The standard deviations the paper reports for the two models.
    paper_n : int
        The paper's runs per model (unpaired for us).
    alpha : float

    Returns
    -------
    float
        ``t(1 − alpha/2, ν) · sqrt(se² + s_a²/m + s_b²/m)``; 0 when every spread is 0.

    Raises
    ------
    ValueError
        If a spread is negative or not finite, ``dof < 1`` or ``paper_n < 2``.

    Examples
    --------
    >>> round(effect_size_bound(0.5, 9, 0.0, 0.0, 10), 2)  # our interval's half-width
    1.13
    >>> round(effect_size_bound(0.5, 9, 2.0, 2.0, 10), 2)
    2.11
    """
    if not (np.isfinite([se, paper_std_a, paper_std_b]).all()
            and min(se, paper_std_a, paper_std_b) >= 0):
        raise ValueError(f"the spreads must be finite and >= 0, got se={se}, "
                         f"paper's {paper_std_a} and {paper_std_b}")
    if not dof >= 1 or paper_n < 2:
        raise ValueError(f"need dof >= 1 and paper_n >= 2, got {dof} and {paper_n}")
    variances = [se ** 2, paper_std_a ** 2 / paper_n, paper_std_b ** 2 / paper_n]
    total = sum(variances)
    if total == 0:
        return 0.0
    nu = _welch_df(variances, [dof, paper_n - 1, paper_n - 1])
    return float(_scipy_stats.t.ppf(1 - alpha / 2, nu)) * math.sqrt(total)
