"""The paper's questions on a dataset it did not use: scores over seeds, the claims, the run drawn.

The page on a reader's data runs the protocol on any file; these functions read its records
as the results chapter reads the paper's datasets, without the paper's figures. :func:`method_scores` gives each model's mean,
standard deviation and Student's t interval over the seeds; :func:`check_claims_on_data` tests
the paper's claims (:data:`DATA_CLAIMS`) at the margin of :func:`spread_margin`, and
:func:`verdict_table` sets the verdicts out for a reader. :func:`embedding_run` picks the run
whose embedding a page draws (:func:`plane_view` projects it to the plane) and
:func:`cluster_shares` the share of the points each cluster holds. :func:`search_reference`
names the paper's dataset whose λ or γ a line search on the data is compared with.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from dkm.book.analysis._claims import (CLAIMS, MIN_PAIRS, Claim, MarginRule, _difference_text,
                                       _tested)
from dkm.book.analysis._paired import seed_scores
from dkm.book.embeddings import tsne_projection
from dkm.book.snapshots import sample_points
from dkm.book.stats import detectable_difference, mean_interval
from dkm.book.tables.cells import records_frame, selected_runs
from dkm.data import paper_dataset
from dkm.protocol import paper, registry
from dkm.protocol.results import METRICS

#: The runs of each model behind the paper's figures, the ``n`` of its Student's t-test.
PAPER_RUNS = 10
#: The smallest margin of :func:`spread_margin`, in points: the paper prints its figures to 0.1.
MARGIN_FLOOR = 0.1
#: The claims a run of the protocol on any data can test: those between models of the
#: Euclidean distance (not the 20NEWS claim on the cosine distance).
DATA_CLAIMS: tuple[Claim, ...] = tuple(
    claim for claim in CLAIMS
    if all(paper.parse_model_label(model).distance in (None, "euclidean")
           for model in (claim.first, claim.second)))
#: The columns of :func:`check_claims_on_data`: those of :func:`check_claims` but the paper's.
DATA_CLAIM_COLUMNS = ["claim", "text", "label", "kind", "dataset", "metric", "ours", "low", "high",
                      "n", "margin", "verdict", "unpaired_low", "unpaired_high", "unpaired_verdict"]
#: The columns of :func:`method_scores`.
METHOD_SCORE_COLUMNS = ["model", "method", "metric", "mean", "std", "n", "low", "high"]


def _models(frame: pd.DataFrame) -> list[str]:
    """The paper's labels of the models the records hold, in the registry's order: each method,
    then k-means on its embedding where the protocol runs it."""
    present = set(frame["method"])
    models = []
    for method in (m for m in registry.ids() if m in present):
        models.append(paper.METHOD_LABELS[method])
        if registry.get(method).kmeans_on_embedding:
            models.append(paper.model_label(method, kmeans_on_embedding=True))
    return models


def method_scores(records: Iterable[Mapping[str, Any]], dataset: str,
                  confidence: float = 0.95) -> pd.DataFrame:
    """Each model's test scores over the seeds: mean, standard deviation and t interval.

    The runs of a method are those the tables use (its records of ``dataset`` at the
    Euclidean distance, at the trade-off value with the best mean validation ACC); its model
    ``"DCN^p + KM"`` is k-means on its final embedding.

    Parameters
    ----------
    records : iterable of dict
    dataset : str
        The dataset id of the records to read.
    confidence : float
        Level of Student's t interval of the mean.

    Returns
    -------
    pandas.DataFrame
        One row per model and metric with a score, in the registry's order of the methods,
        with the columns :data:`METHOD_SCORE_COLUMNS`: ``model`` (the paper's label),
        ``method`` (id), ``metric`` (``"acc"``, ``"nmi"``, ``"ari"``), ``mean``, ``std``
        (sample standard deviation, NaN for one seed), ``n`` (seeds), ``low`` and ``high``
        (NaN for one seed), in percent. Empty for unlabelled records.
    """
    frame = records_frame(records)
    frame = frame[frame["dataset"] == dataset]
    rows = []
    for model in _models(frame):
        for metric in METRICS:
            scores = seed_scores(frame, model, dataset, metric)
            if scores.empty:
                continue
            mean, low, high = mean_interval(scores.to_numpy(), confidence)
            rows.append({"model": model, "method": paper.method_id(model), "metric": metric,
                         "mean": mean, "std": scores.std(ddof=1) if len(scores) > 1 else math.nan,
                         "n": len(scores), "low": low, "high": high})
    return pd.DataFrame(rows, columns=METHOD_SCORE_COLUMNS)


def spread_margin(records: Iterable[Mapping[str, Any]], runs: int = PAPER_RUNS) -> MarginRule:
    """The margin rule of :func:`paper_margin` for data the paper did not use: the records'
    own spread in place of the paper's.

    :func:`paper_margin` takes the smallest difference of two models' means that the paper's
    test, Student's two-sample t-test at 5 % on 10 runs of each, could call significant given
    the standard deviations the paper reports for them. Here the standard deviations are the
    two models' over the seeds of the records (sample standard deviation, in points) and the
    runs stay the paper's 10 whatever the number of seeds run, so that more seeds narrow the
    interval a verdict reads without moving the margin:
    ``δ = t(0.975, 18) · sqrt((s₁² + s₂²) / 2) · sqrt(2 / 10)``, about 0.94 times the pooled
    standard deviation (:func:`dkm.book.stats.detectable_difference`), and at least
    :data:`MARGIN_FLOOR`.

    Parameters
    ----------
    records : iterable of dict
        The runs whose spread sets the margin.
    runs : int
        The runs per model of the test whose detectable difference is the margin.

    Returns
    -------
    callable
        ``margin(claim, dataset, metric)`` in points; NaN where a model of the claim has fewer
        than two seeds (its verdict is then "not testable" whatever the margin).
    """
    frame = records_frame(records)

    def margin(claim: Claim, dataset: str, metric: str) -> float:
        first, second = (seed_scores(frame, model, dataset, metric)
                         for model in (claim.first, claim.second))
        if min(len(first), len(second)) < 2:
            return math.nan
        return max(detectable_difference(first.std(ddof=1), second.std(ddof=1), runs),
                   MARGIN_FLOOR)

    return margin


def check_claims_on_data(
    records: Iterable[Mapping[str, Any]],
    dataset: str,
    claims: Sequence[Claim] = DATA_CLAIMS,
    confidence: float = 0.95,
    margin: MarginRule | None = None,
) -> pd.DataFrame:
    """The paper's claims on one dataset, any dataset: :func:`check_claims` without the paper's
    figures.

    Each claim is tested as :func:`check_claims` tests it (same-seed differences, their t
    interval, :func:`dkm.book.stats.claim_verdict`), on every metric it covers; the paper's
    exceptions, which name its datasets, do not apply.

    Parameters
    ----------
    records : iterable of dict
    dataset : str
        The dataset id of the records to test.
    claims : sequence of Claim
        By default :data:`DATA_CLAIMS`.
    confidence : float
        Level of the paired t interval.
    margin : callable, optional
        ``margin(claim, dataset, metric)`` in points; by default :func:`spread_margin` of
        the records.

    Returns
    -------
    pandas.DataFrame
        One row per claim and metric, the columns :data:`DATA_CLAIM_COLUMNS`; a claim whose
        models have fewer than :data:`MIN_PAIRS` common seeds (none where a method was not
        run) is "not testable".
    """
    records = list(records)
    frame = records_frame(records)
    margin = margin or spread_margin(records)
    rows = []
    for claim in claims:
        for metric in claim.metrics:
            tested = _tested(seed_scores(frame, claim.first, dataset, metric),
                             seed_scores(frame, claim.second, dataset, metric), claim.kind,
                             confidence, margin(claim, dataset, metric))
            rows.append({"claim": claim.key, "text": claim.text, "label": claim.label,
                         "kind": claim.kind, "dataset": dataset, "metric": metric, **tested})
    return pd.DataFrame(rows, columns=DATA_CLAIM_COLUMNS)


#: The caption of :func:`verdict_table`.
VERDICT_TABLE_CAPTION = (
    "Per claim and metric: the mean difference of the two models' test scores on the same "
    "seeds (the first model's minus the second's, in points) ± the half-width of its t "
    "interval, the margin δ and the verdict; seeds: the seed pairs the verdict rests on (it "
    f"needs {MIN_PAIRS}). >: better, ≈: on par, ≥: not worse.")


def verdict_table(checked: pd.DataFrame, title: str = "The paper's claims") -> pd.DataFrame:
    """The verdicts of one dataset's claims as a reader's table, one row per claim.

    Parameters
    ----------
    checked : pandas.DataFrame
        Rows of :func:`check_claims_on_data` (or of :func:`check_claims` for one dataset).
    title : str
        The table's title.

    Returns
    -------
    pandas.DataFrame
        Of text, for :func:`dkm.book.tables.render`: rows indexed by ``("", label)``, the
        claim's label in symbols (``"DKM^p > DCN^p"``); the column ``("", "seeds")`` (the most
        seed pairs of the row), then per metric ``(METRIC, "difference")`` (the mean same-seed
        difference, first model minus second, ± the half-width of its interval; "not run"
        without pairs), ``(METRIC, "margin")`` and ``(METRIC, "verdict")`` in words;
        ``attrs`` holds the title and :data:`VERDICT_TABLE_CAPTION`. No rows without claims.
    """
    rows: dict[tuple[str, str], dict[tuple[str, str], str]] = {}
    for row in checked.itertuples():
        cells = rows.setdefault(("", row.label), {("", "seeds"): "0"})
        cells[("", "seeds")] = str(max(int(row.n), int(cells[("", "seeds")])))
        metric = row.metric.upper()
        cells[(metric, "difference")] = _difference_text(row.ours, row.low, row.high, row.n,
                                                         missing="not run")
        cells[(metric, "margin")] = "–" if math.isnan(row.margin) else f"{row.margin:.1f}"
        cells[(metric, "verdict")] = row.verdict
    columns = list(dict.fromkeys(column for cells in rows.values() for column in cells))
    table = pd.DataFrame([[cells.get(column, "") for column in columns] for cells in rows.values()],
                         index=pd.MultiIndex.from_tuples(list(rows), names=["group", "claim"]),
                         columns=pd.MultiIndex.from_tuples(columns or [("", "seeds")]))
    table.attrs.update(title=title, caption=VERDICT_TABLE_CAPTION)
    return table


def embedding_run(records: Iterable[Mapping[str, Any]], dataset: str) -> dict[str, Any]:
    """The run whose embedding a page draws.

    Of a method's runs, those the tables use (Euclidean distance, the selected trade-off
    value). With labels: of the methods that learn an embedding, the one with the best mean
    test ACC, and of its seeds the one of median test ACC (the lower of the two middle ones
    for an even count), neither its best nor its worst. Without labels: DKM^p's run, or, where
    DKM^p was not run, that of the first method with an embedding in the registry's order; of
    the paper's seeds, the first one run.

    Raises
    ------
    ValueError
        When no record of ``dataset`` is of a method that learns an embedding.
    """
    records = [r for r in records if r["dataset"] == dataset]
    frame = records_frame(records)
    frame = frame[frame["distance"] == "euclidean"]
    deep = [m for m in registry.ids() if m in set(frame["method"]) and registry.get(m).embedding]
    if not deep:
        raise ValueError(f"no record of {dataset} is of a method that learns an embedding")
    runs = {m: selected_runs(frame[frame["method"] == m]) for m in deep}
    if frame["test_acc"].notna().any():
        method = max(deep, key=lambda m: runs[m]["test_acc"].mean())
        ranked = runs[method].sort_values(["test_acc", "seed"], kind="stable")
        chosen = ranked.iloc[(len(ranked) - 1) // 2]
    else:
        method = "dkm-p" if "dkm-p" in deep else deep[0]
        order = {seed: i for i, seed in enumerate(paper.PAPER_SEEDS)}
        chosen = min((run for _, run in runs[method].iterrows()),
                     key=lambda run: (order.get(run["seed"], len(order)), run["seed"]))
    return next(r for r in records if r["config_hash"] == chosen["config_hash"])


def plane_view(embedding: ArrayLike, n_points: int | None = 2_000) -> tuple[np.ndarray, np.ndarray]:
    """An embedding's points in the plane: t-SNE (:func:`dkm.book.embeddings.tsne_projection`)
    of at most ``n_points`` of them, the sample a snapshot keeps
    (:func:`dkm.book.snapshots.sample_points`).

    Returns
    -------
    rows : numpy.ndarray
        The sorted indices of the points drawn.
    projection : numpy.ndarray of shape (len(rows), 2)
    """
    embedding = np.asarray(embedding)
    rows = sample_points(len(embedding), n_points)
    return rows, tsne_projection(embedding[rows])


def cluster_shares(labels: Mapping[str, ArrayLike], n_clusters: int) -> pd.DataFrame:
    """The share of the points (percent) each cluster holds, largest first.

    Parameters
    ----------
    labels : mapping
        Model (or ``"true classes"``) -> the cluster of every point.
    n_clusters : int
        The clusters asked for: a model that leaves some empty holds 0 % in its last ones.

    Returns
    -------
    pandas.DataFrame
        One row per model, columns ``1, 2, …`` (the clusters by size, as many as the most
        groups of any row and at least ``n_clusters``).
    """
    counts = {model: np.sort(np.unique(np.asarray(groups), return_counts=True)[1])[::-1]
              for model, groups in labels.items()}
    width = max([n_clusters, *(len(c) for c in counts.values())])
    shares = {model: 100 * np.pad(c, (0, width - len(c))) / c.sum() for model, c in counts.items()}
    return pd.DataFrame.from_dict(shares, orient="index",
                                  columns=pd.RangeIndex(1, width + 1, name="cluster by size"))


def search_reference(dataset: str) -> str:
    """The paper's dataset whose λ or γ a line search on ``dataset`` is set beside: its own
    (a variant's paper dataset), or USPS for data the paper did not use, as the chapter on
    the line search does."""
    own = paper_dataset(dataset)
    return own if own in paper.DATASET_LABELS else "usps"
