"""Which runs a table uses: the records' flat frame and the validation-optimal λ or γ.

A record stored twice counts once; of a line search, the trade-off value with
the best mean validation ACC is selected (:func:`selected_tradeoff`,
:func:`selected_tradeoffs`).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from dkm.protocol.results import records_to_dataframe, validate_record


def _records_frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Validated records as a flat frame, one row per distinct ``config_hash``."""
    records = list(records)
    for record in records:
        validate_record(record)
    frame = records_to_dataframe(records)
    return frame.drop_duplicates("config_hash", keep="last")


def _runs_of(frame: pd.DataFrame, method: str, dataset: str, distance: str) -> pd.DataFrame:
    mask = (
        (frame["method"] == method)
        & (frame["dataset"] == dataset)
        & (frame["distance"] == distance)
    )
    return frame[mask]


def selected_tradeoff(runs: pd.DataFrame) -> float:
    """The trade-off value with the best mean validation ACC among ``runs``.

    Parameters
    ----------
    runs : pandas.DataFrame
        Rows of :func:`dkm.protocol.results.records_to_dataframe` for one method,
        dataset and distance.

    Returns
    -------
    float
        NaN when the runs carry no trade-off (KM, AE-KM), no validation ACC
        or no rows; ties go to the smaller value.
    """
    means = runs.groupby("tradeoff")["val_acc"].mean().dropna()
    return float(means.idxmax()) if len(means) else math.nan


#: Columns of :func:`selected_tradeoffs`, in order.
SELECTED_TRADEOFF_COLUMNS = (
    "dataset",
    "method",
    "distance",
    "tradeoff_name",
    "values",
    "selected",
    "runs",
    "val_acc",
    "test_acc",
)


def selected_tradeoffs(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The validation-optimal λ or γ of every line search in the records.

    The records are grouped by dataset, method and distance; in each group
    :func:`selected_tradeoff` picks the value with the best mean validation
    ACC (ties go to the smaller value), the choice the result tables make.

    Parameters
    ----------
    records : iterable of dict
        Run records (:mod:`dkm.protocol.results`); a record stored twice (same
        ``config_hash``) counts once. Records of methods without a
        trade-off (KM, AE-KM) are ignored.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, method, distance), sorted, with the columns
        :data:`SELECTED_TRADEOFF_COLUMNS`: ``tradeoff_name`` (``"lambda"``
        or ``"gamma"``), ``values`` (how many distinct values were run: 1
        means no line search), ``selected`` (NaN without validation
        labels), ``runs`` (the runs at the selected value) and ``val_acc``
        / ``test_acc`` (their mean ACC, fractions).

    Raises
    ------
    ValueError
        For an invalid record.
    """
    frame = _records_frame(records)
    frame = frame[frame["tradeoff"].notna()]
    rows = []
    for (dataset, method, distance), runs in frame.groupby(["dataset", "method", "distance"]):
        chosen = selected_tradeoff(runs)
        at_chosen = runs[runs["tradeoff"] == chosen]
        rows.append(
            {
                "dataset": dataset,
                "method": method,
                "distance": distance,
                "tradeoff_name": runs["tradeoff_name"].iloc[0],
                "values": int(runs["tradeoff"].nunique()),
                "selected": chosen,
                "runs": len(at_chosen),
                "val_acc": float(at_chosen["val_acc"].mean()) if len(at_chosen) else math.nan,
                "test_acc": float(at_chosen["test_acc"].mean()) if len(at_chosen) else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=list(SELECTED_TRADEOFF_COLUMNS))


def _selected_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs of the selected trade-off value (all runs when there is none)."""
    chosen = selected_tradeoff(runs)
    return runs if math.isnan(chosen) else runs[runs["tradeoff"] == chosen]


def _scale_label(frames: list[pd.DataFrame]) -> str:
    """``"1"``, ``"0.1, 1"``, ``"unspecified"`` or ``"none"``: the scales of the runs used."""
    scales = pd.concat(frames)["scale"] if frames else pd.Series(dtype=float)
    values = sorted(set(scales.dropna().tolist()))
    named = ", ".join(f"{value:g}" for value in values)
    if scales.isna().any():
        named = f"{named}, unspecified" if named else "unspecified"
    return named or "none"
