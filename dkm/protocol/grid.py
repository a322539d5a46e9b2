"""A resumable grid of runs into a results store: here, piece after piece, or on a Dask cluster.

A grid is datasets × methods × seeds (× λ or γ); :func:`dkm.protocol.experiments.grid_pieces`
cuts what the store (and the stores it reads besides, :func:`default_read_also`) still lacks
into independent pieces, which run here (:func:`dkm.protocol.experiments.run_piece`) or as tasks of
a cluster (:func:`dkm.protocol.cluster.run_pieces`), this process writing every record. Each
run is claimed in the store before it trains (:meth:`dkm.protocol.results.ResultsStore.claim`),
so that processes running overlapping grids into one store make each run once.
"""
from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from dkm.data import Dataset
from dkm.protocol.cluster import run_pieces
from dkm.protocol.experiments import Piece, grid_hashes, grid_pieces, run_piece
from dkm.reproducibility.arithmetic import current_arithmetic
from dkm.protocol.results import (ResultsStore, check_store_arithmetic, protocol_stores,
                                  results_folder)

__all__ = ["run_grid", "grid_records", "pretraining_cache", "default_read_also",
           "recorded_seconds"]


def recorded_seconds(folders: Iterable[str | os.PathLike[str]], datasets: Iterable[str],
                     methods: Iterable[str]) -> tuple[dict[tuple[str, str], float], list[str]]:
    """The seconds one full-scale run of each method took on each dataset, as the results
    folders recorded it: the median ``wall_time_s`` of its full-scale records
    (:func:`dkm.protocol.results.is_full_scale`) in every store of the folders, a data variant's
    read from its paper dataset's where it has none of its own.

    Returns
    -------
    seconds : dict
        ``(dataset, method)`` to seconds, for each pair that has records.
    unknown : list of str
        ``"<dataset> <method>"`` for each pair that has none.
    """
    import statistics

    from dkm.data import paper_dataset
    from dkm.protocol.results import every_store, is_full_scale

    times: dict[tuple[str, str], list[float]] = {}
    for folder in dict.fromkeys(Path(folder).resolve() for folder in folders):
        for path in every_store(folder) if folder.is_dir() else []:
            for record in ResultsStore(path).records():
                if is_full_scale(record):
                    key = (record["dataset"], record["method"])
                    times.setdefault(key, []).append(float(record["wall_time_s"]))
    seconds, unknown = {}, []
    for dataset in datasets:
        for method in methods:
            found = times.get((dataset, method)) or times.get((paper_dataset(dataset), method))
            if found:
                seconds[dataset, method] = statistics.median(found)
            else:
                unknown.append(f"{dataset} {method}")
    return seconds, unknown


def pretraining_cache(results: str | os.PathLike[str]) -> Path:
    """Where :func:`run_grid` caches the shared pretraining by default: ``.pretraining-cache/``
    beside the store (:func:`dkm.protocol.audit.refit` loads it from there)."""
    return Path(results).parent / ".pretraining-cache"


