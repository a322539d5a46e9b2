"""λ (or γ) at full scale: the scores against the trade-off and where they collapse."""
from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dkm.book.ablations._studies import (STUDY_SEEDS, _score, describe, identified_stores,
                                         load_study, protocol_records, study, switches)
from dkm.protocol import registry
from dkm.protocol.results import search_store, study_store


def tradeoff_points(records: Iterable[Mapping[str, Any]], dataset: str, method: str = "dkm-p",
                    metric: str = "acc") -> pd.DataFrame:
    """A method's scores against its λ or γ, from every run that changed nothing else.

    The protocol's runs (the paper's value), a line search's and the
    ``"lambda"`` study's all qualify; a run kept in two stores counts once.

    Parameters
    ----------
    records : iterable of dict
        Records of any stores.
    dataset : str
        The dataset id the records name.
    method : str
        A method with a trade-off.
    metric : {"acc", "nmi", "ari"}
        The score, in percent.

    Returns
    -------
    pandas.DataFrame
        Columns ``tradeoff``, ``seed``, ``validation`` and ``test``, sorted by
        trade-off and seed.
    """
    name = registry.get(method).tradeoff
    if name is None:
        raise ValueError(f"{method} has no trade-off hyperparameter")
    rows, seen = [], set()
    for r in records:
        if (r["dataset"] != dataset or r["method"] != method or not r.get("metrics")
                or r["config_hash"] in seen or set(switches(r)) - {name}):
            continue
        seen.add(r["config_hash"])
        rows.append({"tradeoff": r["params"][name], "seed": r["seed"],
                     "validation": _score(r, metric, "validation"),
                     "test": _score(r, metric, "test")})
    frame = pd.DataFrame(rows, columns=["tradeoff", "seed", "validation", "test"])
    return frame.sort_values(["tradeoff", "seed"], ignore_index=True)


def study_tradeoff_points(results_dir: str | os.PathLike[str], store: str = "usps",
                          method: str = "dkm-p", metric: str = "acc") -> pd.DataFrame:
    """:func:`tradeoff_points` of the ablations' seeds, from every store the book reads that
    holds such runs.

    The runs are the protocol's, its line search's and the ``"lambda"`` study's, in the stores
    the book reads of the dataset (:data:`dkm.protocol.results.READ`), and so in one
    arithmetic, on :data:`STUDY_SEEDS`.

    Parameters
    ----------
    results_dir : str or path-like
        The results folder.
    store : str, default "usps"
        The dataset id its records carry.
    method : str, default "dkm-p"
        A method with a trade-off hyperparameter.
    metric : {"acc", "nmi", "ari"}
        The score, in percent.

    Returns
    -------
    pandas.DataFrame
        As :func:`tradeoff_points`.
    """
    folder = Path(results_dir)
    stores = identified_stores(folder)
    studied = study_store(folder, store, "lambda")
    studied = ([] if studied is None else
               load_study("lambda", studied.parent, [store], stores=stores))
    runs = [r for r in protocol_records(folder, [store], stores=stores)
            + list(stores.get(search_store(folder, store), ())) if r["seed"] in STUDY_SEEDS]
    return tradeoff_points(runs + studied, store, method, metric)


def tradeoff_means(points: pd.DataFrame, low: float = -math.inf,
                   high: float = math.inf) -> pd.DataFrame:
    """The mean test score at each value of a :func:`tradeoff_points` curve from ``low`` to ``high``.

    Returns
    -------
    pandas.DataFrame
        Indexed by trade-off value (ascending, both ends included): ``test``,
        the mean test score over its seeds, and ``seeds``, their number.
    """
    within = points[(points["tradeoff"] >= low) & (points["tradeoff"] <= high)]
    return within.groupby("tradeoff").agg(test=("test", "mean"), seeds=("seed", "size"))


def tradeoff_choice(points: pd.DataFrame) -> dict[str, float]:
    """The validation choice along a :func:`tradeoff_points` curve, and its regret.

    Each value is scored by its mean over its seeds (values may have different
    numbers of seeds).

    Returns
    -------
    dict
        ``chosen`` (the value with the best mean validation score) and
        ``test_chosen`` (its mean test score), ``best`` and ``test_best``
        (the value with the best mean test score, and that score), and
        ``regret`` = ``test_best - test_chosen`` (0 when the validation part
        picks the best value).

    Raises
    ------
    ValueError
        When ``points`` is empty.
    """
    if points.empty:
        raise ValueError("no runs to choose a trade-off from")
    means = points.groupby("tradeoff")[["validation", "test"]].mean()
    chosen, best = means["validation"].idxmax(), means["test"].idxmax()
    return {"chosen": float(chosen), "test_chosen": float(means.loc[chosen, "test"]),
            "best": float(best), "test_best": float(means.loc[best, "test"]),
            "regret": float(means.loc[best, "test"] - means.loc[chosen, "test"])}


def tradeoff_onset(comparison: pd.DataFrame, name: str = "lambda",
                   dataset: str = "usps") -> dict[str, float | None]:
    """Where a trade-off study's values start to move the score, against the protocol's value.

    The study's values are read in increasing order: the first whose interval
    (:func:`compare`) excludes 0 is the *onset*, and the values before it
    change nothing measurably. The walk stops, without an onset, at a value
    that has no interval yet (fewer than two seed pairs).

    Parameters
    ----------
    comparison : pandas.DataFrame
        A :func:`compare` table of the study's records.
    name : str, default "lambda"
        A study of :data:`STUDIES` whose variants each change only their
        method's trade-off.
    dataset : str, default "usps"
        The dataset id of the rows read.

    Returns
    -------
    dict
        ``steady``: the largest value read before the onset or the stop (the
        protocol's own value when there is none); ``onset``: the onset's value
        and ``change``: its mean difference (both None without an onset).
    """
    from dkm.protocol.experiments import default_tradeoff

    variants = study(name).variants
    steps = sorted((float(v.overrides_for(dataset)[registry.get(v.method).config_field]),
                    describe(v.overrides)) for v in variants)
    rows = comparison[comparison["dataset"] == dataset].set_index("variant")
    steady = default_tradeoff(variants[0].method, dataset)
    for value, label in steps:
        if label not in rows.index or not np.isfinite(rows.at[label, "low"]):
            break
        row = rows.loc[label]
        if row["low"] > 0 or row["high"] < 0:
            return {"steady": steady, "onset": value, "change": float(row["difference"])}
        steady = value
    return {"steady": steady, "onset": None, "change": None}
