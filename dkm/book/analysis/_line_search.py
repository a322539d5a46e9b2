"""A line search of λ or γ in the records: its runs, its curves and the paper's optimum."""
from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from dkm.book.analysis._coverage import missing_search_seeds
from dkm.book.analysis._paired import paired_difference
from dkm.book.analysis._variants import on_paper_dataset
from dkm.protocol import paper
from dkm.protocol.experiments import TRADEOFF_GRID
from dkm.protocol.results import (ResultsStore, held_runs, records_to_dataframe, results_folder,
                                  score_column)


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


def stored_search(path: str | os.PathLike[str], dataset: str,
                  methods: Sequence[str]) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """A line search's runs of ``dataset``'s ``methods`` and their frame: its store's records,
    and the runs of its grid that another store of the results folder holds.

    A results folder keeps one record per run (:func:`dkm.protocol.results.held_runs`): a
    search's run at the paper's value is the protocol's, read from the protocol's store.

    Parameters
    ----------
    path : path-like
        A line-search store (the one the book reads: :func:`dkm.protocol.results.search_store`);
        none is read where it is absent.
    dataset : str
        The dataset (or data variant) as the records name it.
    methods : sequence of str

    Returns
    -------
    frame : pandas.DataFrame
        One row per configuration (the last record of each), empty without records.
    records : list of dict
        The records, a data variant's named as its paper dataset
        (:func:`~dkm.book.analysis.on_paper_dataset`).
    """
    searched = (search_records(ResultsStore(path).records(), dataset, methods)
                if Path(path).exists() else [])
    found = on_paper_dataset(searched + _held_elsewhere(path, searched))
    frame = (records_to_dataframe(found).drop_duplicates("config_hash", keep="last")
             if found else pd.DataFrame())
    return frame, found


def _held_elsewhere(path: str | os.PathLike[str],
                    searched: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The runs of a search's grid, on its methods' seeds, that other stores of the results
    folder of ``path`` hold: the same configuration but the trade-off, at a value of the grid."""
    def configuration(record: Mapping[str, Any]) -> tuple[str, str, str]:
        params = {k: v for k, v in record["params"].items() if k not in ("lambda", "gamma")}
        return record["dataset"], record["method"], json.dumps(params, sort_keys=True)

    configurations = {configuration(r) for r in searched}
    seeds = {(r["method"], r["seed"]) for r in searched}
    ran = {r["config_hash"] for r in searched}
    return [dict(r) for _, r in held_runs(results_folder(path)).values()
            if r["config_hash"] not in ran and (r["method"], r["seed"]) in seeds
            and r["params"].get("lambda", r["params"].get("gamma")) in TRADEOFF_GRID
            and configuration(r) in configurations]


def seeds_with_whole_grid(records: Iterable[Mapping[str, Any]], dataset: str,
                          method: str) -> int:
    """The seeds of ``method``'s search on ``dataset`` that have run every value of the
    paper's grid (:func:`~dkm.book.analysis.missing_search_seeds` of the seeds run).

    Parameters
    ----------
    records : iterable of dict
        A search's records (e.g. :func:`stored_search`'s).
    dataset : str
    method : str

    Returns
    -------
    int
    """
    records = list(records)
    seeds = list(dict.fromkeys(r["seed"] for r in records
                               if r["dataset"] == dataset and r["method"] == method))
    missing = missing_search_seeds(records, dataset, [method], TRADEOFF_GRID, seeds)
    return len(seeds) - len(missing.get(method, ()))


def complete_searches(records: Iterable[Mapping[str, Any]], dataset: str,
                      n_seeds: int) -> list[str]:
    """The methods whose search on ``dataset`` has run the whole grid on ``n_seeds`` seeds
    or more, in the order of the records."""
    records = list(records)
    methods = dict.fromkeys(r["method"] for r in records if r["dataset"] == dataset)
    return [m for m in methods if seeds_with_whole_grid(records, dataset, m) >= n_seeds]


def paper_tradeoff(method: str, dataset: str) -> float:
    """The paper's validation-optimal λ or γ for a method, NaN where it gives none (DKM^pa)."""
    return paper.optimal_tradeoff(method, dataset, default=math.nan)


