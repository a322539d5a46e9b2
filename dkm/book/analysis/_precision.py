"""Runs in another precision of the products (``bfloat16``) beside the float32 records of the
same seeds: what the precision changes."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from dkm.book.analysis._paired import paired_difference, seed_scores
from dkm.protocol.results import records_to_dataframe

PRECISION_EFFECT_COLUMNS = ["model", "metric", "n", "reference", "reference_sd", "other",
                            "other_sd", "difference", "low", "high", "within_spread"]


def precision_effect(reference: Iterable[Mapping[str, Any]], other: Iterable[Mapping[str, Any]],
                     dataset: str, models: Sequence[str],
                     metrics: Sequence[str] = ("acc", "nmi", "ari"),
                     confidence: float = 0.95) -> pd.DataFrame:
    """How much another precision moves each model, seed by seed.

    Parameters
    ----------
    reference, other : iterable of dict
        The float32 records and the other precision's (two stores: a record's
        precision is one of its parameters, so both may hold the same seeds).
    dataset : str
        The dataset id as the records name it.
    models : sequence of str
        The paper's labels of the models.
    metrics : sequence of {"acc", "nmi", "ari"}
    confidence : float

    Returns
    -------
    pandas.DataFrame
        One row per model and metric, over the seeds both stores have (``n``): the
        mean and sd of each store's test scores (%), the mean of ``other −
        reference`` and its t interval (points), and ``within_spread``: whether
        that mean difference is no larger, in size, than the reference's
        seed-to-seed sd.
    """
    first, second = _frame(reference), _frame(other)
    rows = []
    for model in models:
        for metric in metrics:
            before = seed_scores(first, model, dataset, metric)
            after = seed_scores(second, model, dataset, metric)
            mean, low, high, n = paired_difference(after, before, confidence)
            common = before.index.intersection(after.index)
            spread = before[common].std(ddof=1)
            rows.append({"model": model, "metric": metric, "n": n,
                         "reference": before[common].mean(), "reference_sd": spread,
                         "other": after[common].mean(), "other_sd": after[common].std(ddof=1),
                         "difference": mean, "low": low, "high": high,
                         "within_spread": bool(abs(mean) <= spread)})
    return pd.DataFrame(rows, columns=PRECISION_EFFECT_COLUMNS)


def seed_differences(reference: Iterable[Mapping[str, Any]], other: Iterable[Mapping[str, Any]],
                     dataset: str, model: str, metric: str = "acc") -> pd.Series:
    """``other − reference``, seed by seed: the differences :func:`precision_effect` averages.

    Parameters
    ----------
    reference, other : iterable of dict
        The float32 records and the other precision's.
    dataset : str
        The dataset id as the records name it.
    model : str
        The paper's label of the model.
    metric : {"acc", "nmi", "ari"}

    Returns
    -------
    pandas.Series
        Test-score differences in points, indexed by the seeds both stores have, sorted.
    """
    return (seed_scores(_frame(other), model, dataset, metric)
            - seed_scores(_frame(reference), model, dataset, metric)).dropna()


def _frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A store's records as a frame, a configuration stored twice counted once (its last)."""
    return records_to_dataframe(list(records)).drop_duplicates("config_hash", keep="last")
