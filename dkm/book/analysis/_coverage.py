"""How far a store has come: the seeds each dataset and method has a scored record for (at
every value of a line search's grid, for a search), and the hours its runs took; the compute
of a whole results folder, each record once."""
from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from dkm.protocol import paper


def coverage(records: Iterable[Mapping[str, Any]], methods: Sequence[str],
             seeds: Sequence[int] = paper.PAPER_SEEDS) -> pd.DataFrame:
    """How many of ``seeds`` each dataset × method has a scored record for.

    Records of several trade-off values or distances count a seed once.
    """
    seen = _scored_seeds(r for r in records if r["seed"] in seeds)
    datasets = list(dict.fromkeys(d for d, _ in seen))
    return pd.DataFrame([[len(seen.get((d, m), ())) for m in methods] for d in datasets],
                        index=datasets, columns=list(methods))


def progress(records: Iterable[Mapping[str, Any]], dataset: str, methods: Sequence[str],
             seeds: Sequence[int] = paper.PAPER_SEEDS) -> tuple[int, int]:
    """How many of a dataset's runs (one per method and seed) are done, and of how many.

    Returns
    -------
    tuple of int
        The number of (method, seed) pairs of ``dataset`` with a scored record
        (:func:`coverage`), and ``len(methods) * len(seeds)``.
    """
    covered = coverage((r for r in records if r["dataset"] == dataset), methods, seeds)
    done = int(covered.loc[dataset].sum()) if dataset in covered.index else 0
    return done, len(methods) * len(seeds)


def missing_seeds(records: Iterable[Mapping[str, Any]], dataset: str, methods: Sequence[str],
                  seeds: Sequence[int] = paper.PAPER_SEEDS) -> dict[str, tuple[int, ...]]:
    """The seeds of each method that have no scored record of ``dataset`` yet.

    Returns
    -------
    dict
        Each method of ``methods`` that misses a seed, to its missing seeds in
        the order of ``seeds``; empty when every run is there.
    """
    done = _scored_seeds(r for r in records if r["dataset"] == dataset)
    missing = {method: tuple(seed for seed in seeds if seed not in done.get((dataset, method), ()))
               for method in methods}
    return {method: left for method, left in missing.items() if left}


def missing_search_seeds(records: Iterable[Mapping[str, Any]], dataset: str,
                         methods: Sequence[str], values: Sequence[float],
                         seeds: Sequence[int]) -> dict[str, tuple[int, ...]]:
    """The seeds of each method whose line search over ``values`` is not complete on ``dataset``.

    A seed is missing when one value of the grid or more has no scored record
    of that method and seed (``params["lambda"]`` or ``params["gamma"]``).

    Returns
    -------
    dict
        Each method of ``methods`` that misses a seed, to those seeds in the
        order of ``seeds``; empty when every run of the search is there.
    """
    done: dict[tuple[str, int], set[float]] = {}
    for r in records:
        value = r["params"].get("lambda", r["params"].get("gamma"))
        if r["dataset"] == dataset and r.get("metrics") and value is not None:
            done.setdefault((r["method"], r["seed"]), set()).add(value)
    missing = {method: tuple(seed for seed in seeds
                             if not all(any(math.isclose(value, run) for run in
                                            done.get((method, seed), ())) for value in values))
               for method in methods}
    return {method: left for method, left in missing.items() if left}


def _scored_seeds(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], set[int]]:
    """The seeds each (dataset, method) has a scored record for, in order of first appearance."""
    seen: dict[tuple[str, str], set[int]] = {}
    for r in records:
        if r.get("metrics"):
            seen.setdefault((r["dataset"], r["method"]), set()).add(r["seed"])
    return seen


def wall_hours(records: Iterable[Mapping[str, Any]]) -> pd.Series:
    """The hours of wall time the records' runs took, by dataset.

    A record's ``wall_time_s`` is its own share of a run that trained several seeds together,
    so the sum counts each hour once.

    Returns
    -------
    pandas.Series
        Hours, indexed by dataset id in the order the records first name them; empty
        without records.
    """
    seconds: dict[str, float] = {}
    for record in records:
        seconds[record["dataset"]] = seconds.get(record["dataset"], 0.0) + record["wall_time_s"]
    return pd.Series(seconds, dtype=float).rename("hours") / 3600


#: What each folder of a results folder keeps, as the compute's ``kind`` names it.
_STORE_KINDS = {"ablations": "ablations", "authors-code": "the authors' code",
                "bfloat16": "bfloat16", "native": "protocol, native arithmetic",
                "reproducible": "reruns in the reproducible arithmetic"}


def compute(results_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """Every full-scale record of a results folder, once, with what its run cost: the one
    table from which every page reads the compute.

    The records of every store of the folder (:func:`dkm.protocol.results.every_store`; the
    audits' reruns are not records), each in the store that holds it, since a results folder
    keeps one record of each run.

    Returns
    -------
    pandas.DataFrame
        One row per record: ``kind`` (``"protocol"``, ``"λ search"``, or the kind of its
        folder: ``"ablations"``, ``"the authors' code"``, ``"bfloat16"``, ``"protocol, native
        arithmetic"``, ``"reruns in the reproducible arithmetic"``; a search's or a study's runs
        that reruns superseded, kept under ``native/``, are of their search's or study's
        kind), ``store`` (its path in the
        folder), ``dataset``, ``method``, ``seed``, ``seconds`` (its ``wall_time_s``) and
        ``device`` (its provenance's).
    """
    from dkm.protocol.results import SUPERSEDED, ResultsStore, every_store, is_full_scale

    folder = Path(results_dir)
    rows = []
    for store in every_store(folder):
        inside = store.relative_to(folder).parts
        if inside[0] == SUPERSEDED and (len(inside) > 2 or store.stem.endswith("-lambda")):
            inside = inside[1:]  # a superseded search's or study's runs: what they were run for
        kind = (_STORE_KINDS.get(inside[0], inside[0]) if len(inside) > 1
                else "λ search" if store.stem.endswith("-lambda") else "protocol")
        rows += [{"kind": kind, "store": store.relative_to(folder).as_posix(),
                  "dataset": record["dataset"], "method": record["method"],
                  "seed": record["seed"], "seconds": record["wall_time_s"],
                  "device": record["provenance"]["device"]}
                 for record in ResultsStore(store).records() if is_full_scale(record)]
    return pd.DataFrame(rows, columns=["kind", "store", "dataset", "method", "seed", "seconds",
                                       "device"])


def missing_in_arithmetic(records: Iterable[Mapping[str, Any]], arithmetic: str,
                          held: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The records whose run in ``arithmetic`` is not among ``held``.

    A run is its configuration and seed, its arithmetic included
    (``params["arithmetic"]``, absent for the native one): the run of a record in another
    arithmetic is the same parameters with that arithmetic named.

    Parameters
    ----------
    records : iterable of dict
        Records of one arithmetic (the native one's, say).
    arithmetic : {"native", "reproducible"}
    held : mapping
        The runs a results folder holds, by configuration hash
        (:func:`dkm.protocol.results.held_runs`).

    Returns
    -------
    list of dict
        The records, in their order, whose run in ``arithmetic`` ``held`` lacks.
    """
    from dkm.protocol.results import config_hash

    def params_in(params: Mapping[str, Any]) -> dict[str, Any]:
        other = {k: v for k, v in params.items() if k != "arithmetic"}
        return other if arithmetic == "native" else {**other, "arithmetic": arithmetic}

    return [dict(record) for record in records
            if config_hash(record["dataset"], record["method"], record["seed"],
                           params_in(record["params"])) not in held]
