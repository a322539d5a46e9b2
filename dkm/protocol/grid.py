"""A resumable grid of runs into a results store: here, piece after piece, or on a Dask cluster.

A grid is datasets × methods × seeds (× λ or γ); :func:`dkm.protocol.experiments.grid_pieces`
cuts what the store still lacks into independent pieces, which run here
(:func:`dkm.protocol.experiments.run_piece`) or as tasks of a cluster
(:func:`dkm.protocol.cluster.run_pieces`), this process writing every record.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from dkm.data import Dataset
from dkm.protocol.cluster import run_pieces
from dkm.protocol.experiments import grid_hashes, grid_pieces, run_piece
from dkm.reproducibility.arithmetic import current_arithmetic
from dkm.protocol.results import (ResultsStore, check_store_arithmetic, held_runs,
                                  results_folder)

__all__ = ["run_grid", "grid_records", "pretraining_cache"]


def pretraining_cache(results: str | os.PathLike[str]) -> Path:
    """Where :func:`run_grid` caches the shared pretraining by default: ``.pretraining-cache/``
    beside the store (:func:`dkm.protocol.audit.refit` loads it from there)."""
    return Path(results).parent / ".pretraining-cache"


def run_grid(
    datasets: Iterable[str | Dataset],
    methods: Iterable[str],
    seeds: Sequence[int],
    results: str | os.PathLike[str],
    *,
    scale: float = 1.0,
    lambda_search: bool = False,
    overrides: dict[str, Any] | None = None,
    seeds_per_batch: int | None = None,
    loop: Any = None,
    cache_dir: str | os.PathLike[str] | None = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr),
    client: Any = None,
) -> int:
    """Run datasets × methods × seeds (× λ) into a results store; resumable.

    Runs already in the store (same configuration hash) are skipped, so a grid
    that was interrupted continues where it stopped, and so are the runs another
    store of its results folder holds (:func:`dkm.protocol.results.held_runs`: a
    line search's run at the paper's value is the protocol's): a results folder
    keeps one record per run. The process's arithmetic
    (:func:`dkm.reproducibility.arithmetic.current_arithmetic`) must be that of the store's records
    (:func:`dkm.protocol.results.check_store_arithmetic`); each finished batch of
    seeds is appended at once, so nothing finished is lost. A run that was
    interrupted itself resumes from its last checkpoint
    (:func:`dkm.protocol.experiments.run_seeds`), kept in ``checkpoint_dir``, by
    default ``.checkpoints/`` beside the store; the shared pretraining is cached
    in ``cache_dir``, by default ``.pretraining-cache/`` there (:func:`pretraining_cache`).

    ``seeds_per_batch`` seeds train together as one computation (stacked
    replicas on a GPU, replica after replica on a CPU:
    :func:`dkm.replicas.default_layout`); by default all of them on a GPU and
    one at a time on a CPU, where that costs no speed and writes each seed's
    record as soon as it is done (:func:`dkm.replicas.default_seeds_per_batch`).
    The results do not depend on it.

    With a Dask ``client`` (:class:`distributed.Client`) the grid's pieces
    (:class:`dkm.protocol.experiments.Piece`) run as tasks on its cluster and this process
    alone writes their records as they come back (:func:`dkm.protocol.cluster.run_pieces`).

    Returns
    -------
    int
        Number of records added.
    """
    from dkm.methods.common import LoopConfig
    from dkm.progress import tqdm

    store = ResultsStore(results)
    check_store_arithmetic(store, current_arithmetic())
    held = held_runs(results_folder(results))
    loop = loop or LoopConfig(progress=False)
    cache_dir = cache_dir if cache_dir is not None else pretraining_cache(results)
    checkpoint_dir = (checkpoint_dir if checkpoint_dir is not None
                      else Path(results).parent / ".checkpoints")
    pieces = grid_pieces(store, datasets, methods, seeds, scale=scale,
                         lambda_search=lambda_search, overrides=overrides, loop=loop,
                         held=held)
    if client is not None:
        return run_pieces(client, pieces, store, scale=scale, loop=loop, cache_dir=cache_dir,
                          checkpoint_dir=checkpoint_dir, seeds_per_batch=seeds_per_batch,
                          progress=progress, log=log)
    added = 0
    for piece in tqdm(pieces, desc="pieces", disable=not progress):
        for records in run_piece(piece, scale=scale, loop=loop, cache_dir=cache_dir,
                                 seeds_per_batch=seeds_per_batch, checkpoint_dir=checkpoint_dir,
                                 log=log):
            for record in records:
                store.append(record)
                added += 1
    return added


def grid_records(
    datasets: Iterable[Dataset],
    methods: Iterable[str],
    seeds: Sequence[int],
    results: str | os.PathLike[str],
    *,
    scale: float = 1.0,
    lambda_search: bool = False,
    overrides: dict[str, Any] | None = None,
    loop: Any = None,
) -> list[dict[str, Any]]:
    """The records of a grid's runs that the results folder of ``results`` holds.

    A grid's runs are those :func:`run_grid` runs with the same arguments (its datasets
    loaded, in this process's arithmetic); the folder keeps one record of each, in ``results``
    or another of its stores (:func:`dkm.protocol.results.held_runs`). Other runs of the store
    (other data, scales, seeds, methods, arithmetic or trade-off values) are left out. In
    the grid's order: dataset, method and trade-off value, seed.

    Returns
    -------
    list of dict
        After :func:`run_grid`, one record per run of the grid.
    """
    from dkm.methods.common import LoopConfig

    held = held_runs(results_folder(results))
    runs = grid_hashes(datasets, methods, seeds, scale=scale, lambda_search=lambda_search,
                       overrides=overrides, loop=loop or LoopConfig(progress=False))
    return [held[run][1] for run in runs if run in held]
