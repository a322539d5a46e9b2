"""A grid on a Dask cluster: one writer, nothing lost or doubled when a worker dies."""
from __future__ import annotations

import contextlib
import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from dkm.data import load
from dkm.methods.common import LoopConfig
from dkm.protocol.grid import run_grid
from dkm.protocol.results import ResultsStore

distributed = pytest.importorskip("distributed")

TINY = LoopConfig(hidden_sizes=(32, 32, 64), progress=False, jit_compile=False)  # no XLA compile per worker
GRID = dict(methods=["km", "ae-km", "dkm-p"], seeds=[1, 2])
KWARGS = dict(scale=0.02, loop=TINY, seeds_per_batch=1, log=lambda message: None)


def _executing(dask_worker) -> int:
    """How many tasks a worker is running now (run on the worker by ``client.run``)."""
    return sum(ts.state == "executing" for ts in dask_worker.state.tasks.values())


def _wait_for_a_running_piece(client, deadline: float) -> str:
    while time.monotonic() < deadline:
        # A worker too busy to answer in time is left out of this round, not an error.
        running = client.run(_executing, on_error="ignore")
        busy = [address for address, n in running.items() if n]
        if busy:
            return busy[0]
        time.sleep(0.1)
    raise TimeoutError("no piece started on the cluster")


def _wait_until_gone(client, address: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        if address not in client.scheduler_info()["workers"]:
            return
        time.sleep(0.1)
    raise TimeoutError(f"worker {address} is still alive")


def test_a_grid_on_a_cluster_survives_a_dead_worker_and_matches_a_local_run(tmp_path):
    digits = load("digits")
    # two results folders: a grid does not run again what a store of its folder holds
    reference = tmp_path / "local" / "runs.jsonl"
    reference.parent.mkdir()
    run_grid([digits], GRID["methods"], GRID["seeds"], reference, progress=False, **KWARGS)
    expected = {r["config_hash"]: r for r in ResultsStore(reference).records()}
    assert len(expected) == 6

    store = tmp_path / "cluster" / "runs.jsonl"
    store.parent.mkdir()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client, ThreadPoolExecutor(1) as pool:
        grid = pool.submit(run_grid, [digits], GRID["methods"], GRID["seeds"], store,
                           progress=False, client=client, **KWARGS)
        victim = _wait_for_a_running_piece(client, time.monotonic() + 120)
        with contextlib.suppress(Exception):  # the worker dies before it can answer
            client.run(os._exit, 1, workers=[victim])
        _wait_until_gone(client, victim, time.monotonic() + 60)
        assert grid.result(timeout=300) == 6
        assert run_grid([digits], GRID["methods"], GRID["seeds"], store, progress=False,
                        client=client, **KWARGS) == 0

    records = ResultsStore(store).records()
    assert sorted(r["config_hash"] for r in records) == sorted(expected)
    for record in records:
        twin = expected[record["config_hash"]]
        assert record["metrics"] == twin["metrics"]
        assert record["kmeans_on_embedding"] == twin["kmeans_on_embedding"]
        assert record["provenance"]["hostname"] and record["provenance"]["device"]


def test_without_dask_the_cluster_module_says_how_to_install_it(monkeypatch):
    import builtins

    from dkm.protocol import cluster

    real_import = builtins.__import__

    def no_distributed(name, *args, **kwargs):
        if name == "distributed":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_distributed)
    with pytest.raises(ImportError, match=r"pip install 'dkm\[cluster\]'"):
        cluster.connect("local")


def test_pieces_are_cut_into_seed_batches_only_when_asked():
    from dkm.protocol.experiments import GridCell, Piece

    digits = load("digits")
    pieces = [Piece(digits, GridCell("km", None), (1, 2, 3)), Piece(digits, GridCell("dkm-p", 1.0), (4,))]
    assert [part for piece in pieces for part in piece.batches(None)] == pieces
    cut = [part for piece in pieces for part in piece.batches(2)]
    assert [(p.cell.method, p.seeds) for p in cut] == [("km", (1, 2)), ("km", (3,)),
                                                       ("dkm-p", (4,))]
    assert all(p.dataset is digits for p in cut)