def search_curves(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation and count of validation and test ACC per (method, trade-off).

    ``frame`` is :func:`dkm.protocol.results.records_to_dataframe` of a line search.
    """
    return frame.groupby(["method", "tradeoff"])[["val_acc", "test_acc"]].agg(
        ["mean", "std", "count"])


def search_scores(frame: pd.DataFrame, method: str, value: float, metric: str = "acc",
                  split: str = "test") -> pd.Series:
    """One method's scores by seed at one value of the grid, in percent.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`dkm.protocol.results.records_to_dataframe` of a line search.
    method : str
        Method id.
    value : float
        The value of λ or γ.
    metric : {"acc", "nmi", "ari"}
    split : {"validation", "test"}

    Returns
    -------
    pandas.Series
        Indexed by seed, sorted; empty where the value has no run. Paired
        with another value's through :func:`dkm.book.analysis.paired_difference`.
    """
    runs = frame[(frame["method"] == method) & (frame["tradeoff"] == value)]
    return (runs.set_index("seed")[score_column(metric, split)] * 100).sort_index()


def chosen_against_paper(frame: pd.DataFrame, summary: pd.DataFrame,
                         method: str) -> tuple[float, float, float, int]:
    """Test ACC at validation's value minus at the paper's, seed by seed.

    :func:`paired_difference` of :func:`search_scores` at ``summary``'s
    ``chosen`` and ``paper`` values for ``method`` (``summary`` is
    :func:`search_summary` of ``frame``): ``(mean, low, high, pairs)``, in
    points.
    """
    row = summary.loc[method]
    return paired_difference(search_scores(frame, method, row["chosen"]),
                             search_scores(frame, method, row["paper"]))


#: The columns of :func:`search_summary`, scores in percent.
SEARCH_SUMMARY_COLUMNS: tuple[str, ...] = (
    "tradeoff_name", "chosen", "paper", "values", "runs", "val_chosen",
    "test_chosen", "std_chosen", "test_paper", "std_paper",
    "best", "test_best", "smallest", "test_smallest", "largest", "test_largest", "mean_std",
)


def search_summary(frame: pd.DataFrame, records: Iterable[Mapping[str, Any]],
                   reference: str) -> pd.DataFrame:
    """What a line search chose for each method, against the paper's value.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`dkm.protocol.results.records_to_dataframe` of the search's records.
    records : iterable of dict
        The same records (the validation choice is
        :func:`dkm.book.tables.selected_tradeoffs`'s).
    reference : str
        The dataset whose published λ/γ is compared (the paper's name).

    Returns
    -------
    pandas.DataFrame
        One row per method with a choice, indexed by method id, with the
        columns :data:`SEARCH_SUMMARY_COLUMNS`: the chosen and the paper's value
        (NaN where the paper gives none), the number of grid values and of runs
        at the chosen one, the mean validation ACC there, the mean and standard
        deviation over the seeds of the test ACC at the chosen and at the
        paper's value (NaN where it was not run), the value with the best mean
        test ACC and that mean, the test ACC at the grid's two ends, and the
        mean over the grid of the seeds' standard deviation. Scores in percent.
    """
    from dkm.book.tables import selected_tradeoffs

    curves = search_curves(frame)
    choice = selected_tradeoffs(records).set_index("method")
    rows = {}
    for method in [m for m in dict.fromkeys(frame["method"]) if m in choice.index]:
        test = 100 * curves.loc[method].xs("test_acc", axis=1, level=0)
        chosen, theirs = float(choice.loc[method, "selected"]), paper_tradeoff(method, reference)

        def at(value: float, column: str) -> float:
            return float(test.loc[value, column]) if value in test.index else math.nan

        rows[method] = {
            "tradeoff_name": choice.loc[method, "tradeoff_name"], "chosen": chosen,
            "paper": theirs, "values": int(choice.loc[method, "values"]),
            "runs": int(choice.loc[method, "runs"]),
            "val_chosen": 100 * float(choice.loc[method, "val_acc"]),
            "test_chosen": at(chosen, "mean"), "std_chosen": at(chosen, "std"),
            "test_paper": at(theirs, "mean"), "std_paper": at(theirs, "std"),
            "best": float(test["mean"].idxmax()), "test_best": float(test["mean"].max()),
            "smallest": float(test.index[0]), "test_smallest": float(test["mean"].iloc[0]),
            "largest": float(test.index[-1]), "test_largest": float(test["mean"].iloc[-1]),
            "mean_std": float(test["std"].mean()),
        }
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(SEARCH_SUMMARY_COLUMNS))
