"""A line search of λ or γ in the records: its runs, its curves and the paper's optimum."""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from dkm import paper


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
