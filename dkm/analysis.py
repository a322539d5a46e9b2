"""The paper's claims, tested on the records: same-seed paired differences and verdicts.

The paper's "Clustering results" section and its supplement make comparative
claims ("DKM^a markedly outperforms DCN^np on all datasets"). Each claim is
here a :class:`Claim`: two of the paper's models, the datasets it covers, and
the kind of comparison. :func:`check_claims` confronts it with the records: for
every dataset and metric, the difference of the two models' scores on the same
seeds (same initial network, minibatches and pretraining, so the pair
removes what the seeds share), its mean and t interval, the difference of the
paper's published means, and a verdict:

``reproduced``
    a "better" claim whose interval lies above 0; an "on par" claim whose
    interval contains 0; a "not worse" claim whose interval reaches above 0.
``not reproduced``
    otherwise, with at least :data:`MIN_PAIRS` seed pairs.
``not testable``
    the dataset is not in the records (RCV1), or fewer seed pairs than
    :data:`MIN_PAIRS`.

The runs of a model are those the result tables use (:mod:`dkm.tables`): the
method's records for the dataset and distance at the trade-off value with the
best mean validation ACC, which for the protocol's stores is the paper's own
value.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats as _scipy_stats

from dkm import paper
from dkm.data import paper_dataset
from dkm.results import config_hash, records_to_dataframe
from dkm.tables import selected_tradeoff, typeset

__all__ = ["Claim", "CLAIMS", "VERDICTS", "VERDICT_SYMBOLS", "MIN_PAIRS", "seed_scores",
           "paired_difference", "check_claims", "verdict_grid", "coverage", "on_paper_dataset", "check_runs", "check_gap", "variant_effect",
           "claims_table", "search_records", "paper_tradeoff", "search_curves"]

#: Verdicts of a claim on one dataset and metric.
VERDICTS = ("reproduced", "not reproduced", "not testable")
#: Fewest same-seed pairs for an interval (and a verdict).
MIN_PAIRS = 3
ClaimKind = Literal["better", "on par", "not worse"]
_SPLIT_PREFIXES = {"validation": "val", "test": "test"}


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
        The paper's table with both models' figures (:func:`dkm.paper.reported`).
    metrics : tuple of str
        The metrics the claim covers.
    """

    key: str
    text: str
    first: str
    second: str
    kind: ClaimKind
    datasets: tuple[str, ...]
    table: str
    metrics: tuple[str, ...] = ("acc", "nmi")


_ALL = ("mnist", "usps", "20news", "rcv1")
_NOT_RCV1 = ("mnist", "usps", "20news")

#: The comparative claims of the paper's "Clustering results" section and supplement.
CLAIMS: tuple[Claim, ...] = (
    Claim("dkm-a>dcn-np", "without pretraining, DKM^a markedly outperforms DCN^np on all datasets",
          "DKM^a", "DCN^np", "better", _ALL, "table1"),
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
          "(except MNIST NMI)", "DKM^p", "IDEC^p", "not worse", _ALL, "table2"),
    Claim("dkm-p+km>ae-km", "k-means on DKM^p's embedding beats k-means on the autoencoder's",
          "DKM^p + KM", "AE-KM", "better", _ALL, "friendliness"),
    Claim("dkm-p+km>=dcn-p+km", "DKM^p's embedding is the most k-means-friendly "
          "(not worse than DCN^p's)", "DKM^p + KM", "DCN^p + KM", "not worse", _ALL,
          "friendliness"),
    Claim("dkm-a-ce>ee", "on 20NEWS, DKM^a with the cosine distance beats the euclidean one "
          "(ACC)", "DKM^a_ce", "DKM^a_ee", "better", ("20news",), "cosine", ("acc",)),
)


def seed_scores(frame: pd.DataFrame, model: str, dataset: str, metric: str,
                split: str = "test") -> pd.Series:
    """One model's scores by seed (percent), at the selected trade-off value.

    Parameters
    ----------
    frame : pandas.DataFrame
        Records as :func:`dkm.results.records_to_dataframe` gives them.
    model : str
        The paper's label (``"DKM^p"``, ``"DKM^a_ce"``, ``"DCN^p + KM"``).
    dataset : str
        Dataset id as the records name it (``"usps-sharp"`` included).
    metric : {"acc", "nmi", "ari"}
    split : {"validation", "test"}

    Returns
    -------
    pandas.Series
        Indexed by seed, sorted; empty when there is no run.
    """
    ref = paper.parse_model_label(model)
    runs = frame[(frame["method"] == ref.method) & (frame["dataset"] == dataset)
                 & (frame["distance"] == (ref.distance or "euclidean"))]
    chosen = selected_tradeoff(runs)
    if not math.isnan(chosen):
        runs = runs[runs["tradeoff"] == chosen]
    column = f"{'km_' if ref.kmeans_on_embedding else ''}{_SPLIT_PREFIXES[split]}_{metric}"
    scores = runs.set_index("seed")[column].dropna() * 100
    return scores[~scores.index.duplicated(keep="last")].sort_index()