def default_read_also(results: str | os.PathLike[str], datasets: Iterable[str | Dataset], *,
                      lambda_search: bool = False) -> list[Path]:
    """The stores whose runs a grid into ``results`` reads instead of running them again, by
    default (:func:`run_grid`'s ``read_also``).

    A line search's run at the paper's value is the protocol's: with ``lambda_search``, the
    protocol's stores of the datasets in the results folder of ``results``
    (:func:`dkm.protocol.results.protocol_stores`: ``results/usps.jsonl`` and
    ``results/native/usps.jsonl`` for ``results/usps-lambda.jsonl`` and
    ``results/reproducible/usps-lambda.jsonl``), ``results`` itself left out; none otherwise.
    """
    if not lambda_search:
        return []
    names = [data.name if isinstance(data, Dataset) else str(data) for data in datasets]
    return [path for path in protocol_stores(results_folder(results), names)
            if path.resolve() != Path(results).resolve()]


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
    read_also: Iterable[str | os.PathLike[str]] | None = None,
    progress: bool = True,
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr),
    client: Any = None,
    study: str | None = None,
) -> int:
    """Run datasets × methods × seeds (× λ) into a results store; resumable.

    Runs already in the store (same configuration hash) are skipped, so a grid
    that was interrupted continues where it stopped, and so are the runs that the stores of
    ``read_also`` hold (by default :func:`default_read_also`'s: with ``lambda_search``, the
    protocol's stores, which hold the search's run at the paper's value); no other store is
    read. The process's arithmetic (:func:`dkm.reproducibility.arithmetic.current_arithmetic`)
    must be that of the store's records (:func:`dkm.protocol.results.check_store_arithmetic`),
    and the store must be writable, both checked before anything trains. Each finished batch of
    seeds is appended at once, so nothing finished is lost. A run that was
    interrupted itself resumes from its last checkpoint
    (:func:`dkm.protocol.experiments.run_seeds`), kept in ``checkpoint_dir``, by
    default ``.checkpoints/`` beside the store; the shared pretraining is cached
    in ``cache_dir``, by default ``.pretraining-cache/`` there (:func:`pretraining_cache`).

    Several processes may run overlapping grids into one store: each claims its runs in the
    store before it trains them (:meth:`dkm.protocol.results.ResultsStore.claim`), leaves
    those another process holds, then waits for them and trains those that process left
    unfinished; a record is appended only where the store has none of its run
    (:meth:`~dkm.protocol.results.ResultsStore.append_new`). The runs another process made
    are counted in a line of ``log``.

    ``seeds_per_batch`` seeds train together as one computation (stacked
    replicas on a GPU, replica after replica on a CPU:
    :func:`dkm.replicas.default_layout`); by default all of them on a GPU and
    one at a time on a CPU, where that costs no speed and writes each seed's
    record as soon as it is done (:func:`dkm.replicas.default_seeds_per_batch`).
    The results do not depend on it.

    With a Dask ``client`` (:class:`distributed.Client`) the grid's pieces
    (:class:`dkm.protocol.experiments.Piece`) run as tasks on its cluster and this process
    alone writes their records as they come back (:func:`dkm.protocol.cluster.run_pieces`).
    Without one, ``progress`` draws a bar over the grid's runs (and ``loop.progress`` one
    over each phase's epochs).

    The records say what they are: ``study``, the ablation study they are made for (None: the
    protocol's runs or a line search's), and their switches against the protocol's run
    (:func:`dkm.protocol.experiments.run_seeds`).

    Returns
    -------
    int
        Number of records added.

    Raises
    ------
    ValueError
        Before anything trains: for a store that cannot be written (a directory, a
        read-only place) or that holds runs of the other arithmetic.
    """
    from dkm.methods.common import LoopConfig
    from dkm.progress import tqdm

    store = ResultsStore(results)
    store.check_writable()
    check_store_arithmetic(store, current_arithmetic())
    datasets = list(datasets)
    consulted = (default_read_also(results, datasets, lambda_search=lambda_search)
                 if read_also is None else [Path(path) for path in read_also])
    held = {run for path in consulted for run in ResultsStore(path).completed_hashes()}
    loop = loop or LoopConfig(progress=False)
    cache_dir = cache_dir if cache_dir is not None else pretraining_cache(results)
    checkpoint_dir = (checkpoint_dir if checkpoint_dir is not None
                      else Path(results).parent / ".checkpoints")
    pieces = grid_pieces(store, datasets, methods, seeds, scale=scale,
                         lambda_search=lambda_search, overrides=overrides, loop=loop,
                         held=held)
    if client is not None:
        def execute(todo: list[Piece]) -> int:
            return run_pieces(client, todo, store, scale=scale, loop=loop, cache_dir=cache_dir,
                              checkpoint_dir=checkpoint_dir, seeds_per_batch=seeds_per_batch,
                              progress=progress, log=log, study=study)
        groups = [pieces]  # one claim: the cluster runs every piece at once
    else:
        bar = tqdm(total=sum(len(piece.seeds) for piece in pieces), desc=store.path.name,
                   unit="run", disable=not progress)

        def execute(todo: list[Piece]) -> int:
            added = 0
            for piece in todo:
                for records in run_piece(piece, scale=scale, loop=loop, cache_dir=cache_dir,
                                         seeds_per_batch=seeds_per_batch,
                                         checkpoint_dir=checkpoint_dir, log=log,
                                         study=study):
                    for record in records:
                        added += store.append_new(record)
                        bar.update()
            return added
        groups = [[piece] for piece in pieces]
    added = made_elsewhere = 0
    deferred: list[Piece] = []

    def claimed_run(group: list[Piece], wait: bool) -> None:
        nonlocal added, made_elsewhere
        new, made, left = _run_claimed(store, group, execute, scale=scale, loop=loop, wait=wait)
        added, made_elsewhere = added + new, made_elsewhere + made
        deferred.extend(left)
        if client is None:
            bar.update(made)

    for group in groups:
        claimed_run(group, wait=False)
    if deferred:
        log(f"{sum(len(piece.seeds) for piece in deferred)} runs of the grid are being made by "
            f"another process into {store.path}: waiting for them")
    for piece in list(deferred):  # each claimed once its holder lets it go: none left
        claimed_run([piece], wait=True)
    if client is None:
        bar.close()
    if made_elsewhere:
        log(f"{made_elsewhere} run{'' if made_elsewhere == 1 else 's'} of the grid made by "
            f"another process into {store.path} meanwhile: not run here")
    return added


