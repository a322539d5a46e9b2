"""The package under real use: processes that run at once into one store, stores that hold
their own runs, and the errors a user can cause, each one line before anything trains."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dkm.protocol.registry import PAPER_METHODS
from dkm.protocol.results import ResultsStore, new_record

REPO_ROOT = Path(__file__).resolve().parents[1]

#: A small grid of the command line: 2 methods × 1 seed of the digits, a few epochs.
GRID = ("--dataset", "digits", "--method", "km", "--method", "ae-km", "--seeds", "1",
        "--scale", "0.01")


def _record(seed: int, method: str = "km") -> dict:
    return new_record("digits", method, seed, {"scale": 0.01},
                      metrics={split: {"acc": 0.5, "nmi": 0.5, "ari": 0.5}
                               for split in ("validation", "test")})


def test_two_processes_running_one_grid_into_one_store_make_each_run_once(tmp_path):
    store = tmp_path / "runs.jsonl"
    command = [sys.executable, "-m", "dkm", "run", *GRID, "--native", "--results", str(store)]
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    processes = [subprocess.Popen(command, cwd=tmp_path, env=environment, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in range(2)]
    finished = [process.communicate(timeout=300) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], finished
    records = ResultsStore(store).records()
    assert len(records) == 2 and len({r["config_hash"] for r in records}) == 2
    added = [int(out.split()[0]) for out, _ in finished]
    assert sum(added) == 2       # each run made by one of them, the other told so
    for (out, err), count in zip(finished, added):
        assert f"{count} new record" in out
        if count < 2:
            # the runs the other process made while this one ran are named; one it had made
            # before this one read the store is a run already there, as when a grid resumes
            told = re.search(rf"(\d+) runs? of the grid made by another process into "
                             rf"{re.escape(str(store))} meanwhile", err)
            assert told is not None and 1 <= int(told[1]) <= 2 - count, err


def test_a_record_is_appended_only_where_the_store_lacks_its_run(tmp_path):
    store = ResultsStore(tmp_path / "runs.jsonl")
    assert store.append_new(_record(1)) and not store.append_new(_record(1))
    assert store.append_new(_record(2))
    assert [r["seed"] for r in store.records()] == [1, 2]


def test_a_run_claimed_by_another_process_is_left_to_it(tmp_path):
    store = ResultsStore(tmp_path / "runs.jsonl")
    first, second = _record(1)["config_hash"], _record(2)["config_hash"]
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom dkm.protocol.results import ResultsStore\n"
         "with ResultsStore(sys.argv[1]).claim([sys.argv[2]]) as claimed:\n"
         "    print(len(claimed), flush=True)\n    time.sleep(60)", str(store.path), first],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    try:
        assert holder.stdout.readline().strip() == "1"
        with store.claim([first, second]) as claimed:
            assert claimed == {second}
    finally:
        holder.kill()
        holder.wait()
    with store.claim([first, second], wait=True) as claimed:  # its holder gone, so is its claim
        assert claimed == {first, second}


def test_a_store_holds_its_own_runs_and_reads_others_only_when_named(tmp_path, cli):
    options = ("--dataset", "digits", "--method", "km", "--quiet")
    first = cli("run", *options, "--seeds", "2", "--results", str(tmp_path / "digits.jsonl"))
    assert "2 new records" in first.stdout, first.stderr
    # another store of the folder: its own runs, not the first store's
    other = tmp_path / "other.jsonl"
    made = cli("run", *options, "--seeds", "3", "--results", str(other))
    assert made.stdout.strip() == f"3 new records in {other}", made.stderr
    # a store named with --read-also: its runs are read, not run again, and the output says so
    third = tmp_path / "third.jsonl"
    read = cli("run", *options, "--seeds", "3", "--results", str(third),
               "--read-also", str(tmp_path / "digits.jsonl"))
    assert read.stdout.strip() == (f"1 new record in {third} (the runs {tmp_path / 'digits.jsonl'}"
                                   " holds read, not run again)"), read.stderr


def test_a_line_search_reads_the_protocols_runs_at_the_papers_value_by_default(tmp_path):
    from dkm.protocol.grid import default_read_also

    (tmp_path / "native").mkdir()
    for path in ("usps.jsonl", "native/usps.jsonl", "mnist.jsonl", "usps-lambda.jsonl"):
        (tmp_path / path).touch()
    search = tmp_path / "reproducible" / "usps-lambda.jsonl"
    assert default_read_also(search, ["usps"], lambda_search=True) == [
        tmp_path / "usps.jsonl", tmp_path / "native" / "usps.jsonl"]
    assert default_read_also(tmp_path / "usps-lambda.jsonl", ["usps"]) == []


@pytest.mark.parametrize("kind", ["directory", "unwritable"])
def test_a_results_path_that_cannot_be_written_is_one_line_before_anything_trains(
        tmp_path, cli, monkeypatch, kind):
    import dkm.protocol.experiments as experiments

    monkeypatch.setattr(experiments, "run_seeds", lambda *a, **k: pytest.fail("it trained"))
    if kind == "directory":
        results, message = tmp_path, f"the results store {tmp_path} is a directory"
    else:   # a folder where no one may make a file: /proc, whatever the user
        results = Path("/proc/dkm/runs.jsonl")
        message = "the results store /proc/dkm/runs.jsonl cannot be written"
    refused = cli("run", *GRID, "--results", str(results))
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith(f"python -m dkm run: error: {message}"), refused.stderr
    assert len(refused.stderr.splitlines()) == 1


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


def test_a_truncated_checkpoint_is_named_in_one_line(tmp_path, cli):
    from dkm.checkpoints import RunCheckpoints, run_key
    from dkm.data import load
    from dkm.methods.common import LoopConfig
    from dkm.protocol.experiments import grid_hashes

    # the checkpoint of the run's pretraining, as a run stopped mid-way leaves it, cut short
    hashes = grid_hashes([load("digits")], ["ae-km"], [8905], scale=0.01, lambda_search=False,
                         overrides=None, loop=LoopConfig(progress=False))
    checkpoint = RunCheckpoints(tmp_path / ".checkpoints", run_key(hashes)).phase("pretraining")
    checkpoint.path.parent.mkdir()
    np.savez(checkpoint.path, meta=np.array("{}"), variable_0=np.zeros(1000))
    _truncate(checkpoint.path)
    refused = cli("run", "--dataset", "digits", "--method", "ae-km", "--seeds", "1", "--scale",
                  "0.01", "--results", str(tmp_path / "runs.jsonl"), "--quiet")
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert refused.stderr.startswith(f"python -m dkm run: error: {checkpoint.path} is not a "
                                     "readable checkpoint")
    assert refused.stderr.rstrip().endswith("delete it to train the phase from its start")


def test_a_truncated_pretraining_cache_file_is_named_and_computed_again(tmp_path, cli):
    run = ("run", "--dataset", "digits", "--method", "ae-km", "--seeds", "1", "--scale", "0.01")
    first = cli(*run, "--results", str(tmp_path / "first.jsonl"), "--progress")
    assert first.returncode == 0, first.stderr
    # --progress: a bar over the grid's runs, one over each phase's epochs, into a log too
    assert "first.jsonl: 100%" in first.stderr and "pretraining: " in first.stderr
    cached, = (tmp_path / ".pretraining-cache").rglob("*.npz")
    _truncate(cached)
    with pytest.warns(RuntimeWarning, match=f"{cached} is not a readable pretraining cache "
                                            "file .*: pretraining seed 8905 again"):
        again = cli(*run, "--results", str(tmp_path / "second.jsonl"))   # no bar in a log
    assert "%|" not in again.stderr
    assert again.returncode == 0, again.stderr
    first, = ResultsStore(tmp_path / "first.jsonl").records()
    second, = ResultsStore(tmp_path / "second.jsonl").records()
    assert second["metrics"] == first["metrics"]     # the same pretraining, made again
    assert zipfile.is_zipfile(cached)


def test_report_refuses_an_empty_or_foreign_store_in_one_line(tmp_path, cli):
    empty, foreign = tmp_path / "empty.jsonl", tmp_path / "scores.npz"
    empty.touch()
    np.savez(foreign, X=np.arange(1000.0))
    for store, message in ((empty, f"{empty} holds no record (the file is empty)"),
                           (foreign, f"{foreign} is not a JSON Lines store of run records"),
                           (tmp_path / "missing.jsonl", "no results store at")):
        refused = cli("report", "--results", str(store))
        assert refused.returncode == 2 and refused.stdout == ""
        assert refused.stderr.startswith(f"python -m dkm report: error: {message}")
        assert len(refused.stderr.splitlines()) == 1, refused.stderr


def test_audit_of_absent_seeds_lists_the_methods_and_seeds_the_store_holds(tmp_path, cli):
    store = ResultsStore(tmp_path / "runs.jsonl")
    for seed, method in ((8905, "km"), (9129, "km"), (8905, "dkm-p")):
        store.append(_record(seed, method))
    refused = cli("audit", "--results", str(store.path), "--seed", "1")
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1
    assert refused.stderr.rstrip().endswith("it holds km seeds 8905, 9129; dkm-p seeds 8905")


def test_the_whole_grid_is_a_plan_to_confirm_with_its_recorded_time(tmp_path, cli):
    refused = cli("run", "--dataset", "usps", "--results", str(tmp_path / "usps.jsonl"))
    assert refused.returncode == 2, refused.stderr
    plan, error = refused.stderr.splitlines()
    assert plan.startswith(f"the grid: 8 methods ({', '.join(PAPER_METHODS)}) × 10 seeds")
    assert ": 80 runs" in plan and "CPU-hours, from the median wall time" in plan
    assert "add --yes" in error
    assert not (tmp_path / "usps.jsonl").exists()


def test_features_far_from_unit_scale_are_named_once_with_what_to_do(tmp_path, cli, monkeypatch):
    import dkm.protocol.experiments as experiments
    from dkm.data import feature_scale_advice

    monkeypatch.setattr(experiments, "run_seeds", lambda *a, **k: [])
    rng = np.random.default_rng(0)
    wide = tmp_path / "wide.npz"
    np.savez(wide, X=rng.uniform(0, 1680, (60, 4)), y=np.arange(60) % 3)
    ran = cli("run", "--dataset", str(wide), "--method", "km", "--seeds", "1",
              "--results", str(tmp_path / "runs.jsonl"), "--quiet")
    assert ran.returncode == 0, ran.stderr
    warned = [line for line in ran.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "MinMaxScaler" in warned[0] and "wide" in warned[0]
    assert feature_scale_advice(rng.uniform(-1, 1, (60, 4))) is None


def test_a_data_path_that_is_a_directory_says_so(tmp_path):
    from dkm.data import load

    with pytest.raises(ValueError, match=f"{tmp_path} is a directory, not a data file"):
        load(str(tmp_path))


def test_a_partition_with_fewer_clusters_than_asked_says_so(tmp_path):
    from dkm.data import from_arrays
    from dkm.protocol.experiments import run_seeds

    points = np.repeat(np.random.default_rng(0).uniform(size=(30, 2)), 2, axis=0)
    data = from_arrays(points, n_clusters=60, name="pairs")   # k = n, 30 distinct points
    said = []
    run_seeds(data, "km", [1], log=said.append)
    assert len(said) == 1
    assert said[0].startswith("pairs km seed 1: ") and "clusters of the 60 asked" in said[0]
