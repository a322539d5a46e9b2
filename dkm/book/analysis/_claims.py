"""The paper's comparative claims (:data:`CLAIMS`), checked on the records, and their tables."""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from scipy import stats as scipy_stats

from dkm.book.analysis._paired import paired_difference, seed_scores, signed, unpaired_difference
from dkm.book.stats import (CLAIM_VERDICTS, ClaimKind, claim_verdict, detectable_difference,
                            effect_size_bound, significance_verdict)
from dkm.book.tables import one_line, typeset
from dkm.data import paper_dataset
from dkm.protocol import paper
from dkm.protocol.results import records_to_dataframe

#: Verdicts of a claim on one dataset and metric: the three of
#: :func:`dkm.book.stats.claim_verdict`, then the cells without one.
VERDICTS = (*CLAIM_VERDICTS, "not testable", "excepted")
#: The verdicts decided by a test (:func:`verdicts_given`).
TESTED = CLAIM_VERDICTS
#: Fewest same-seed pairs for an interval (and a verdict).
MIN_PAIRS = 3
#: A model whose test NMI stays below this (points) on every seed has collapsed: one cluster,
#: or clusters at chance, whatever its ACC (a verdict against it supports nothing).
COLLAPSED_NMI = 1.0


@dataclass(frozen=True)
class Claim:
    """One comparative claim of the paper.

    Attributes
    ----------
    key : str
        Short identifier.
    text : str
        The claim, close to the paper's words.
    first, second : str
        The paper's labels of the two models compared (``"DKM^p + KM"``).
    kind : {"better", "on par", "not worse"}
        What the paper says of ``first`` against ``second``.
    datasets : tuple of str
        The datasets (package ids) the paper makes the claim for.
    table : str
        The paper's table with both models' figures (:func:`dkm.protocol.paper.reported`).
    metrics : tuple of str
        The metrics the claim covers.
    exceptions : tuple of (str, str)
        The (dataset, metric) cells the paper itself excepts from the claim
        ("with the exception of the NMI results on MNIST"): their numbers are
        reported, their verdict is ``"excepted"``.
    """

    key: str
    text: str
    first: str
    second: str
    kind: ClaimKind
    datasets: tuple[str, ...]
    table: str
    metrics: tuple[str, ...] = ("acc", "nmi")
    exceptions: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """The claim in symbols (:data:`KIND_SYMBOLS`): ``"DKM^a > DCN^np"``."""
        return f"{self.first} {KIND_SYMBOLS[self.kind]} {self.second}"


#: The symbols of the kinds of claim in :attr:`Claim.label`.
KIND_SYMBOLS = {"better": ">", "on par": "≈", "not worse": "≥"}

_ALL = ("mnist", "usps", "20news", "rcv1")
_NOT_RCV1 = ("mnist", "usps", "20news")

#: The comparative claims of the paper's "Clustering results" section and supplement.
CLAIMS: tuple[Claim, ...] = (
    Claim("dkm-a>dcn-np", "without pretraining, DKM^a markedly outperforms DCN^np on all datasets",
          "DKM^a", "DCN^np", "better", _ALL, "table1"),
    # "DKM^a achieves clustering performance similar to that obtained by pretraining-based
    # methods": read as "on par" with each pretraining-based method of Table 1
    Claim("dkm-a=ae-km", "DKM^a performs similarly to the pretraining-based methods "
          "(here: on par with AE-KM)", "DKM^a", "AE-KM", "on par", _ALL, "table1"),
    Claim("dkm-a=dcn-p", "DKM^a performs similarly to the pretraining-based methods "
          "(here: on par with DCN^p)", "DKM^a", "DCN^p", "on par", _ALL, "table1"),
    Claim("dkm-a=dkm-p", "DKM^a performs similarly to the pretraining-based methods "
          "(here: on par with DKM^p)", "DKM^a", "DKM^p", "on par", _ALL, "table1"),
    Claim("dkm-p>dcn-p", "DKM^p improves significantly over DCN^p on all collections except RCV1",
          "DKM^p", "DCN^p", "better", _NOT_RCV1, "table1"),
    Claim("dcn-p=ae-km", "in all cases, DCN^p performs on par with AE-KM",
          "DCN^p", "AE-KM", "on par", _ALL, "table1"),
    Claim("dkm-p>ae-km", "AE-KM obtains the worst results of the pretrained methods "
          "(here: against DKM^p)", "DKM^p", "AE-KM", "better", _ALL, "table1"),
    Claim("dcn-p>dcn-np", "pretraining helps DCN substantially", "DCN^p", "DCN^np", "better",
          _ALL, "table1"),
    Claim("idec-p>idec-np", "pretraining helps IDEC substantially", "IDEC^p", "IDEC^np", "better",
          _ALL, "table2"),
    Claim("dkm-a>idec-np", "DKM^a significantly outperforms IDEC^np, except on RCV1",
          "DKM^a", "IDEC^np", "better", _NOT_RCV1, "table2"),
    Claim("dkm-p>=idec-p", "DKM^p is better than IDEC^p or not significantly different "
          "(except MNIST NMI)", "DKM^p", "IDEC^p", "not worse", _ALL, "table2",
          exceptions=(("mnist", "nmi"),)),
    Claim("dkm-p+km>ae-km", "k-means on DKM^p's embedding beats k-means on the autoencoder's",
          "DKM^p + KM", "AE-KM", "better", _ALL, "friendliness"),
    Claim("dkm-p+km>=dcn-p+km", "DKM^p's embedding is the most k-means-friendly "
          "(not worse than DCN^p's)", "DKM^p + KM", "DCN^p + KM", "not worse", _ALL,
          "friendliness"),
    Claim("dkm-a-ce>ee", "on 20NEWS, DKM^a with the cosine distance beats the euclidean one "
          "(ACC)", "DKM^a_ce", "DKM^a_ee", "better", ("20news",), "cosine", ("acc",)),
)


