"""An interrupted run resumes from its checkpoints and ends as if it had never stopped."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from dkm.book.ablations import DKMAblationConfig  # noqa: F401  (declares alpha_rescaling)
from dkm.checkpoints import PhaseCheckpoint, PhaseState, RunCheckpoints, run_key
from dkm.data import load
from dkm.methods.common import LoopConfig
from dkm.protocol.experiments import run_seeds
from dkm.protocol.grid import run_grid
from dkm.training import BatchSampler, Trainer

TINY = LoopConfig(hidden_sizes=(32, 32, 64), progress=False)
SCALE = 0.06  # DKM^p: 3 pretraining epochs, then 6; DCN^np 3 epochs; IDEC^np at most 12
SEEDS = [8905, 9129]  # two replicas, trained together


class Interrupted(Exception):
    """What the tests raise in place of a killed process."""


@pytest.fixture(scope="module")
def digits():
    return load("digits")


@pytest.fixture(scope="module")
def never_interrupted(digits):
    """``never_interrupted(method, overrides)``: the records of SEEDS run without interruption,
    computed once for the module's tests that share a configuration."""
    computed = {}

    def records(method: str, overrides: dict) -> list[dict]:
        key = (method, json.dumps(overrides, sort_keys=True))
        if key not in computed:
            computed[key] = run_seeds(digits, method, SEEDS, scale=SCALE, loop=TINY,
                                      overrides=overrides)
        return computed[key]
    return records


def interrupt_at(monkeypatch: pytest.MonkeyPatch, epoch: int) -> None:
    """Make the ``epoch``-th epoch trained from now on (any phase, counted from 1) raise."""
    run_epoch, counter = Trainer.run_epoch, itertools.count(1)

    def interrupted(self, batches):
        if next(counter) == epoch:
            raise Interrupted
        return run_epoch(self, batches)

    monkeypatch.setattr(Trainer, "run_epoch", interrupted)


def comparable(record: dict) -> dict:
    """A record without what differs from one process to the next."""
    return {k: v for k, v in record.items() if k not in ("created", "wall_time_s", "provenance")}


@pytest.mark.parametrize("method, overrides, epoch, resumed", [
    ("dkm-p", {}, 2, [("pretraining", 1)]),
    ("dkm-p", {}, 6, [("pretraining", 3), ("deep k-means", 2)]),
    ("dkm-p", {"alpha_rescaling": True}, 7, [("pretraining", 3), ("deep k-means", 3)]),
    ("dcn-np", {}, 2, [("DCN", 1)]),
    ("idec-np", {}, 3, [("IDEC", 2)]),
])
def test_an_interrupted_run_resumes_to_the_records_of_one_never_interrupted(
        digits, never_interrupted, tmp_path, monkeypatch, method, overrides, epoch, resumed):
    kwargs = dict(scale=SCALE, loop=TINY, overrides=overrides)
    expected = never_interrupted(method, overrides)
    monkeypatch.setattr(PhaseCheckpoint, "due", lambda self: True)  # a checkpoint every epoch
    with monkeypatch.context() as patch:
        interrupt_at(patch, epoch)
        with pytest.raises(Interrupted):
            run_seeds(digits, method, SEEDS, checkpoint_dir=tmp_path, **kwargs)
    assert list(tmp_path.glob("*.npz")), "the interrupted run left no checkpoint"

    records = run_seeds(digits, method, SEEDS, checkpoint_dir=tmp_path, **kwargs)

    assert [comparable(r) for r in records] == [comparable(r) for r in expected]
    entries = records[0]["provenance"]["resumed"]
    assert [(e["phase"], e["from_epoch"]) for e in entries] == resumed
    assert all(e["seconds"] > 0 and e["written_by"] for e in entries)
    # the time the checkpoints saved counts in the run's time
    assert records[0]["wall_time_s"] * len(SEEDS) >= sum(e["seconds"] for e in entries) - 0.01
    assert "resumed" not in expected[0]["provenance"]
    assert not list(tmp_path.glob("*.npz")), "the run's checkpoints outlived its records"


