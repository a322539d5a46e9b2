"""dkm.book.snapshots: final embeddings of a run, saved for the figures."""
from __future__ import annotations

import numpy as np
import pytest

from dkm.book.ablations import DKMAblationConfig  # noqa: F401  (declares weight_decay)
from dkm.book.embeddings import tsne_projection
from dkm.book.snapshots import (
    Snapshot, load_snapshot, sample_points, save_snapshot, snapshot_name, snapshot_projections,
    variant_tag, write_snapshot,
)
from dkm.data import load
from dkm.methods.common import LoopConfig
from dkm.protocol.experiments import run_seeds

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


def test_a_snapshot_names_the_arithmetic_of_its_runs(snapshot_path):
    from dkm.reproducibility.arithmetic import current_arithmetic, recorded_arithmetic

    snapshot = load_snapshot(snapshot_path)
    # the snapshot names the arithmetic of the process that wrote it
    assert recorded_arithmetic(snapshot.meta["provenance"]) == current_arithmetic()


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



def test_snapshot_projections_are_computed_once_and_again_when_the_embeddings_change(
        tmp_path, monkeypatch):
    import dkm.book.snapshots as snapshots

    rng = np.random.default_rng(0)
    embeddings = {"ae-km": rng.normal(size=(40, 3)), "dkm-p": rng.normal(size=(40, 3))}

    def write(embeddings):
        write_snapshot(path, Snapshot({"methods": ["dkm-p", "ae-km"]}, np.arange(40),
                                      np.arange(40) % 2, embeddings,
                                      {m: np.zeros(40, int) for m in embeddings},
                                      {m: {} for m in embeddings}))

    computed = []
    monkeypatch.setattr(snapshots, "tsne_projection",
                        lambda H, **kwargs: computed.append(H) or tsne_projection(H, **kwargs))
    path = tmp_path / "toy-1.npz"
    write(embeddings)
    first = snapshot_projections(path)
    assert list(first) == ["dkm-p", "ae-km"] and len(computed) == 2
    assert (tmp_path / "projections" / "toy-1.npz").is_file()
    for method, projection in first.items():   # seed 0 of the book's t-SNE, on one thread
        np.testing.assert_array_equal(projection, tsne_projection(embeddings[method]))
    again = snapshot_projections(path)
    assert len(computed) == 2                  # read back, not computed
    assert all(np.array_equal(again[m], first[m]) for m in first)
    write({**embeddings, "dkm-p": rng.normal(size=(40, 3))})
    changed = snapshot_projections(path)
    assert len(computed) == 4                  # another embedding: every projection again
    assert not np.array_equal(changed["dkm-p"], first["dkm-p"])


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


def test_snapshot_names_are_the_ones_the_books_readers_look_for():
    from dkm.book.ablations import STUDIES, study

    def named(study_name, dataset, index):
        variant = study(study_name).variants[index]
        return snapshot_name(dataset, 8905, variant.method, variant.overrides_for(dataset))

    # the committed snapshots under results/snapshots were filed under these names
    assert named("alpha", "20news", 2) == "20news-8905-dkm-p-alpha-100.npz"
    assert named("alpha-rescaling", "20news", 0) == "20news-8905-dkm-p-alpha-100-rescaled.npz"
    assert named("weight-decay", "usps", 0) == "usps-8905-dkm-p-decay-1e-4.npz"
    assert named("weight-decay", "20news", 1) == "20news-8905-dkm-p-decay-1e-2.npz"
    assert snapshot_name("usps", 8905) == "usps-8905.npz"
    assert snapshot_name("20news", 8905, "ae-km") == "20news-8905-ae-km.npz"
    for chosen in STUDIES.values():  # no two variants of a study share a file
        names = [snapshot_name("usps", 1, v.method, v.overrides_for("usps"))
                 for v in chosen.variants]
        assert len(set(names)) == len(names), chosen.name
    with pytest.raises(ValueError, match="needs its method"):
        snapshot_name("usps", 1, overrides={"weight_decay": 0.1})