def paired_difference(first: pd.Series, second: pd.Series,
                      confidence: float = 0.95) -> tuple[float, float, float, int]:
    """Mean of ``first − second`` over their common seeds, its t interval and the pairs.

    Returns
    -------
    mean, low, high : float
        NaN when there are no pairs; the interval is NaN with fewer than two.
    n : int
        Number of seed pairs.
    """
    common = first.index.intersection(second.index)
    differences = (first[common] - second[common]).to_numpy(dtype=float)
    n = len(differences)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(differences.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    half = float(_scipy_stats.t.ppf(0.5 + confidence / 2, n - 1)
                 * differences.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half, n


def _verdict(kind: ClaimKind, low: float, high: float, n: int) -> str:
    if n < MIN_PAIRS or math.isnan(low):
        return "not testable"
    holds = {"better": low > 0, "on par": low <= 0 <= high, "not worse": high >= 0}[kind]
    return "reproduced" if holds else "not reproduced"


def check_claims(
    records: Iterable[Mapping[str, Any]],
    claims: Sequence[Claim] = CLAIMS,
    datasets: Sequence[str] | None = None,
    confidence: float = 0.95,
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
        Level of the paired t interval.

    Returns
    -------
    pandas.DataFrame
        One row per (claim, dataset, metric): ``claim`` (key), ``text``,
        ``kind``, ``dataset``, ``metric``, ``paper`` (the difference of the
        paper's means, points), ``ours``, ``low``, ``high`` (same-seed mean
        difference and interval, points), ``n`` (seed pairs) and ``verdict``.
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
            for metric in claim.metrics:
                published = (paper.reported(claim.table, claim.first, paper_dataset(dataset), metric)[0]
                             - paper.reported(claim.table, claim.second, paper_dataset(dataset),
                                              metric)[0])
                mean, low, high, n = paired_difference(
                    seed_scores(frame, claim.first, dataset, metric),
                    seed_scores(frame, claim.second, dataset, metric), confidence)
                rows.append({"claim": claim.key, "text": claim.text, "kind": claim.kind,
                             "dataset": dataset, "metric": metric, "paper": round(published, 1),
                             "ours": mean, "low": low, "high": high, "n": n,
                             "verdict": _verdict(claim.kind, low, high, n)})
    return pd.DataFrame(rows, columns=["claim", "text", "kind", "dataset", "metric", "paper",
                                       "ours", "low", "high", "n", "verdict"])


#: Symbols of the verdicts in :func:`verdict_grid`.
VERDICT_SYMBOLS = {"reproduced": "✓", "not reproduced": "✗", "not testable": "–"}


def verdict_grid(checked: pd.DataFrame, dataset_order: Sequence[str] | None = None) -> pd.DataFrame:
    """The verdicts of :func:`check_claims` at a glance: claims × datasets.

    Each cell holds one symbol per metric of the claim, in the claim's order
    (:data:`VERDICT_SYMBOLS`), e.g. ``"✓ ✗"`` for ACC reproduced and NMI
    not; empty where the paper does not make the claim for the dataset.
    """
    order = list(dataset_order or dict.fromkeys(checked["dataset"]))
    cells: dict[str, dict[str, str]] = {}
    for (text, dataset), rows in checked.groupby(["text", "dataset"], sort=False):
        cells.setdefault(text, {})[dataset] = " ".join(VERDICT_SYMBOLS[v] for v in rows["verdict"])
    grid = pd.DataFrame.from_dict(cells, orient="index").reindex(columns=order)
    return grid.fillna("")


def _difference_text(ours: float, low: float, high: float, n: int) -> str:
    """Our mean paired difference ± the half-width of its interval ("–" without pairs)."""
    if n == 0:
        return "–"
    half = (high - low) / 2
    return f"{ours:+.1f}" if math.isnan(half) else f"{ours:+.1f} ± {half:.1f}"


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
        Indexed by (claim text with typeset labels, dataset name); columns
        ``("", "n")`` (most seed pairs of the row) and, per metric,
        ``(METRIC, "paper")`` (the paper's difference), ``(METRIC, "ours")``
        (mean ± half-width of the interval) and ``(METRIC, " ")`` (the
        verdict's symbol, :data:`VERDICT_SYMBOLS`). Cells of a metric the
        claim does not cover are empty.
    """
    names = dict(names or {})
    order = {name: i for i, name in enumerate(names)}
    rows = []
    for key in dict.fromkeys(checked["claim"]):
        part = checked[checked["claim"] == key]
        groups = sorted(part.groupby("dataset", sort=False),
                        key=lambda group: order.get(group[0], len(order)))
        for dataset, cells in groups:
            row: dict[Any, Any] = {"claim": typeset(cells["text"].iloc[0]),
                                   "dataset": names.get(dataset, dataset),
                                   ("", "n"): int(cells["n"].max())}
            for cell in cells.itertuples():
                metric = cell.metric.upper()
                row[(metric, "paper")] = f"{cell.paper:+.1f}"
                row[(metric, "ours")] = _difference_text(cell.ours, cell.low, cell.high, cell.n)
                row[(metric, " ")] = VERDICT_SYMBOLS[cell.verdict]
            rows.append(row)
    table = pd.DataFrame(rows).set_index(["claim", "dataset"]).fillna("")
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table


def search_records(records: Iterable[Mapping[str, Any]], dataset: str, methods: Sequence[str],
                   seeds: Sequence[int] | None = None,
                   scale: float | None = None) -> list[dict[str, Any]]:
    """The Euclidean records of a line search, restricted to a dataset, methods, seeds, scale.

    Parameters
    ----------
    records : iterable of dict
        Run records (e.g. ``ResultsStore(path).records()``).
    dataset : str
    methods : sequence of str
    seeds : sequence of int, optional
        Keep only these seeds (all by default).
    scale : float, optional
        Keep only runs at this data scale (all by default).

    Returns
    -------
    list of dict
    """
    return [dict(r) for r in records
            if r["dataset"] == dataset and r["method"] in methods
            and r["params"].get("distance", "euclidean") == "euclidean"
            and (seeds is None or r["seed"] in seeds)
            and (scale is None or r["params"].get("scale") == scale)]


def paper_tradeoff(method: str, dataset: str) -> float:
    """The paper's validation-optimal λ or γ for a method, NaN where it gives none (DKM^pa)."""
    try:
        return paper.optimal_tradeoff(method, dataset)
    except ValueError:
        return math.nan


def search_curves(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation and count of validation and test ACC per (method, trade-off).

    ``frame`` is :func:`dkm.results.records_to_dataframe` of a line search.
    """
    return frame.groupby(["method", "tradeoff"])[["val_acc", "test_acc"]].agg(
        ["mean", "std", "count"])


def coverage(records: Iterable[Mapping[str, Any]], methods: Sequence[str],
             seeds: Sequence[int] = paper.PAPER_SEEDS) -> pd.DataFrame:
    """How many of ``seeds`` each dataset × method has a scored record for.

    Records of several trade-off values or distances count a seed once.
    """
    seen: dict[tuple[str, str], set[int]] = {}
    for r in records:
        if r.get("metrics") and r["seed"] in seeds:
            seen.setdefault((r["dataset"], r["method"]), set()).add(r["seed"])
    datasets = list(dict.fromkeys(d for d, _ in seen))
    return pd.DataFrame([[len(seen.get((d, m), ())) for m in methods] for d in datasets],
                        index=datasets, columns=list(methods))


def on_paper_dataset(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Copies of records of a data variant, named as their paper dataset.

    The result tables (:mod:`dkm.tables`) have one column per paper dataset;
    this lets them show a variant's runs (``"usps-sharp"``) in that column, on
    its own. The copies' ``config_hash`` is recomputed for the new name, so
    they validate; they are a view for tables, not records to store.
    """
    copies = []
    for record in records:
        copy = dict(record, dataset=paper_dataset(record["dataset"]))
        copy["config_hash"] = config_hash(copy["dataset"], copy["method"], copy["seed"],
                                          copy["params"])
        copies.append(copy)
    return copies


def check_runs(name: str, directory: str | Path = "benchmarks/results") -> list[dict[str, Any]]:
    """The runs of a check script (``benchmarks/check_*.py``), read from ``<directory>/<name>.jsonl``.

    Returns an empty list when the file does not exist.
    """
    path = Path(directory) / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def check_gap(runs: Iterable[Mapping[str, Any]], changed: Mapping[str, Any],
              reference: Mapping[str, Any], metric: str = "acc") -> pd.Series:
    """Per seed, a check run's test score with ``changed`` minus the run with ``reference``.

    Check runs name what they changed against the protocol in ``changed``;
    seeds lacking either run are left out.
    """
    def by_seed(setting):
        return {r["seed"]: r["test"][metric] for r in runs if r.get("changed") == dict(setting)}

    first, second = by_seed(changed), by_seed(reference)
    return pd.Series({s: first[s] - second[s] for s in sorted(first) if s in second}, dtype=float)


def variant_effect(records: Iterable[Mapping[str, Any]], dataset: str, variant: str,
                   models: Sequence[str], metric: str = "acc",
                   confidence: float = 0.95) -> pd.DataFrame:
    """How much a data variant moves each model, seed by seed.

    Parameters
    ----------
    records : iterable of dict
        Records of both datasets.
    dataset, variant : str
        The two dataset ids (``"usps"``, ``"usps-sharp"``).
    models : sequence of str
        The paper's labels of the models.
    metric : {"acc", "nmi", "ari"}
    confidence : float

    Returns
    -------
    pandas.DataFrame
        Indexed by model: the mean score on each dataset over the seeds both
        have, the mean of ``dataset − variant`` over those seeds, its t
        interval and the number of seeds.
    """
    frame = records_to_dataframe(list(records)).drop_duplicates("config_hash", keep="last")
    rows = {}
    for model in models:
        first, second = seed_scores(frame, model, dataset, metric), \
            seed_scores(frame, model, variant, metric)
        mean, low, high, n = paired_difference(first, second, confidence)
        common = first.index.intersection(second.index)
        rows[model] = {dataset: first[common].mean(), variant: second[common].mean(),
                       "difference": mean, "low": low, "high": high, "n": n}
    return pd.DataFrame.from_dict(rows, orient="index")