def paper_margin(claim: Claim, dataset: str, metric: str) -> float:
    """The equivalence margin of ``claim`` on a dataset and metric, from the paper's own spread.

    The smallest difference of the two models' means that the paper's own test, Student's
    two-sample t-test at 5 % on its runs of each, could call significant given the standard
    deviations it reports for them (:func:`dkm.book.stats.detectable_difference`): a
    difference below it is one the paper's test would itself have found "on par". The margin
    grows with the two models' seed-to-seed spread on that dataset and metric.

    Parameters
    ----------
    claim : Claim
    dataset : str
        Dataset id; a variant (``"usps-sharp"``) takes its paper dataset's margin.
    metric : {"acc", "nmi", "ari"}

    Returns
    -------
    float
        The margin, in points.
    """
    (_, std_a, n_a), (_, std_b, n_b) = (paper.reported(claim.table, model, paper_dataset(dataset),
                                                       metric)
                                        for model in (claim.first, claim.second))
    return detectable_difference(std_a, std_b, min(n_a, n_b))


#: How :func:`check_claims` sets a claim's margin: ``margin(claim, dataset, metric)`` in points.
MarginRule = Callable[[Claim, str, str], float]


def _t_quantile(confidence: float, dof: int) -> float:
    """The two-sided ``confidence`` quantile of Student's t on ``dof`` degrees of freedom."""
    return float(scipy_stats.t.ppf(1 - (1 - confidence) / 2, dof))


def _size_agrees(claim: Claim, dataset: str, metric: str, ours: float, se: float, n: int,
                published: float, alpha: float) -> tuple[bool, float]:
    """Whether the paper's difference ``published`` agrees with ours, given both standard errors
    (:func:`dkm.book.stats.effect_size_bound`), and the bound on their gap; ``(False, nan)``
    without an interval (fewer than two pairs)."""
    if n < 2 or math.isnan(se):
        return False, math.nan
    (_, std_a, n_a), (_, std_b, n_b) = (paper.reported(claim.table, model, paper_dataset(dataset),
                                                       metric)
                                        for model in (claim.first, claim.second))
    bound = effect_size_bound(se, n - 1, std_a, std_b, min(n_a, n_b), alpha=alpha)
    return bool(abs(ours - published) <= bound), bound


def _verdict(kind: ClaimKind, low: float, high: float, n: int, margin: float,
             excepted: bool) -> str:
    if excepted:
        return "excepted"
    if n < MIN_PAIRS or math.isnan(low):
        return "not testable"
    return claim_verdict(kind, low, high, margin)


def _tested(first: pd.Series, second: pd.Series, kind: ClaimKind, confidence: float,
            margin: float, excepted: bool = False) -> dict[str, Any]:
    """One claim's cell tested on two models' scores by seed: the columns of
    :func:`check_claims` from ``ours`` to ``verdict`` and the unpaired ones."""
    mean, low, high, n = paired_difference(first, second, confidence)
    _, u_low, u_high, u_n = unpaired_difference(first, second, confidence)
    # the paired t interval is mean ± t(n − 1) · se: its standard error, from its half-width
    se = (high - low) / 2 / _t_quantile(confidence, n - 1) if n >= 2 else math.nan
    return {"ours": mean, "low": low, "high": high, "n": n, "se": se, "margin": margin,
            "verdict": _verdict(kind, low, high, n, margin, excepted),
            "unpaired_low": u_low, "unpaired_high": u_high,
            "unpaired_verdict": _verdict(kind, u_low, u_high, min(n, u_n), margin, excepted)}


