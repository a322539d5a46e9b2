"""A grid's pieces on a Dask cluster, with one writer.

Each :class:`dkm.protocol.experiments.Piece` (a dataset × method × trade-off, its
missing seeds and their shared pretraining) is one Dask task; the worker that
runs it trains its seeds as the protocol does on that machine (stacked on a
GPU, one at a time on a CPU) and returns the records. Only the submitting
process writes the store: it appends each record as its piece comes back,
unless a record with the same configuration hash is already there. A piece
whose worker dies is run again elsewhere (Dask's ``retries``); a client that
dies resumes from the store on the next run. A worker knows the methods the
submitting process knows: it loads the same plugins
(:func:`dkm.protocol.registry.plugins`), which must be importable there too.

Dask is optional (``pip install dkm[cluster]``) and imported only here.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Sequence

from dkm.data import Dataset
from dkm.protocol import registry
from dkm.protocol.experiments import GridCell, Piece, run_piece
from dkm.protocol.results import ResultsStore

#: How often Dask runs a piece again after it failed (a worker that died included).
RETRIES = 2


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as error:
        raise ImportError("running a grid on a Dask cluster needs dask.distributed: "
                          "pip install 'dkm[cluster]'") from error
    return distributed


def connect(scheduler: str) -> Any:
    """A Dask client for ``scheduler``: an address (``tcp://host:8786``), or ``"local"``
    for a :class:`distributed.LocalCluster` on this machine (two single-threaded worker
    processes).

    Raises
    ------
    ImportError
        When dask.distributed is not installed, telling how to install it.
    """
    distributed = _distributed()
    if scheduler == "local":
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True)
        return distributed.Client(cluster)
    return distributed.Client(scheduler)


def run_pieces(client: Any, pieces: Sequence[Piece], store: ResultsStore, *, scale: float,
               loop: Any, cache_dir: str | os.PathLike[str], seeds_per_batch: int | None = None,
               checkpoint_dir: str | os.PathLike[str] | None = None, progress: bool = True,
               log: Callable[[str], None] = lambda message: None,
               study: str | None = None) -> int:
    """Run ``pieces`` as tasks of ``client``'s cluster; append their records to ``store``.

    Parameters
    ----------
    client : distributed.Client
        The cluster's client.
    pieces : sequence of Piece
        The grid's missing pieces (:func:`dkm.protocol.experiments.grid_pieces`).
    store : ResultsStore
        Written by this process only, one record at a time as pieces finish;
        a record whose configuration hash is stored already is not written again.
    scale, loop, cache_dir, seeds_per_batch, checkpoint_dir
        As in :func:`dkm.protocol.grid.run_grid`; ``cache_dir`` (the shared
        pretraining) and ``checkpoint_dir`` must be reachable from the
        workers: a task that a dying worker left is retried on another, which
        resumes from its checkpoints. With
        ``seeds_per_batch``, each piece is cut into tasks of that many seeds,
        so that a batch's records come back (and are written) as soon as it
        finishes; without it a piece is one task, whose worker decides how its
        seeds are batched (all of them stacked on a GPU).
    progress : bool
        One bar over the pieces.
    log : callable
        Receives the dashboard's link and a line per finished piece.

    Returns
    -------
    int
        Number of records added.
    """
    from dkm.progress import tqdm

    distributed = _distributed()
    if client.dashboard_link:
        log(f"Dask dashboard: {client.dashboard_link}")
    pieces = [part for piece in pieces for part in piece.batches(seeds_per_batch)]
    # Each dataset is a task of its own, which the pieces depend on: it travels to the
    # scheduler once, and a worker that dies with it loses nothing (unlike scattered data,
    # a task's result is computed again).
    unique = {id(p.dataset): p.dataset for p in pieces}
    datasets = {key: client.submit(_dataset, data, pure=False) for key, data in unique.items()}
    futures = {}
    for piece in pieces:
        task = client.submit(_run_piece, datasets[id(piece.dataset)], piece.cell, piece.seeds,
                             scale, loop, str(cache_dir), seeds_per_batch,
                             None if checkpoint_dir is None else str(checkpoint_dir),
                             registry.plugins(), study, retries=RETRIES, pure=False)
        futures[task] = piece
    added = 0
    done = store.completed_hashes()  # this process is the store's only writer: read it once
    with tqdm(total=len(pieces), desc="pieces", disable=not progress) as bar:
        for future in distributed.as_completed(futures):
            piece = futures[future]
            for record in future.result():
                if record["config_hash"] not in done:
                    store.append(record)
                    done.add(record["config_hash"])
                    added += 1
            log(f"{piece.dataset.name} {piece.cell.method} tradeoff={piece.cell.tradeoff} "
                f"seeds={list(piece.seeds)} done")
            bar.update()
    return added


def _dataset(dataset: Dataset) -> Dataset:
    """A dataset as the result of a task (see :func:`run_pieces`)."""
    return dataset


def _run_piece(dataset: Dataset, cell: GridCell, seeds: tuple[int, ...], scale: float, loop: Any,
               cache_dir: str, seeds_per_batch: int | None, checkpoint_dir: str | None,
               plugins: tuple[str, ...], study: str | None = None) -> list[dict[str, Any]]:
    """The task a worker runs: every record of a piece, the methods of ``plugins`` known."""
    registry.load_plugins(plugins)
    piece = Piece(dataset, cell, seeds)
    return [record for records in run_piece(piece, scale=scale, loop=loop, cache_dir=cache_dir,
                                            seeds_per_batch=seeds_per_batch,
                                            checkpoint_dir=checkpoint_dir, study=study)
            for record in records]
