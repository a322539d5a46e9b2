"""A variant against the protocol's runs of the same seeds, and against the paper."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dkm.book.ablations._studies import SCORE_SOURCES, STUDY_SEEDS, _score, describe, switches
from dkm.book.analysis import CLAIMS, Claim, paired_difference, signed
from dkm.data import paper_dataset
from dkm.protocol import paper, registry
from dkm.protocol.results import arithmetic_by_dataset


def compare(
    ablation: Iterable[Mapping[str, Any]],
    protocol: Iterable[Mapping[str, Any]],
    metric: str = "acc",
    split: str = "test",
    confidence: float = 0.95,
    against: Mapping[str, str] | None = None,
    of: str = "clusters",
) -> pd.DataFrame:
    """Each variant against the protocol's runs of the same method (or ``against``) and seeds.

    Parameters
    ----------
    ablation : iterable of dict
        Records of ablation runs.
    protocol : iterable of dict
        The protocol's records (any datasets; those of other configurations
        than the protocol's are ignored).
    metric : {"acc", "nmi", "ari"}
        The score compared, in percent.
    split : {"validation", "test"}
        The part of the split it is computed on.
    confidence : float
        Level of the paired t interval.
    against : mapping of str to str, optional
        The protocol method that an ablation method is compared with, for a
        method without protocol runs of its own (``{"dkm-pa": "dkm-p"}``,
        :attr:`Study.against`); another implementation of a paper's method
        is compared with that method (:attr:`dkm.protocol.registry.Method.paper_method`),
        any other with its own.
    of : {"clusters", "embedding"}
        Score the method's own clusters (the default), or k-means++ on its
        final embedding (the records' ``kmeans_on_embedding``; runs without it
        are left out): does a variant change the representation, or only the
        clusters the method reads from it?

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, method, variant): the protocol method it is
        compared ``against``, ``n`` seeds, the variant's mean, ``paired``
        (seeds that have a protocol run), the protocol's mean on those seeds,
        the mean difference and its t interval (NaN with fewer than two pairs).
    """
    if of not in SCORE_SOURCES:
        raise ValueError(f"of must be one of {sorted(SCORE_SOURCES)}, got {of!r}")
    ablation, protocol = list(ablation), list(protocol)
    arithmetic_by_dataset([*ablation, *protocol])  # a variant and its baseline, one arithmetic
    source = SCORE_SOURCES[of]
    against = dict(against or {})
    baseline: dict[tuple[str, str, str], dict[int, float]] = {}
    for r in protocol:
        if r.get(source) and not switches(r):
            key = (r["dataset"], r["method"], r["params"]["data_fingerprint"])
            baseline.setdefault(key, {})[r["seed"]] = _score(r, metric, split, of)
    groups: dict[tuple[str, str, str, str], dict[int, float]] = {}
    for r in ablation:
        if r.get(source):
            key = (r["dataset"], r["method"], describe(switches(r)), r["params"]["data_fingerprint"])
            groups.setdefault(key, {})[r["seed"]] = _score(r, metric, split, of)
    rows = []
    for (dataset, method, variant, fingerprint), scores in sorted(groups.items()):
        ours = pd.Series(scores, dtype=float)
        reference = against.get(method, registry.get(method).reported_as or method)
        base = pd.Series(baseline.get((dataset, reference, fingerprint), {}), dtype=float)
        difference, low, high, paired = paired_difference(ours, base, confidence)
        rows.append({
            "dataset": dataset, "method": method, "variant": variant, "against": reference,
            "n": len(ours), "mean": ours.mean(), "paired": paired,
            "protocol mean": base[base.index.intersection(ours.index)].mean()
            if paired else np.nan,
            "difference": difference, "low": low, "high": high,
        })
    return pd.DataFrame(rows, columns=["dataset", "method", "variant", "against", "n", "mean",
                                       "paired", "protocol mean", "difference", "low", "high"])


def excludes_zero(comparison: pd.DataFrame) -> pd.Series:
    """Whether each row of a :func:`compare` table has a t interval that excludes 0.

    A row without an interval (fewer than two seed pairs) does not.
    """
    return (comparison["low"] > 0) | (comparison["high"] < 0)


def zero_nmi_variants(ablation: Iterable[Mapping[str, Any]],
                      protocol: Iterable[Mapping[str, Any]], seeds_needed: int = 2) -> pd.DataFrame:
    """The variants whose every run ends with a test NMI of 0: clusters that say nothing of the classes.

    Parameters
    ----------
    ablation, protocol : iterable of dict
        As for :func:`compare`.
    seeds_needed : int, default 2
        The fewest runs a variant needs to be listed.

    Returns
    -------
    pandas.DataFrame
        The rows of ``compare(ablation, protocol, metric="nmi")`` whose mean is 0.
    """
    nmi = compare(ablation, protocol, metric="nmi")
    return nmi[(nmi["mean"] == 0) & (nmi["n"] >= seeds_needed)]


def difference_text(row: Any, unit: str = "", seeds: bool = False) -> str:
    """A paired difference and its interval as text: ``+1.2 [−0.6, +3.0] points over 3 seeds``.

    Parameters
    ----------
    row : namedtuple or pandas.Series
        A row of :func:`compare` or :func:`step_effects`: ``difference``,
        ``low``, ``high`` and ``paired``.
    unit : str
        Written after the numbers (``"points"``); nothing by default.
    seeds : bool
        Also say on how many seed pairs: ``over 3 seeds``, or ``on one seed``
        for a row without an interval.

    Returns
    -------
    str
        The signed difference with one decimal, then its interval where the
        row has one.
    """
    has_interval = bool(np.isfinite(row.low))
    text = signed(row.difference) + (f" {_interval_text(row.low, row.high)}" if has_interval else "")
    text += f" {unit}" if unit else ""
    if seeds:
        text += f" over {row.paired} seeds" if has_interval else " on one seed"
    return text


def paired_difference_text(difference: tuple[float, float, float, int], unit: str = "",
                           seeds: bool = False) -> str:
    """:func:`difference_text` of :func:`dkm.book.analysis.paired_difference`'s result, the
    tuple ``(mean, low, high, pairs)``."""
    mean, low, high, pairs = difference
    return difference_text(pd.Series({"difference": mean, "low": low, "high": high,
                                      "paired": pairs}), unit, seeds)


def _bound_text(value: float) -> str:
    """An interval's end with one decimal, or as many more (up to three) as keep a nonzero end
    from reading as 0.0: ``−0.01``, not ``−0.0``, for a bound that just excludes zero."""
    decimals = 1
    while value != 0 and round(value, decimals) == 0 and decimals < 3:
        decimals += 1
    return signed(value, decimals)


def _interval_text(low: float, high: float) -> str:
    return f"[{_bound_text(low)}, {_bound_text(high)}]"


def agreement_by_dataset(verdicts: pd.DataFrame, methods: Sequence[str] = (),
                         seeds_needed: int = len(STUDY_SEEDS)) -> pd.DataFrame:
    """Per dataset of a :func:`paper_verdicts` table, whether every verdict is consistent.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        A :func:`paper_verdicts` table.
    methods : sequence of str, optional
        The methods each dataset should have verdicts for; a dataset that
        lacks one of them counts 0 seeds.

    seeds_needed : int, optional
        The runs a row needs for its dataset to be complete (by default the
        ablations' seeds, :data:`STUDY_SEEDS`).

    Returns
    -------
    pandas.DataFrame
        Indexed by dataset, in order of appearance: ``seeds``, the fewest runs
        behind any of its rows (0 when a method of ``methods`` has none),
        ``consistent``, whether every row of the dataset agrees with the paper,
        and ``complete``, whether ``seeds`` reaches ``seeds_needed``.
    """
    by_dataset = verdicts.groupby("dataset", sort=False)
    seeds = by_dataset["n"].min().astype(int)
    if methods:
        lacking = by_dataset["method"].agg(lambda ran: bool(set(methods) - set(ran)))
        seeds[lacking] = 0
    return pd.DataFrame({"seeds": seeds,
                         "consistent": by_dataset["verdict"].agg(
                             lambda v: bool((v == "consistent").all())),
                         "complete": seeds >= seeds_needed})


def with_paper_figure(comparison: pd.DataFrame, metric: str = "acc",
                  table: str = "table1") -> pd.DataFrame:
    """A :func:`compare` table with the paper's figure (``paper``) and ``against paper``.

    ``against paper`` is the variant's mean minus the paper's mean; a variant
    of a paper's dataset takes that dataset's figure, another implementation
    of a paper's method that method's.
    """
    figures = [paper.reported(table, method, paper_dataset(dataset), metric)[0]
               for dataset, method in zip(comparison["dataset"], comparison["method"])]
    return comparison.assign(paper=pd.Series(figures, index=comparison.index, dtype=float),
                             **{"against paper": lambda f: f["mean"] - f["paper"]})


def paper_margins(comparison: pd.DataFrame, metric: str = "acc",
                  claims: Sequence[Claim] = CLAIMS, family: str | None = None) -> pd.DataFrame:
    """How much of the paper's margin over a method a variant of that method accounts for.

    Each row of ``comparison`` (:func:`compare`) sets a variant, e.g. the DKM
    authors' DCN, against the protocol's runs of the method it stands for
    (``against``). Where the paper claims another model better than that
    method (``DKM^p`` over ``DCN^p``), its margin is the difference of the two
    figures it reports. Had the paper's figure of the method come from the
    variant, the protocol's mean minus the variant's, its ``gap``, is the part
    of that margin that the variant, not the model, accounts for.

    Parameters
    ----------
    comparison : pandas.DataFrame
        Rows of :func:`compare`.
    metric : {"acc", "nmi"}
        The metric ``comparison`` compares.
    claims : sequence of Claim
        The paper's claims (:data:`dkm.book.analysis.CLAIMS`); those that a model
        is ``"better"`` than the method compared with give the margins.
    family : str, optional
        Only the margins of the models of this family of
        :data:`dkm.protocol.registry.METHODS` (``"dkm"``: Deep k-Means over DCN).

    Returns
    -------
    pandas.DataFrame
        One row per row of ``comparison`` and claim against its method:
        ``dataset``, ``method``, ``against``, ``claim`` (its key), ``over``
        (the paper's label of the better model), ``margin`` (the paper's,
        points), ``gap`` (points) with the paired interval ``gap_low``,
        ``gap_high`` (NaN with fewer than two pairs), and ``share``
        (``gap / margin``).
    """
    rows = []
    for row in comparison.itertuples():
        label = registry.get(row.against).label
        dataset = paper_dataset(row.dataset)
        for claim in claims:
            if (claim.second != label or claim.kind != "better" or metric not in claim.metrics
                    or family not in (None, registry.get(paper.method_id(claim.first)).family)):
                continue
            margin = (paper.reported(claim.table, claim.first, dataset, metric)[0]
                      - paper.reported(claim.table, claim.second, dataset, metric)[0])
            rows.append({"dataset": row.dataset, "method": row.method, "against": row.against,
                         "claim": claim.key, "over": claim.first, "margin": margin,
                         "gap": -row.difference, "gap_low": -row.high, "gap_high": -row.low,
                         "share": -row.difference / margin})
    return pd.DataFrame(rows, columns=["dataset", "method", "against", "claim", "over", "margin",
                                       "gap", "gap_low", "gap_high", "share"])


def margin_claim(row: Any, fmt: str = "html") -> str:
    """The paper's claim behind a row of :func:`paper_margins`, typeset: ``DKM^p over DCN^p``.

    ``fmt`` is a format of :func:`dkm.book.tables.typeset`.
    """
    from dkm.book.tables import typeset

    return typeset(f"{row.over} over {registry.get(row.against).label}", fmt)


def paper_verdicts(records: Iterable[Mapping[str, Any]], metrics: Sequence[str] = ("acc", "nmi"),
                   split: str = "test", table: str = "table1") -> pd.DataFrame:
    """Each variant's runs against the paper's figure of its method (:func:`dkm.book.stats.compare_with_paper`).

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, method, variant, metric): ``n`` runs, their
        ``mean``, the paper's ``paper mean`` and ``paper std``, and the
        ``verdict``.
    """
    from dkm.book.stats import compare_with_paper

    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("metrics"):
            groups.setdefault((r["dataset"], r["method"], describe(switches(r))), []).append(r)
    rows = []
    for (dataset, method, variant), runs in sorted(groups.items()):
        for metric in metrics:
            scores = [_score(r, metric, split) for r in runs]
            mean, std, n = paper.reported(table, method, paper_dataset(dataset), metric)
            rows.append({"dataset": dataset, "method": method, "variant": variant,
                         "metric": metric, "n": len(scores), "mean": float(np.mean(scores)),
                         "paper mean": mean, "paper std": std,
                         "verdict": compare_with_paper(scores, mean, std, n).verdict})
    return pd.DataFrame(rows, columns=["dataset", "method", "variant", "metric", "n", "mean",
                                       "paper mean", "paper std", "verdict"])


_SIGNED = ("difference", "against paper")


def table_view(comparison: pd.DataFrame, columns: Sequence[str], fmt: str = "html") -> pd.DataFrame:
    """A comparison ready to show: labels typeset, one decimal, the interval as text.

    Parameters
    ----------
    comparison : pandas.DataFrame
        A table of :func:`compare` (or :func:`with_paper_figure`).
    columns : sequence of str
        The columns shown, in order; ``"interval"`` is the t interval of the
        difference, with a no-break space so that a table keeps it on one line
        (``"–"`` where there is none), and ``"difference [95 %]"`` the difference
        followed by its interval (:func:`difference_text`), on one line.
    fmt : str
        A format of :func:`dkm.book.tables.typeset` for the method labels. In
        ``"html"`` the labels of the methods and datasets also keep to one line
        (no-break spaces).

    Returns
    -------
    pandas.DataFrame
        Text cells; numbers with one decimal, differences signed, NaN as ``"–"``.
    """
    from dkm.book.tables import one_line, typeset

    def label_text(text: str) -> str:
        return one_line(text) if fmt == "html" else text

    def label(method: str) -> str:
        return label_text(typeset(registry.get(method).label, fmt))

    def number(value: float, with_sign: bool) -> str:
        return "–" if np.isnan(value) else signed(value) if with_sign else f"{value:.1f}"

    shown = comparison.assign(
        method=comparison["method"].map(label), against=comparison["against"].map(label),
        dataset=[label_text(paper.dataset_label(paper_dataset(d))) for d in comparison["dataset"]],
        interval=[one_line(_interval_text(lo, hi)) if np.isfinite(lo) else "–"
                  for lo, hi in zip(comparison["low"], comparison["high"])],
        **{"difference [95 %]": [one_line(difference_text(row))
                                 if np.isfinite(row.difference) else "–"
                                 for row in comparison.itertuples()]})
    for column in columns:
        if shown[column].dtype.kind == "f":
            shown[column] = [number(v, column in _SIGNED) for v in shown[column]]
    return shown[list(columns)]
