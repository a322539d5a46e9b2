"""dkm.snapshots: final embeddings of a run, saved for the figures."""
from __future__ import annotations

import numpy as np
import pytest

from dkm.data import load
from dkm.experiments import run_seeds
from dkm.methods.common import LoopConfig
from dkm.snapshots import Snapshot, load_snapshot, sample_points, save_snapshot, write_snapshot

TINY = LoopConfig(hidden_sizes=(32, 32, 64), progress=False)


@pytest.fixture(scope="module")
def digits():
    return load("digits")


@pytest.fixture(scope="module")
def snapshot_path(digits, tmp_path_factory):
    path = tmp_path_factory.mktemp("snapshots") / "digits-8905.npz"
    save_snapshot(digits, ["ae-km", "dkm-p"], 8905, path, n_points=300, scale=0.02, loop=TINY)
    return path


def test_a_snapshot_keeps_the_sample_of_every_method(digits, snapshot_path):
    snapshot = load_snapshot(snapshot_path)
    assert snapshot.meta["dataset"] == "digits" and snapshot.meta["seed"] == 8905
    assert snapshot.meta["methods"] == ["ae-km", "dkm-p"] and snapshot.meta["tradeoffs"] == {
        "dkm-p": 1.0}
    assert np.array_equal(snapshot.points, sample_points(digits.n_samples, 300))
    assert np.array_equal(snapshot.y, digits.y[snapshot.points])
    for method in ("ae-km", "dkm-p"):
        assert snapshot.embeddings[method].shape == (300, digits.n_clusters)
        assert snapshot.labels[method].shape == (300,)
    # AE-KM's curves are the pretraining's; DKM^p has both
    assert snapshot.history["ae-km"]["pretrain_embedding_norm"].ndim == 1
    assert snapshot.history["dkm-p"]["embedding_norm"].ndim == 1
    assert snapshot.meta["provenance"]["git_commit"]
    assert not list(snapshot_path.parent.glob(".*.part"))  # the atomic write left nothing behind


def test_a_snapshot_scores_what_the_protocol_records_for_its_seed(digits, snapshot_path):
    snapshot = load_snapshot(snapshot_path)
    record = run_seeds(digits, "dkm-p", [8905], scale=0.02, loop=TINY)[0]
    assert snapshot.meta["scores"]["dkm-p"] == record["metrics"]


def test_an_ablation_snapshot_scores_what_the_same_ablation_records(digits, tmp_path):
    overrides = {"weight_decay": 1e-3}
    path = tmp_path / "decay.npz"
    snapshot = save_snapshot(digits, ["dkm-p"], 8905, path, n_points=100, scale=0.02, loop=TINY,
                             overrides={"dkm-p": overrides})
    record = run_seeds(digits, "dkm-p", [8905], scale=0.02, loop=TINY, overrides=overrides)[0]
    assert snapshot.meta["overrides"] == {"dkm-p": overrides}
    assert snapshot.meta["scores"]["dkm-p"] == record["metrics"]
    with pytest.raises(ValueError, match="not among the methods"):
        save_snapshot(digits, ["dkm-p"], 8905, path, scale=0.02, loop=TINY,
                      overrides={"dcn-p": overrides})


def test_write_snapshot_writes_what_load_snapshot_reads(tmp_path):
    rng = np.random.default_rng(0)
    snapshot = Snapshot({"dataset": "toy", "seed": 1, "methods": ["dkm-p", "ae-km"]},
                        np.array([2, 5, 7]), np.array([0, 1, 1]),
                        {"dkm-p": rng.normal(size=(3, 2)), "ae-km": rng.normal(size=(3, 2))},
                        {"dkm-p": np.array([1, 0, 0]), "ae-km": np.array([0, 1, 1])},
                        {"dkm-p": {"embedding_norm": np.array([2.0, 1.5])}, "ae-km": {}})
    path = tmp_path / "deep" / "toy-1.npz"
    write_snapshot(path, snapshot)
    again = load_snapshot(path)
    assert again.meta == snapshot.meta
    assert np.array_equal(again.points, snapshot.points) and np.array_equal(again.y, snapshot.y)
    for method in snapshot.meta["methods"]:
        assert np.array_equal(again.embeddings[method], snapshot.embeddings[method])
        assert np.array_equal(again.labels[method], snapshot.labels[method])
    assert again.history["ae-km"] == {}
    assert again.history["dkm-p"]["embedding_norm"].tolist() == [2.0, 1.5]
    assert [p.name for p in path.parent.iterdir()] == ["toy-1.npz"]
    with pytest.raises(ValueError, match=r"labels are of \['ae-km'\], its meta names"):
        write_snapshot(path, Snapshot({"methods": ["ae-km", "dkm-p"]}, snapshot.points,
                                      snapshot.y, snapshot.embeddings,
                                      {"ae-km": snapshot.labels["ae-km"]}, snapshot.history))


def test_the_sample_is_fixed_and_sorted():
    first, again = sample_points(1_000, 50), sample_points(1_000, 50)
    assert np.array_equal(first, again) and np.all(np.diff(first) > 0)
    assert np.array_equal(sample_points(40, 50), np.arange(40))
    assert np.array_equal(sample_points(40, None), np.arange(40))
    with pytest.raises(ValueError, match="n_points"):
        sample_points(40, 0)


def test_a_snapshot_refuses_km_and_unlabelled_data(tmp_path, digits):
    with pytest.raises(ValueError, match="km has no embedding"):
        save_snapshot(digits, ["km"], 0, tmp_path / "x.npz", loop=TINY)


def test_a_file_that_is_not_a_snapshot_is_refused(tmp_path):
    np.savez(tmp_path / "other.npz", X=np.zeros(3))
    with pytest.raises(ValueError, match="not an embedding snapshot"):
        load_snapshot(tmp_path / "other.npz")