def test_a_grid_keeps_its_checkpoints_beside_its_store_and_resumes_from_them(
        digits, tmp_path, monkeypatch):
    kwargs = dict(scale=SCALE, loop=TINY, seeds_per_batch=1, progress=False, log=lambda m: None)
    run_grid([digits], ["dkm-p"], [8905], tmp_path / "plain" / "digits.jsonl", **kwargs)
    store = tmp_path / "interrupted" / "digits.jsonl"
    monkeypatch.setattr(PhaseCheckpoint, "due", lambda self: True)
    with monkeypatch.context() as patch:
        interrupt_at(patch, 5)
        with pytest.raises(Interrupted):
            run_grid([digits], ["dkm-p"], [8905], store, **kwargs)
    assert len(list((store.parent / ".checkpoints").glob("*.npz"))) == 2  # both phases

    assert run_grid([digits], ["dkm-p"], [8905], store, **kwargs) == 1

    plain = (tmp_path / "plain" / "digits.jsonl").read_text().splitlines()
    assert comparable(json.loads(store.read_text())) == comparable(json.loads(plain[0]))
    assert not list((store.parent / ".checkpoints").glob("*.npz"))


def test_a_phase_saved_then_loaded_is_the_same_state(tmp_path):
    state = PhaseState(epochs_done=4, finished=False,
                       variables=[np.arange(6, dtype=np.float32).reshape(2, 3), np.array(7.0)],
                       sampler=BatchSampler(10, 4, [1, 2], "finetune").state(),
                       history={"loss": np.ones((2, 4), np.float32)}, seconds=1.5)
    checkpoint = PhaseCheckpoint(tmp_path / "phase.npz", every_s=3600, written_by="abc")
    assert checkpoint.load() is None and not checkpoint.due()
    checkpoint.save(state)
    loaded = checkpoint.load()
    assert (loaded.epochs_done, loaded.finished, loaded.seconds, loaded.written_by) == (
        4, False, 1.5, "abc")
    assert all(np.array_equal(a, b) and a.dtype == b.dtype
               for a, b in zip(loaded.variables, state.variables))
    assert loaded.sampler == state.sampler
    assert np.array_equal(loaded.history["loss"], state.history["loss"])
    with pytest.raises(ValueError, match="every_s"):
        PhaseCheckpoint(tmp_path / "x.npz", every_s=-1)


@pytest.mark.parametrize("content", [b"", b"not a zip file", None])
def test_a_file_that_is_no_checkpoint_is_refused_with_what_to_do(tmp_path, content):
    path = tmp_path / "phase.npz"
    if content is None:   # an npz without the checkpoint's entries
        np.savez(path, x=np.zeros(2))
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match="phase.npz is not a readable checkpoint .*delete it"):
        PhaseCheckpoint(path).load()


def test_a_sampler_set_to_a_state_draws_the_epochs_that_followed_it():
    sampler = BatchSampler(50, 16, [3, 4], "finetune")
    sampler.next_epoch()
    state = sampler.state()
    following = [sampler.next_epoch() for _ in range(2)]
    fresh = BatchSampler(50, 16, [3, 4], "finetune")
    fresh.load_state(state)
    assert all(np.array_equal(a, fresh.next_epoch()) for a in following)
    with pytest.raises(ValueError, match="2 generators; this sampler has 1 replicas"):
        BatchSampler(50, 16, [3], "finetune").load_state(state)


def test_a_trainer_refuses_the_state_of_another_model(digits, tmp_path):
    from dkm.protocol.experiments import configure
    from dkm.protocol.registry import get

    config = configure("dcn-np", digits, scale=SCALE)
    checkpoints = RunCheckpoints(tmp_path, run_key(["a"]), every_s=0)
    get("dcn-np").train(digits.X, digits.n_clusters, [1], config,
                        LoopConfig(hidden_sizes=(32, 32, 64), progress=False,
                                   checkpoints=checkpoints))
    with pytest.raises(ValueError, match=r"-dcn\.npz: the saved state does not fit this "
                       "trainer.*delete it to train the phase from its start"):
        get("dcn-np").train(digits.X, digits.n_clusters, [1], config,   # a smaller network
                            LoopConfig(hidden_sizes=(8, 8, 16), progress=False,
                                       checkpoints=checkpoints))


def test_the_files_of_a_run_are_its_own(tmp_path):
    first = RunCheckpoints(tmp_path, run_key(["a", "b"]))
    second = RunCheckpoints(tmp_path, run_key(["b", "a"]))  # other seeds' order: another run
    assert first.key != second.key
    state = PhaseState(1, False, [np.zeros(2)], [], {})
    first.phase("Deep k-Means").save(state)
    second.phase("Deep k-Means").save(state)
    assert first.phase("Deep k-Means").path.name.endswith("-deep-k-means.npz")
    first.clear()
    assert [p.name for p in tmp_path.iterdir()] == [second.phase("Deep k-Means").path.name]