def test_variant_tags_name_each_switch():
    from dkm.annealing import constant, paper_annealing

    assert variant_tag({"schedule": constant(1.0, 100)}) == "alpha-1"
    assert variant_tag({"schedule": paper_annealing()}) == f"anneal-{len(paper_annealing().alphas)}"
    assert variant_tag({"assignment": "hard", "lam": 0.5}) == "hard-lambda-0.5"
    assert variant_tag({"weight_decay": 5e-3, "alpha_rescaling": True}) == "decay-5e-3-rescaled"
    assert variant_tag({"weight_decay": 1.5e-3}) == "decay-1.5e-3"  # not rounded onto 2e-3
    assert variant_tag({"epochs": 50, "sampler": "sequential"}) == "epochs-50-sampler-sequential"


def test_schedule_tags_tell_schedules_of_the_same_length_apart():
    from dkm.annealing import Schedule, constant, paper_annealing

    assert variant_tag({"schedule": constant(100.0, 50)}) == "alpha-100-50-epochs"
    assert variant_tag({"schedule": paper_annealing(n_terms=20)}) == "anneal-20"
    same_length = [paper_annealing(n_terms=20), paper_annealing(n_terms=20, alpha_1=0.2),
                   paper_annealing(n_terms=20, epochs_per_alpha=2),
                   Schedule(paper_annealing(n_terms=20).alphas[::-1], 5)]
    tags = [variant_tag({"schedule": schedule}) for schedule in same_length]
    assert len(set(tags)) == len(tags), tags
    assert all(tag.startswith("anneal-20") for tag in tags)
    # a tag depends on the schedule only: the same one, rebuilt, gets the same tag
    assert variant_tag({"schedule": paper_annealing(n_terms=20, alpha_1=0.2)}) == tags[1]


def test_cli_snapshot_files_each_variant_of_a_study_and_resumes(tmp_path, cli):
    args = ("snapshot", "--study", "weight-decay", "--dataset", "digits", "--scale", "0.02",
            "--n-points", "50", "--snapshots", str(tmp_path / "snapshots"))
    first = cli(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    files = sorted(p.name for p in (tmp_path / "snapshots").glob("*.npz"))
    assert files == ["digits-8905-dkm-p-decay-1e-2.npz", "digits-8905-dkm-p-decay-1e-4.npz"]
    assert not list((tmp_path / "snapshots" / ".checkpoints").iterdir()), \
        "a written snapshot's checkpoints were kept"
    snapshot = load_snapshot(tmp_path / "snapshots" / files[0])
    assert snapshot.meta["overrides"] == {"dkm-p": {"weight_decay": 0.01}}
    assert snapshot.points.size == 50 and snapshot.meta["seed"] == 8905
    again = cli(*args, cwd=tmp_path)
    assert again.returncode == 0 and again.stdout.count("kept") == 2
    refused = cli("snapshot", "--study", "lambda", "--dataset", "digits", "--snapshots",
                   str(tmp_path), cwd=tmp_path)
    assert refused.returncode == 2 and "designed for usps only, not 'digits'" in refused.stderr


def test_the_full_scale_snapshots_norms_and_scores_are_those_every_page_reads():
    # chapter 7's table gave the sample's mean norms (7.76 -> 3.09) where chapter 9 and the
    # front page gave every point's (7.70 -> 3.11), and scores of a native run beside the
    # protocol's reproducible records: now one snapshot, in the records' arithmetic, and one
    # reading of its norms
    from pathlib import Path

    from dkm.reproducibility.arithmetic import recorded_arithmetic
    from dkm.book import ablations
    from dkm.book.snapshots import final_embedding_norms, load_snapshot
    from dkm.protocol.results import ResultsStore

    root = Path(__file__).resolve().parents[1]
    snapshot = load_snapshot(root / "results" / "snapshots" / "usps-8905.npz")
    norms = final_embedding_norms(snapshot)
    curves, pretraining = ablations.embedding_norm_curves(root / "results" / "snapshots",
                                                          "usps", 8905)
    shrinkage = ablations.embedding_shrinkage(curves, pretraining)
    assert shrinkage.loc["protocol", "pretrained"] == norms["ae-km"]
    assert shrinkage.loc["protocol", "trained"] == norms["dkm-p"]
    records = {r["method"]: r["metrics"]
               for r in ResultsStore(root / "results" / "usps.jsonl").records()
               if r["seed"] == 8905}
    assert recorded_arithmetic(snapshot.meta["provenance"]) == "reproducible"
    assert all(snapshot.meta["scores"][m] == records[m] for m in snapshot.meta["methods"])
    assert "final_embedding_norms(" in (root / "notebooks" / "07_representations.md").read_text()