def _run_claimed(store: ResultsStore, group: list[Piece], execute: Callable[[list[Piece]], int],
                 *, scale: float, loop: Any, wait: bool) -> tuple[int, int, list[Piece]]:
    """Claim the runs of ``group`` in ``store`` and run those still missing from it.

    Returns
    -------
    added : int
        The records ``execute`` appended.
    made : int
        The runs claimed that the store held by then: another process made them.
    left : list of Piece
        The runs another process holds (none when ``wait``), as pieces.
    """
    runs = [piece.config_hashes(scale, loop) for piece in group]
    with store.claim([run for hashes in runs for run in hashes.values()], wait=wait) as claimed:
        done = store.completed_hashes()
        mine, left, made = [], [], 0
        for piece, hashes in zip(group, runs):
            ours = [seed for seed, run in hashes.items() if run in claimed and run not in done]
            others = tuple(seed for seed, run in hashes.items() if run not in claimed)
            made += sum(run in claimed and run in done for run in hashes.values())
            if ours:
                mine.append(dataclasses.replace(piece, seeds=tuple(ours)))
            if others:
                left.append(dataclasses.replace(piece, seeds=others))
        return (execute(mine) if mine else 0), made, left


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
    read_also: Iterable[str | os.PathLike[str]] | None = None,
) -> list[dict[str, Any]]:
    """The records of a grid's runs that ``results`` and the stores of ``read_also`` hold.

    A grid's runs are those :func:`run_grid` runs with the same arguments (its datasets
    loaded, in this process's arithmetic); they are read where :func:`run_grid` reads them:
    ``results``, then the stores of ``read_also`` (by default :func:`default_read_also`'s).
    Other runs of the stores (other data, scales, seeds, methods, arithmetic or trade-off values) are
    left out. In the grid's order: dataset, method and trade-off value, seed.

    Returns
    -------
    list of dict
        After :func:`run_grid`, one record per run of the grid.
    """
    from dkm.methods.common import LoopConfig

    datasets = list(datasets)
    stores = [Path(results)] + (default_read_also(results, datasets, lambda_search=lambda_search)
                                if read_also is None else [Path(path) for path in read_also])
    held: dict[str, dict[str, Any]] = {}
    for path in stores:
        for record in ResultsStore(path).records():
            held.setdefault(record["config_hash"], record)
    runs = grid_hashes(datasets, methods, seeds, scale=scale, lambda_search=lambda_search,
                       overrides=overrides, loop=loop or LoopConfig(progress=False))
    return [held[run] for run in runs if run in held]