def fitted(model) -> dict:
    """What a fit leaves on an estimator, as plain arrays."""
    return {"labels_": model.labels_, "embedding_": model.embedding_,
            "cluster_centers_": model.cluster_centers_,
            **{f"history_{k}": v for k, v in model.history_.items()},
            **{f"weight_{i}": w for i, w in enumerate(model.autoencoder_weights_)}}


@pytest.mark.parametrize("estimator, epoch, resumed", [
    ("DeepKMeans", 5, [("pretraining", 3), ("deep k-means", 1)]),
    ("IDEC", 2, [("pretraining", 1)]),
])
def test_an_interrupted_fit_resumes_to_the_fit_never_interrupted(
        digits, tmp_path, monkeypatch, estimator, epoch, resumed):
    import dkm

    def model(**kwargs):
        epochs = {"schedule": [1000.0] * 4} if estimator == "DeepKMeans" else {"epochs": 3}
        return getattr(dkm, estimator)(
            n_clusters=10, hidden_sizes=(32, 32, 64), pretrain_epochs=3, random_state=5,
            progress=False, **epochs, **kwargs)

    expected = fitted(model().fit(digits.X))
    monkeypatch.setattr(PhaseCheckpoint, "due", lambda self: True)
    with monkeypatch.context() as patch:
        interrupt_at(patch, epoch)
        with pytest.raises(Interrupted):
            model(checkpoint_dir=tmp_path).fit(digits.X)
    assert list(tmp_path.glob("*.npz")), "the interrupted fit left no checkpoint"
    other_data = model(checkpoint_dir=tmp_path).fit(digits.X[::-1])
    assert other_data.resumed_ == [], "a fit on other data resumed from this one's checkpoint"

    resumed_model = model(checkpoint_dir=tmp_path).fit(digits.X)

    result = fitted(resumed_model)
    assert result.keys() == expected.keys()
    assert all(np.array_equal(result[k], expected[k]) for k in expected)
    assert [(e["phase"], e["from_epoch"]) for e in resumed_model.resumed_] == resumed
    assert not list(tmp_path.glob("*.npz")), "the fit's checkpoints outlived it"


def test_checkpoints_of_a_fit_need_the_seed_it_started_from(digits, tmp_path):
    from dkm import DCN

    with pytest.raises(ValueError, match="checkpoint_dir needs an int random_state, got None"):
        DCN(n_clusters=10, checkpoint_dir=tmp_path, progress=False).fit(digits.X)
    assert not list(tmp_path.iterdir())


def test_interrupted_fit_methods_restore_the_methods_done_and_resume_the_next(
        digits, tmp_path, monkeypatch):
    from dkm.protocol.experiments import fit_methods

    # pretraining: epochs 1-3, DKM^p: 4-9, DCN^p: 10 on
    kwargs = dict(scale=SCALE, loop=TINY)
    methods = ["ae-km", "dkm-p", "dcn-p"]
    expected = fit_methods(digits, methods, SEEDS, **kwargs)
    monkeypatch.setattr(PhaseCheckpoint, "due", lambda self: True)
    with monkeypatch.context() as patch:
        interrupt_at(patch, 11)
        with pytest.raises(Interrupted):
            fit_methods(digits, methods, SEEDS, checkpoint_dir=tmp_path, **kwargs)
    assert len(list(tmp_path.glob("*.npz"))) == 3  # pretraining, deep k-means and DCN's

    trained = []
    with monkeypatch.context() as patch:  # count the epochs the resumed call trains
        run_epoch = Trainer.run_epoch
        patch.setattr(Trainer, "run_epoch",
                      lambda self, batches: trained.append(1) or run_epoch(self, batches))
        results = fit_methods(digits, methods, SEEDS, checkpoint_dir=tmp_path, **kwargs)

    assert len(trained) == 2, "only DCN^p's last two epochs were left to train"
    for method in methods:
        got, want = results[method], expected[method]
        assert np.array_equal(got.labels, want.labels)
        assert np.array_equal(got.embeddings, want.embeddings)
        assert np.array_equal(got.centers, want.centers)
        assert got.history.keys() == want.history.keys()
        assert all(np.array_equal(got.history[k], want.history[k]) for k in want.history)
    assert not list(tmp_path.glob("*.npz")), "the checkpoints outlived the call"