def check_claims(
    records: Iterable[Mapping[str, Any]],
    claims: Sequence[Claim] = CLAIMS,
    datasets: Sequence[str] | None = None,
    confidence: float = 0.95,
    margin: MarginRule = paper_margin,
) -> pd.DataFrame:
    """Every claim on every dataset and metric it covers, against the records.

    Parameters
    ----------
    records : iterable of dict
        Run records of any datasets (a variant such as ``"usps-sharp"`` is
        tested against the claims on its paper dataset).
    claims : sequence of Claim
    datasets : sequence of str, optional
        Dataset ids to report; by default the claims' datasets and every
        variant of them found in the records.
    confidence : float
        Level of the paired t interval; each one-sided test of the verdict is at
        ``(1 − confidence) / 2``.
    margin : callable
        ``margin(claim, dataset, metric)``: the equivalence margin in points
        (default :func:`paper_margin`, from the paper's reported spread).

    Returns
    -------
    pandas.DataFrame
        One row per (claim, dataset, metric): ``claim`` (key), ``text``,
        ``label`` (:attr:`Claim.label`), ``kind``, ``dataset``, ``metric``, ``paper`` (the difference of the
        paper's means, points), ``ours``, ``low``, ``high`` (same-seed mean
        difference and interval, points), ``n`` (seed pairs), ``margin``
        (points), ``verdict`` (:data:`VERDICTS`; the three tested ones by
        :func:`dkm.book.stats.claim_verdict`), ``se`` (our difference's standard error),
        ``size_inside`` (whether the paper's difference lies in our interval, its own standard
        error ignored), ``size_agrees`` (whether it agrees with ours given both standard errors,
        the ● mark: ``|ours − paper|`` at most ``size_bound``,
        :func:`dkm.book.stats.effect_size_bound`), the same test on Student's
        unpaired interval, the paper's own: ``unpaired_low``, ``unpaired_high``
        and ``unpaired_verdict``; ``paper_verdict``, the claim decided on the paper's
        own figures by its own test (:func:`dkm.book.stats.significance_verdict` of its
        difference and ``margin``, "excepted" where it excepts the cell), and
        ``collapsed``, whether one of the two models collapsed in our runs
        (:data:`COLLAPSED_NMI`).
    """
    records = list(records)
    frame = records_to_dataframe(records) if records else pd.DataFrame(
        columns=["dataset", "method", "seed", "distance", "tradeoff"])
    frame = frame.drop_duplicates("config_hash", keep="last") if len(frame) else frame
    present = list(dict.fromkeys(frame["dataset"]))
    rows = []
    for claim in claims:
        names = datasets or [*claim.datasets,
                             *(d for d in present if d not in claim.datasets
                               and paper_dataset(d) in claim.datasets)]
        for dataset in names:
            if paper_dataset(dataset) not in claim.datasets:
                continue
            collapsed = _collapsed(frame, claim, dataset)
            for metric in claim.metrics:
                published = (paper.reported(claim.table, claim.first, paper_dataset(dataset), metric)[0]
                             - paper.reported(claim.table, claim.second, paper_dataset(dataset),
                                              metric)[0])
                excepted = (paper_dataset(dataset), metric) in claim.exceptions
                delta = margin(claim, dataset, metric)
                tested = _tested(seed_scores(frame, claim.first, dataset, metric),
                                 seed_scores(frame, claim.second, dataset, metric), claim.kind,
                                 confidence, delta, excepted)
                agrees, bound = _size_agrees(claim, dataset, metric, tested["ours"], tested["se"],
                                            tested["n"], published, 1 - confidence)
                rows.append({"claim": claim.key, "text": claim.text, "label": claim.label,
                             "kind": claim.kind,
                             "dataset": dataset, "metric": metric, "paper": round(published, 1),
                             **tested,
                             "size_inside": bool(tested["low"] <= published <= tested["high"]),
                             "size_agrees": agrees, "size_bound": bound,
                             "paper_verdict": "excepted" if excepted else significance_verdict(
                                 claim.kind, published, delta),
                             "collapsed": collapsed})
    return pd.DataFrame(rows, columns=COLUMNS)


def _collapsed(frame: pd.DataFrame, claim: Claim, dataset: str) -> bool:
    """Whether one of the claim's two models collapsed on ``dataset`` in the records: its test
    NMI below :data:`COLLAPSED_NMI` on every seed."""
    for model in (claim.first, claim.second):
        nmi = seed_scores(frame, model, dataset, "nmi")
        if len(nmi) and bool((nmi < COLLAPSED_NMI).all()):
            return True
    return False


#: The columns of :func:`check_claims`.
COLUMNS = ["claim", "text", "label", "kind", "dataset", "metric", "paper", "ours", "low", "high", "n",
           "se", "margin", "verdict", "size_inside", "size_agrees", "size_bound", "unpaired_low",
           "unpaired_high", "unpaired_verdict", "paper_verdict", "collapsed"]


#: Symbols of the verdicts in :func:`two_source_grid` and :func:`claims_table`.
VERDICT_SYMBOLS = {"holds": "✓", "fails": "✗", "inconclusive": "?", "not testable": "–",
                   "excepted": "·"}


def verdicts_given(checked: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`check_claims` that a test decided: holds, fails or inconclusive
    (neither not testable nor excepted by the paper), against two models of which neither
    collapsed (a verdict against a collapsed model is no support: :func:`collapsed_verdicts`)."""
    return checked[checked["verdict"].isin(TESTED) & ~_collapsed_rows(checked)]


def collapsed_verdicts(checked: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`check_claims` that a test decided against a model that collapsed in
    our runs (``collapsed``): marked :data:`COLLAPSE_SYMBOL`, not counted as support."""
    return checked[checked["verdict"].isin(TESTED) & _collapsed_rows(checked)]


def _collapsed_rows(checked: pd.DataFrame) -> pd.Series:
    """The ``collapsed`` column as booleans (False for a table without it: a user's claims)."""
    if "collapsed" not in checked:
        return pd.Series(False, index=checked.index)
    return checked["collapsed"].astype(bool)


def claim_methods(key: str, claims: Sequence[Claim] = CLAIMS) -> tuple[str, str]:
    """The method ids of the two models of the claim ``key`` (``"DKM^p + KM"`` is ``dkm-p``)."""
    claim = next((c for c in claims if c.key == key), None)
    if claim is None:
        raise ValueError(f"no claim {key!r}; the claims are {[c.key for c in claims]}")
    return (paper.parse_model_label(claim.first).method,
            paper.parse_model_label(claim.second).method)


#: The two sources of :func:`two_source_grid`'s verdicts: the paper's figures and our runs.
SOURCES = ("paper", "ours")


def two_source_grid(checked: pd.DataFrame,
                    dataset_order: Sequence[str] | None = None) -> pd.DataFrame:
    """Each claim decided on the paper's own figures and on our runs, side by side.

    Rows are the claims' labels; columns, per dataset, the two :data:`SOURCES`. A cell holds
    one mark per metric of the claim, in its order: on the paper's figures the verdict of
    its own test (``paper_verdict``: ✓ or ✗, · where it excepts the cell); on our runs
    the verdict (:data:`VERDICT_SYMBOLS`), then whether the paper's difference agrees with ours
    given both standard errors (``size_agrees``, :data:`SIZE_SYMBOLS`), :data:`FLIP_SYMBOL` where the paper's unpaired test
    changes it and :data:`COLLAPSE_SYMBOL` where one of the models collapsed.
    """
    order = list(dataset_order or dict.fromkeys(checked["dataset"]))
    flipped = set(flips(checked).index)
    cells: dict[str, dict[tuple[str, str], str]] = {}
    for (label, dataset), rows in checked.groupby(["label", "dataset"], sort=False):
        theirs, ours = [], []
        for row in rows.itertuples():
            theirs.append(VERDICT_SYMBOLS[row.paper_verdict])
            ours.append("".join(_our_marks(row, flipped, sized=row.verdict in TESTED)))
        cells.setdefault(label, {})[(dataset, SOURCES[0])] = " ".join(theirs)
        cells[label][(dataset, SOURCES[1])] = " ".join(ours)
    columns = pd.MultiIndex.from_tuples([(d, source) for d in order for source in SOURCES])
    grid = pd.DataFrame.from_dict(cells, orient="index")
    return grid.reindex(columns=columns).fillna("")


#: Marks of :func:`claims_table`: the paper's effect size agreeing with ours or not (both
#: standard errors, :func:`dkm.book.stats.effect_size_bound`), a
#: verdict that the paper's unpaired test would change, and a verdict against a model that
#: collapsed in our runs.
SIZE_SYMBOLS = {True: "●", False: "○"}
FLIP_SYMBOL = "‡"
COLLAPSE_SYMBOL = "⊘"


def flips(checked: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`check_claims` whose verdict the paper's unpaired Student's t-test
    would change (both tests deciding the claim)."""
    given = checked["verdict"].isin(TESTED) & checked["unpaired_verdict"].isin(TESTED)
    return checked[given & (checked["verdict"] != checked["unpaired_verdict"])]


def _our_marks(row: Any, flipped: set, sized: bool = True) -> list[str]:
    """The marks of our verdict on one claim's cell: the verdict (:data:`VERDICT_SYMBOLS`),
    where ``sized`` and it was tested whether the paper's difference agrees with ours
    (``size_agrees``, :data:`SIZE_SYMBOLS`), :data:`FLIP_SYMBOL` where the paper's unpaired test changes it
    (the row's index in ``flipped``) and :data:`COLLAPSE_SYMBOL` where a model collapsed."""
    return ([VERDICT_SYMBOLS[row.verdict]]
            + ([SIZE_SYMBOLS[bool(row.size_agrees)]] if sized else [])
            + ([FLIP_SYMBOL] if row.Index in flipped else [])
            + ([COLLAPSE_SYMBOL] if bool(getattr(row, "collapsed", False)) else []))


def _difference_text(ours: float, low: float, high: float, n: int, missing: str = "–") -> str:
    """Our mean paired difference ± the half-width of its interval, the difference alone
    without an interval, ``missing`` without pairs (:func:`claims_table`,
    :func:`dkm.book.analysis.verdict_table`)."""
    if n == 0:
        return missing
    half = (high - low) / 2
    return signed(ours) if math.isnan(half) else f"{signed(ours)} ± {half:.1f}"


def claims_table(checked: pd.DataFrame, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """:func:`check_claims` as a reader's table: one row per claim and dataset.

    Parameters
    ----------
    checked : pandas.DataFrame
        The output of :func:`check_claims`.
    names : mapping, optional
        Display names of the dataset ids, in the order the rows take
        (datasets not named keep their id and come last).

    Returns
    -------
    pandas.DataFrame
        Indexed by (claim text with typeset labels, dataset name, its spaces
        no-break spaces so that it stays on one line); columns
        ``("", "n")`` (most seed pairs of the row) and, per metric,
        ``(METRIC, "paper")`` (the paper's difference), ``(METRIC, "ours")``
        (mean ± half-width of the interval), where ``checked`` has them
        ``(METRIC, "δ")`` (the margin) and ``(METRIC, " ")`` (the
        verdict's symbol, :data:`VERDICT_SYMBOLS`, then, where ``checked`` has
        them, whether the paper's difference agrees with ours (``size_agrees``),
        :data:`SIZE_SYMBOLS`, :data:`FLIP_SYMBOL` where the paper's unpaired
        test changes the verdict and :data:`COLLAPSE_SYMBOL` where a model collapsed; the
        marks joined by no-break spaces). Cells of
        a metric the claim does not cover are empty.
    """
    names = dict(names or {})
    order = {name: i for i, name in enumerate(names)}
    flipped = set(flips(checked).index) if "unpaired_verdict" in checked else set()
    rows = []
    for key in dict.fromkeys(checked["claim"]):
        part = checked[checked["claim"] == key]
        groups = sorted(part.groupby("dataset", sort=False),
                        key=lambda group: order.get(group[0], len(order)))
        for dataset, cells in groups:
            row: dict[Any, Any] = {"claim": typeset(cells["text"].iloc[0]),
                                   "dataset": one_line(names.get(dataset, dataset)),
                                   ("", "n"): int(cells["n"].max())}
            for cell in cells.itertuples():
                metric = cell.metric.upper()
                row[(metric, "paper")] = signed(cell.paper)
                # no-break spaces around ±: a narrow column keeps the figure on one line
                row[(metric, "ours")] = one_line(
                    _difference_text(cell.ours, cell.low, cell.high, cell.n))
                if "margin" in checked:
                    row[(metric, "δ")] = f"{cell.margin:.1f}"
                row[(metric, " ")] = one_line(" ".join(_our_marks(
                    cell, flipped, sized="size_agrees" in checked and cell.n >= MIN_PAIRS)))
            rows.append(row)
    table = pd.DataFrame(rows).set_index(["claim", "dataset"]).fillna("")
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table
