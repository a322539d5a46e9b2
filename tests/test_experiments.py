"""The protocol: records, the resumable grid, and the command line."""
from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from dkm.annealing import constant
from dkm.checkpoints import code_version
from dkm.data import load
from dkm.methods.common import LoopConfig
from dkm.protocol import paper
from dkm.protocol.experiments import (TRADEOFF_GRID, configure, fit_methods, grid_cells, run_params,
                                      run_seeds)
from dkm.protocol.grid import grid_records, run_grid
from dkm.protocol.results import ResultsStore, config_hash, new_record

# the repository root (notebooks/conftest.py shares tests/conftest.py's module name, so
# the test modules do not import from either)
REPO_ROOT = Path(__file__).resolve().parents[1]

TINY = LoopConfig(hidden_sizes=(32, 32, 64), progress=False)


@pytest.fixture(scope="module")
def digits():
    return load("digits")


def test_a_record_has_the_protocol_fields(digits):
    record = run_seeds(digits, "dkm-p", [8905], scale=0.02, loop=TINY)[0]
    assert record["dataset"] == "digits" and record["method"] == "dkm-p" and record["seed"] == 8905
    params = record["params"]
    assert params["lambda"] == 1.0 and params["scale"] == 0.02 and params["pretrain_epochs"] == 1
    assert params["sampler"] == "permutation" and params["batch_size"] == 256
    for part in ("validation", "test"):
        assert set(record["metrics"][part]) == {"acc", "nmi", "ari"}
        assert set(record["kmeans_on_embedding"][part]) == {"acc", "nmi", "ari"}
    assert record["provenance"]["tensorflow"] and record["provenance"]["git_commit"]
    assert record["provenance"]["cpu"]
    assert record["wall_time_s"] > 0
    # what it is: the protocol's run, no study's (their hash leaves both out)
    assert (record["study"], record["switches"]) == (None, {})
    assert record["config_hash"] == config_hash("digits", "dkm-p", 8905, params)
    tradeoff, = run_seeds(digits, "dkm-p", [8905], scale=0.02, loop=TINY, tradeoff=0.1)
    assert (tradeoff["study"], tradeoff["switches"]) == (None, {"lambda": 0.1})


def test_a_reproducible_pretraining_is_cached_apart_for_each_number_of_threads(digits, tmp_path,
                                                                             monkeypatch):
    # in the reproducible arithmetic a larger fit's bits can change with TensorFlow's intra-op
    # threads (digits, DKM^p, scale 0.25: 78.91 test ACC on one thread, 78.85 on two), so a
    # run made on two threads must not start from a pretraining cached on one
    import tensorflow as tf

    from dkm.reproducibility.arithmetic import reproducible_environment
    from dkm.protocol.experiments import _shared_pretraining

    for name, value in reproducible_environment().items():  # what the arithmetic is read from
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(tf.config.threading, "get_intra_op_parallelism_threads", lambda: 0)
    config = configure("dkm-p", digits, scale=0.01)
    for threads in ("1", "3"):
        monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", threads)
        _shared_pretraining(digits, [1], config, TINY, tmp_path)
    assert sorted(p.name for p in (tmp_path / "reproducible").iterdir()) == ["threads-1",
                                                                            "threads-3"]
    assert all(len(list(p.glob("*.npz"))) == 1 for p in (tmp_path / "reproducible").iterdir())


def test_a_pretrained_record_names_the_pretraining_it_started_from(digits, tmp_path):
    from dkm.methods.pretraining import load_or_pretrain

    cache = tmp_path / "cache"
    runs = {method: run_seeds(digits, method, [8905, 9129], scale=0.02, loop=TINY,
                              cache_dir=cache) for method in ("dkm-p", "dcn-p", "km")}
    dkm_p, dcn_p = ([r["provenance"]["pretraining"] for r in runs[m]] for m in ("dkm-p", "dcn-p"))
    assert dkm_p == dcn_p and dkm_p[0] != dkm_p[1]  # one pretraining per seed, shared
    assert all("pretraining" not in r["provenance"] for r in runs["km"])
    architecture = TINY.architecture(digits.n_features, digits.n_clusters)
    cached = load_or_pretrain(digits.X, architecture, [9129], 1, TINY, cache_dir=cache)
    assert cached.fingerprint(0) == dkm_p[1]


def test_the_cpu_identity_names_the_model_and_its_widest_vector_instructions():
    from dkm.protocol.provenance import cpu_identity

    intel = ("processor : 0\nvendor_id : GenuineIntel\ncpu family : 6\nmodel : 85\n"
             "model name : Xeon\nstepping : 7\nflags : fpu sse4_2 avx avx2\n"
             "processor : 1\nvendor_id : GenuineIntel\ncpu family : 6\nmodel : 85\n")
    assert cpu_identity(intel) == "GenuineIntel family 6 model 85 stepping 7, avx2"
    assert cpu_identity("vendor_id : X\ncpu family : 1\nflags : fpu").endswith("stepping ?")
    assert cpu_identity("Hardware : an ARM board\n") == platform.machine()


def test_the_arithmetic_settings_name_the_vector_extensions_caps_and_threads(monkeypatch):
    from dkm.protocol.provenance import arithmetic_settings, provenance

    zen4 = "vendor_id : AuthenticAMD\ncpu family : 25\nflags : fpu avx2 avx512f avx512_bf16 sse4_2"
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    settings = arithmetic_settings(zen4)
    assert settings["vector_extensions"] == ["sse4_2", "avx2", "avx512f", "avx512_bf16"]
    assert settings["environment"]["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    assert "XLA_FLAGS" not in settings["environment"]
    assert isinstance(settings["intra_op_threads"], int)
    # this process's TensorFlow says whether it runs oneDNN's kernels (the tests' CPUs differ)
    assert settings["onednn"] in (True, False)
    # a persistent compilation cache's folder decides no kernel: it is left out
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_persistent_cache_directory=/home/x/.cache/dkm")
    assert "TF_XLA_FLAGS" not in arithmetic_settings(zen4)["environment"]
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2 --tf_xla_persistent_cache_directory=/c")
    assert arithmetic_settings(zen4)["environment"]["TF_XLA_FLAGS"] == "--tf_xla_auto_jit=2"
    assert set(provenance()["arithmetic"]) == set(settings)


def test_the_commit_is_dirty_only_when_the_package_itself_changed(tmp_path):
    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True,
                              text=True).stdout.strip()

    package, store = tmp_path / "pkg", tmp_path / "results.jsonl"
    package.mkdir()
    (package / "code.py").write_text("x = 1\n")
    store.write_text("{}\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    head = git("rev-parse", "HEAD")

    store.write_text("{}\n{}\n")  # a record appended by a long job: the code is unchanged
    assert code_version(package) == head
    (package / "code.py").write_text("x = 2\n")
    assert code_version(package) == head + "-dirty"
    assert code_version(tmp_path / "no-such-folder") == "unknown"


def test_seeds_trained_together_match_separate_runs_in_their_metrics(digits):
    together = run_seeds(digits, "km", [1, 2], loop=TINY)
    alone = run_seeds(digits, "km", [2], loop=TINY)
    assert together[1]["metrics"] == alone[0]["metrics"]
    assert together[1]["config_hash"] == alone[0]["config_hash"]


def test_unlabelled_data_gives_records_without_metrics(tmp_path, digits):
    path = tmp_path / "unlabelled.npy"
    np.save(path, digits.X[:200])
    data = load(path, n_clusters=4)
    record = run_seeds(data, "km", [0], loop=TINY)[0]
    assert record["metrics"] is None and record["dataset"] == "unlabelled"


def test_configure_applies_the_papers_tradeoff_then_the_overrides():
    usps_like = SimpleNamespace(name="usps", n_samples=9298)  # configure reads only these
    config = configure("idec-np", usps_like)
    assert (config.gamma, config.update_interval, config.epochs) == (0.1, 30, 200)
    changed = configure("idec-np", usps_like, tradeoff=1e-3, scale=0.5,
                        overrides={"reconstruction": "sum"})
    assert (changed.gamma, changed.reconstruction, changed.epochs) == (1e-3, "sum", 100)
    with pytest.raises(ValueError, match="unknown method"):
        configure("dec", usps_like)


def test_switches_added_later_enter_the_record_only_when_set():
    # DCN's switches for the DKM authors' variant came after records were written: at their
    # defaults they are not recorded, so those records keep their configuration hash.
    from dkm.book.ablations import AUTHORS_DCN

    usps_like = SimpleNamespace(name="usps", n_samples=9298)
    default = run_params("dcn-p", configure("dcn-p", usps_like), TINY, 1.0, "f")
    assert not set(AUTHORS_DCN) & set(default)
    authors = run_params("dcn-p", configure("dcn-p", usps_like, overrides=AUTHORS_DCN), TINY, 1.0,
                         "f")
    assert {k: authors[k] for k in AUTHORS_DCN} == AUTHORS_DCN
    assert {k: v for k, v in authors.items() if k not in AUTHORS_DCN} == default


def test_lambda_search_cells_cover_the_paper_grid():
    cells = grid_cells(["dkm-p", "km"], "usps", lambda_search=True)
    assert [c.tradeoff for c in cells if c.method == "dkm-p"] == list(TRADEOFF_GRID)
    assert [c.tradeoff for c in cells if c.method == "km"] == [None]
    assert [c.tradeoff for c in grid_cells(["dkm-p"], "usps", False)] == [1.0]


def test_a_cell_carries_the_tradeoff_its_overrides_set():
    # what the log line of a piece prints: the λ the run trains with, not the paper's
    cell, idec = grid_cells(["dkm-p", "idec-p"], "usps", False, {"lam": 3.0})
    assert (cell.tradeoff, cell.overrides) == (3.0, (("lam", 3.0),))
    assert idec.tradeoff == paper.optimal_tradeoff("idec-p", "usps")  # IDEC's γ is not "lam"


def test_grid_writes_each_run_once_and_resumes(tmp_path, digits):
    store = tmp_path / "runs.jsonl"
    kwargs = dict(scale=0.02, loop=TINY, progress=False, log=lambda m: None)
    assert run_grid([digits], ["km", "dkm-p"], [1, 2], store, **kwargs) == 4
    assert run_grid([digits], ["km", "dkm-p"], [1, 2], store, **kwargs) == 0
    assert run_grid([digits], ["km", "dkm-p"], [1, 2, 3], store, **kwargs) == 2
    records = ResultsStore(store).records()
    assert len(records) == 6 and len({r["config_hash"] for r in records}) == 6


def test_a_grids_records_are_read_from_its_store_and_the_stores_it_reads_besides(tmp_path,
                                                                                digits):
    kwargs = dict(scale=0.02, loop=TINY)
    quiet = dict(progress=False, log=lambda m: None)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    run_grid([digits], ["km"], [1, 2], first, **quiet, **kwargs)
    run_grid([digits], ["km", "dkm-p"], [1, 2], second, read_also=[first], **quiet,
             **kwargs)             # KM's runs are held by the first store, named
    records = grid_records([digits], ["km", "dkm-p"], [1, 2], second, read_also=[first],
                           **kwargs)
    assert [(r["method"], r["seed"]) for r in records] == [("km", 1), ("km", 2), ("dkm-p", 1),
                                                           ("dkm-p", 2)]
    assert len(ResultsStore(second).records()) == 2
    assert [r["method"] for r in grid_records([digits], ["km", "dkm-p"], [1, 2], second,
                                              **kwargs)] == ["dkm-p", "dkm-p"]  # its own only
    assert grid_records([digits], ["km"], [1], second, scale=0.05,
                        loop=TINY) == []               # another scale: another grid


GRID_SCRIPT = """
import sys
from dkm.methods.common import LoopConfig
from dkm.protocol.grid import run_grid

run_grid(["digits"], ["km", "dkm-p"], [1, 2, 3], sys.argv[1], scale=0.02, seeds_per_batch=1,
         loop=LoopConfig(hidden_sizes=(32, 32, 64), progress=False), progress=False)
"""


def test_a_grid_killed_mid_way_completes_on_restart_without_duplicates(tmp_path):
    store = tmp_path / "runs.jsonl"
    process = subprocess.Popen([sys.executable, "-c", GRID_SCRIPT, str(store)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        if store.exists() and len(store.read_text().splitlines()) >= 4:
            break
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    before = len(ResultsStore(store).records())
    assert 1 <= before < 6
    subprocess.run([sys.executable, "-c", GRID_SCRIPT, str(store)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lines = store.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 6 and len({r["config_hash"] for r in records}) == 6


def test_cli_help_documents_every_option(cli):
    out = cli("run", "--help").stdout
    for option in ("--dataset", "--method", "--seeds", "--scale", "--lambda-search", "--results"):
        assert option in out
    assert "--vs-paper" in cli("report", "--help").stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("run", "--dataset", "nosuchdata", "--method", "km", "--results", "x.jsonl"),
         "unknown dataset 'nosuchdata'"),
        (("run", "--dataset", "digits", "--method", "kmeans", "--results", "x.jsonl"),
         "unknown method 'kmeans'"),
        (("run", "--dataset", "digits", "--scale", "-1", "--results", "x.jsonl"), "must be > 0"),
        (("report", "--results", "missing.jsonl"), "no results store"),
        (("snapshot", "--dataset", "digits", "--snapshots", "s"), "name the methods to keep"),
        (("pending", "--results", "missing"), "no results folder"),
    ],
)
def test_cli_errors_are_one_line_and_non_zero_before_tensorflow_starts(tmp_path, args, message):
    # the command line's main(), as `python -m dkm` calls it (argparse's own refusals exit),
    # and whether TensorFlow was imported
    script = ("import sys\nfrom dkm.cli import main\n"
              "try:\n    status = main(sys.argv[1:])\n"
              "except SystemExit as refusal:\n    status = refusal.code\n"
              "print(status, 'tensorflow' in sys.modules)")
    completed = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                               text=True, cwd=tmp_path,
                               env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert completed.stdout.split() == ["2", "False"], completed.stderr
    assert message in completed.stderr
    assert "Traceback" not in completed.stderr


def test_a_fault_inside_a_fit_keeps_its_traceback_and_a_bad_file_is_one_line(tmp_path, cli,
                                                                            monkeypatch):
    import dkm.protocol.experiments as experiments

    def singular(*args, **kwargs):  # a ValueError raised inside NumPy, as a fault would be
        return np.linalg.inv(np.zeros((2, 2)))

    monkeypatch.setattr(experiments, "evaluate", singular)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        cli("run", "--dataset", "digits", "--method", "km", "--seeds", "1", "--scale", "0.02",
            "--results", str(tmp_path / "runs.jsonl"), "--quiet")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b\n1,2\n3,4,5\n")
    refused = cli("run", "--dataset", str(ragged), "--n-clusters", "2", "--method", "km",
                  "--results", str(tmp_path / "ragged.jsonl"))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.startswith(f"python -m dkm run: error: {ragged}: cannot parse the CSV")


def test_cli_starts_tensorflow_without_keras(tmp_path):
    script = ("import sys\nfrom dkm.cli import main\nstatus = main(sys.argv[1:])\n"
              "print(status, 'tensorflow' in sys.modules, 'keras' in sys.modules)")
    completed = subprocess.run(
        [sys.executable, "-c", script, "run", "--dataset", "digits", "--method", "km", "--seeds",
         "1", "--results", str(tmp_path / "runs.jsonl"), "--quiet"],
        capture_output=True, text=True, cwd=tmp_path,
        env={**{k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"},
             "PYTHONPATH": str(REPO_ROOT)})
    assert completed.stdout.split()[-3:] == ["0", "True", "False"], completed.stderr
    record, = ResultsStore(tmp_path / "runs.jsonl").records()
    assert record["params"]["arithmetic"] == "reproducible"      # the records' default


def test_a_store_of_one_arithmetic_refuses_the_runs_of_the_other(tmp_path, cli):
    from dkm.reproducibility.arithmetic import reproducible_environment

    store = ResultsStore(tmp_path / "digits.jsonl")
    made = cli("run", "--dataset", "digits", "--method", "km", "--seeds", "1",
               "--results", str(store.path), "--quiet")        # native, as this process runs
    assert made.returncode == 0, made.stderr
    native, = store.records()
    reproducible = new_record("digits", "km", native["seed"],
                              {**native["params"], "arithmetic": "reproducible"},
                              metrics=native["metrics"], provenance={
                                  "arithmetic": {"environment": reproducible_environment({})}})
    other = ResultsStore(tmp_path / "made-elsewhere.jsonl")
    other.append(reproducible)
    refused = cli("run", "--dataset", "digits", "--method", "km", "--seeds", "2",
                  "--results", str(other.path), "--quiet")
    assert refused.returncode == 2
    assert "reproducible arithmetic" in refused.stderr and "--reproducible" in refused.stderr
    assert len(other.records()) == 1


def test_a_users_keras_setting_is_kept(monkeypatch):
    from dkm import cli as command_line

    monkeypatch.delitem(sys.modules, "tensorflow")  # as before TensorFlow starts
    monkeypatch.setenv("TF_USE_LEGACY_KERAS", "0")
    command_line._start_tensorflow_without_keras()
    assert os.environ["TF_USE_LEGACY_KERAS"] == "0"
    monkeypatch.delenv("TF_USE_LEGACY_KERAS")
    command_line._start_tensorflow_without_keras()
    assert os.environ["TF_USE_LEGACY_KERAS"] == "1"


def test_cli_run_then_report(tmp_path, cli):
    store = tmp_path / "runs.jsonl"
    completed = cli("run", "--dataset", "digits", "--method", "km", "--method", "ae-km",
                     "--seeds", "2", "--scale", "0.02", "--results", str(store), "--quiet")
    assert completed.returncode == 0, completed.stderr
    assert "4 new records" in completed.stdout
    report = cli("report", "--results", str(store), "--table", "table1", "--vs-paper")
    assert report.returncode == 0, report.stderr
    assert "AE-KM" in report.stdout and "72.9" in report.stdout  # the paper's USPS AE-KM ACC


def test_cli_report_reads_several_stores_and_says_which(tmp_path, cli):
    # two results folders, one store each, read together
    first, second = tmp_path / "a" / "one.jsonl", tmp_path / "b" / "two.jsonl"
    first.parent.mkdir()
    second.parent.mkdir()
    for store, seeds in ((first, "1"), (second, "2")):
        assert cli("run", "--dataset", "digits", "--method", "km", "--seeds", seeds, "--results",
                    str(store), "--quiet").returncode == 0
    both = cli("report", "--results", str(first.parent), "--results", str(second),
                "--table", "table1")
    assert both.returncode == 0, both.stderr
    assert f"read 3 records from {first}, {second}" in both.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = cli("report", "--results", str(empty))
    assert refused.returncode == 2 and "no results store (*.jsonl) in the directory" in refused.stderr


def test_cli_pending_lists_the_missing_runs_and_the_commands_that_add_them(tmp_path, cli):
    from dkm.book import ablations
    from dkm.protocol import paper

    store = tmp_path / "digits.jsonl"
    assert cli("run", "--dataset", "digits", "--method", "km", "--seeds", "1", "--scale", "0.02",
               "--results", str(store), "--quiet").returncode == 0
    search = tmp_path / "20news-lambda.jsonl"   # a line search the results folder holds
    search.touch()
    (tmp_path / "ablations").mkdir()
    (tmp_path / "ablations" / "lambda.jsonl").touch()   # a study declared for USPS, not started
    (tmp_path / "ablations" / "alpha.jsonl").touch()    # a study for any dataset: none run yet
    small = cli("pending", "--results", str(tmp_path), "--seeds", "2", "--scale", "0.02")
    assert small.returncode == 0, small.stderr
    lines = small.stdout.splitlines()
    first, second = paper.PAPER_SEEDS[:2]
    # the stores it found, those the book reads marked
    assert lines[0] == (f"the stores of {tmp_path} (* the book reads its datasets' runs there): "
                        "digits.jsonl, 20news-lambda.jsonl*, ablations/alpha.jsonl*, "
                        "ablations/lambda.jsonl*")
    assert lines[1] == f"{store}: 15 of 16 runs missing"
    # the store's run is native (the fixture runs natively): its commands say so
    assert (f"  python -m dkm run --dataset digits --method km --seed {second} --scale 0.02 "
            f"--native --results {store}") in lines
    assert (f"  python -m dkm run --dataset digits --method dkm-p --seed {first} --seed {second} "
            f"--scale 0.02 --native --results {store}") in lines
    study_seeds = " ".join(f"--seed {s}" for s in paper.PAPER_SEEDS[:3])
    variants = len(ablations.STUDIES["lambda"].variants)
    assert f"{tmp_path / 'ablations' / 'lambda.jsonl'}: {3 * variants} runs missing" in lines
    assert (f"  python -m dkm ablate --study lambda --dataset usps --method dkm-p {study_seeds} "
            f"--scale 0.02 --results {tmp_path / 'ablations'}") in lines
    assert not any("alpha" in line for line in lines[1:])  # found, and nothing to run
    from dkm.protocol.declarations import LINE_SEARCHES

    assert LINE_SEARCHES["20news"] == ("dkm-p", "dkm-a")
    assert f"{search}: the line search misses 6 of 6 seeds' grids" in lines
    assert (f"  python -m dkm run --dataset 20news --method dkm-a --lambda-search {study_seeds} "
            f"--scale 0.02 --results {search}") in lines
    assert not any("usps-lambda" in line for line in lines)  # a search the folder does not hold
    full = cli("pending", "--results", str(tmp_path), "--seeds", "1").stdout   # the paper's epochs
    assert f"{store}: 8 of 8 runs missing" in full and "--scale" not in full
    too_many = cli("pending", "--results", str(tmp_path), "--study-seeds", "11")
    assert too_many.returncode == 2 and "--study-seeds 11: the paper has 10 seeds" in too_many.stderr


def test_cli_pending_reads_the_runs_other_stores_hold_and_names_a_native_stores_arithmetic(
        tmp_path, cli):
    from dkm.protocol import paper
    from dkm.protocol.results import ResultsStore

    first, *others = paper.PAPER_SEEDS[:3]
    # DKM^p's search of the first seed: every value but the paper's, which the protocol's
    # store holds; both stores native
    searched = [r for r in ResultsStore(REPO_ROOT / "results" / "native" / "usps-lambda.jsonl")
                .records() if r["method"] == "dkm-p" and r["seed"] == first]
    protocol = [r for r in ResultsStore(REPO_ROOT / "results" / "native" / "usps.jsonl").records()
                if r["method"] == "dkm-p" and r["seed"] == first]
    assert len(searched) == 7 and 1.0 not in {r["params"]["lambda"] for r in searched}
    for store, records in (("usps-lambda.jsonl", searched), ("usps.jsonl", protocol)):
        for record in records:
            ResultsStore(tmp_path / store).append(record)
    lines = cli("pending", "--results", str(tmp_path), "--seeds", "1").stdout.splitlines()
    assert f"{tmp_path / 'usps.jsonl'}: 7 of 8 runs missing" in lines
    assert (f"  python -m dkm run --dataset usps --method km --seed {first} --native "
            f"--results {tmp_path / 'usps.jsonl'}") in lines
    others = " ".join(f"--seed {seed}" for seed in others)
    assert (f"  python -m dkm run --dataset usps --method dkm-p --lambda-search {others} "
            f"--native --results {tmp_path / 'usps-lambda.jsonl'}") in lines


def test_cli_pending_checks_the_reruns_stores_and_leaves_the_superseded_ones_whole(tmp_path, cli):
    # USPS's search: its native runs superseded (native/), its reruns under way (reproducible/)
    from dkm.protocol.results import ResultsStore

    native = [r for r in ResultsStore(REPO_ROOT / "results" / "native" / "usps-lambda.jsonl")
              .records() if r["method"] == "dkm-p"][:2]
    reruns = ResultsStore(REPO_ROOT / "results" / "reproducible" / "usps-lambda.jsonl").records()
    first = paper.PAPER_SEEDS[0]
    left = [r for r in reruns if r["method"] == "dkm-p" and r["seed"] == first
            and r["params"]["lambda"] == 0.1]
    protocol = ResultsStore(REPO_ROOT / "results" / "usps.jsonl").records()
    for path, records in {"usps.jsonl": protocol, "native/usps-lambda.jsonl": native,
                          "reproducible/usps-lambda.jsonl": [r for r in reruns
                                                             if r not in left]}.items():
        for record in records:
            ResultsStore(tmp_path / path).append(record)
    lines = cli("pending", "--results", str(tmp_path)).stdout.splitlines()
    assert lines[0].endswith(": usps.jsonl*, reproducible/usps-lambda.jsonl*")
    target = tmp_path / "reproducible" / "usps-lambda.jsonl"
    assert lines[1] == f"{target}: the line search misses 1 of 18 seeds' grids"
    assert lines[2] == (f"  python -m dkm run --dataset usps --method dkm-p --lambda-search "
                        f"--seed {first} --results {target}")
    assert len(lines) == 3  # the superseded native runs are not asked for
    for record in left:
        ResultsStore(target).append(record)
    lines = cli("pending", "--results", str(tmp_path)).stdout.splitlines()
    assert lines[1] == f"every run of the stores in {tmp_path} is there"


def test_cli_pending_reads_a_run_of_one_distance_as_no_run_of_the_other(tmp_path, cli):
    # 20NEWS's store holds the protocol's runs and the supplement's cosine DKM runs: a cosine
    # run of DKM^p used to count as the Euclidean one, and the cosine grid was never asked for
    from dkm.protocol.results import ResultsStore

    records = ResultsStore(REPO_ROOT / "results" / "20news.jsonl").records()
    first = paper.PAPER_SEEDS[0]
    store = tmp_path / "20news.jsonl"
    for record in records:
        cosine = record["params"].get("distance") == "cosine"
        if not (record["method"] == "dkm-p" and record["seed"] == first and not cosine) \
                and not (record["method"] == "dkm-a" and record["seed"] == first and cosine):
            ResultsStore(store).append(record)
    lines = cli("pending", "--results", str(tmp_path)).stdout.splitlines()
    assert lines[1:] == [
        f"{store}: 1 of 80 runs missing",
        f"  python -m dkm run --dataset 20news --method dkm-p --seed {first} --native "
        f"--results {store}",
        f"{store}: 1 of 20 runs with the cosine distance missing",
        f"  python -m dkm run --dataset 20news --method dkm-a --seed {first} --native "
        f"--distance cosine --results {store}"]


def test_cli_run_keeps_tensorflows_start_up_lines_out_unless_verbose(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    args = [sys.executable, "-m", "dkm", "run", "--dataset", "digits", "--method", "ae-km",
            "--seeds", "1", "--scale", "0.01", "--quiet"]
    quiet = subprocess.run(args + ["--results", str(tmp_path / "quiet.jsonl")],
                           capture_output=True, text=True, cwd=REPO_ROOT, env=env)
    assert quiet.returncode == 0, quiet.stderr
    assert "absl::InitializeLog" not in quiet.stderr and "cuda" not in quiet.stderr.lower()
    verbose = subprocess.run(args + ["--results", str(tmp_path / "verbose.jsonl"), "--verbose"],
                             capture_output=True, text=True, cwd=REPO_ROOT, env=env)
    assert verbose.returncode == 0, verbose.stderr
    assert "absl::InitializeLog" in verbose.stderr  # TensorFlow's own start-up line


def test_fit_methods_shares_one_pretraining_and_returns_embeddings(digits, monkeypatch):
    import tensorflow as tf

    import dkm.methods.pretraining as pretraining
    from dkm.autoencoder import Autoencoder
    from dkm.training import embed

    computed = []

    def counting_pretrain(*args, **kwargs):
        computed.append(original(*args, **kwargs))
        return computed[-1]

    original = pretraining.pretrain
    monkeypatch.setattr(pretraining, "pretrain", counting_pretrain)
    loop = LoopConfig(hidden_sizes=(32,), progress=False)
    seeds = [1, 2]
    results = fit_methods(digits, ["ae-km", "dkm-p", "dcn-p", "km"], seeds, scale=0.04,
                          tradeoffs={"dkm-p": 0.5}, loop=loop)
    assert list(results) == ["ae-km", "dkm-p", "dcn-p", "km"]
    assert len(computed) == 1                       # one pretraining, shared by three methods
    n, p = digits.n_samples, digits.n_clusters
    for name, result in results.items():
        assert result.labels.shape == (2, n)
        if name != "km":
            assert result.embeddings.shape == (2, n, p)
    # AE-KM's embedding is the pretrained network's: where DKM^p and DCN^p start.
    start = Autoencoder(loop.architecture(digits.n_features, p), seeds, weights=computed[0].weights)
    np.testing.assert_array_equal(results["ae-km"].embeddings, embed(start, tf.constant(digits.X)))
    for name in ("ae-km", "dkm-p", "dcn-p"):
        history = results[name].history
        np.testing.assert_array_equal(history["pretrain_loss"], computed[0].history["loss"])
        assert history["pretrain_embedding_norm"].shape == (2, 2)   # 50 epochs × 0.04
    for name, epochs in (("dkm-p", 4), ("dcn-p", 2)):                # 100 and 50 × 0.04
        norm = results[name].history["embedding_norm"]
        assert norm.shape == (2, epochs) and np.isfinite(norm).all() and (norm > 0).all()


def test_fit_methods_rejects_unknown_methods_and_misplaced_tradeoffs(digits):
    with pytest.raises(ValueError, match="unknown method"):
        fit_methods(digits, ["kmeans"], [1])
    with pytest.raises(ValueError, match="trade-off"):
        fit_methods(digits, ["ae-km"], [1], tradeoffs={"ae-km": 1.0})
    with pytest.raises(ValueError, match="scale"):
        fit_methods(digits, ["km"], [1], scale=0)


@pytest.fixture
def trained_results(monkeypatch):
    """The MethodResult of every :meth:`dkm.protocol.registry.Method.train` call made while it is
    active."""
    from dkm.protocol import registry

    results = []
    train = registry.Method.train

    def recording(self, *args, **kwargs):
        results.append(train(self, *args, **kwargs))
        return results[-1]

    monkeypatch.setattr(registry.Method, "train", recording)
    return results


@pytest.mark.parametrize("method", ["dkm-p", "dcn-p", "idec-p", "dkm-a"])
def test_a_grid_record_and_an_estimator_fit_with_its_seed_and_pretraining_agree(
        method, digits, tmp_path, trained_results):
    from dkm.methods.pretraining import load_or_pretrain
    from dkm.protocol import registry
    from dkm.protocol.experiments import split_scores

    seed, cache = 8905, tmp_path / "pretraining"
    run_grid([digits], [method], [seed], tmp_path / "runs.jsonl", scale=0.02, loop=TINY,
             cache_dir=cache, progress=False, log=lambda m: None)
    record, = ResultsStore(tmp_path / "runs.jsonl").records()
    protocol, = trained_results

    entry = registry.get(method)
    config = configure(method, digits, scale=0.02)
    pretrained = (load_or_pretrain(digits.X, TINY.architecture(digits.n_features, 10), [seed],
                                   config.pretrain_epochs, TINY, cache_dir=cache)
                  if entry.pretrained else None)
    model = entry.make_estimator(config, TINY, digits.n_clusters, pretrained)
    model.set_params(random_state=seed).fit(digits.X)

    np.testing.assert_array_equal(model.labels_, protocol.labels[0])
    np.testing.assert_array_equal(model.embedding_, protocol.embeddings[0])
    assert split_scores(digits.y, model.labels_) == record["metrics"]


def test_a_deep_kmeans_written_by_hand_gives_the_protocols_labels(digits, tmp_path,
                                                                  trained_results):
    """What a user writes: DeepKMeans with the record's λ, epochs and shared pretraining."""
    from dkm import DeepKMeans
    from dkm.methods.pretraining import load_or_pretrain

    seed, cache = 9129, tmp_path / "pretraining"
    record = run_seeds(digits, "dkm-p", [seed], scale=0.02, loop=TINY, cache_dir=cache)[0]
    params = record["params"]
    assert params["pretrain_epochs"] == 1 and params["schedule"]["alphas"] == [1000.0]
    pretrained = load_or_pretrain(digits.X, TINY.architecture(digits.n_features, 10), [seed],
                                  1, TINY, cache_dir=cache)
    model = DeepKMeans(10, lam=params["lambda"], pretrain_epochs=1,
                       schedule=constant(1000.0, params["schedule"]["epochs_per_alpha"]),
                       hidden_sizes=TINY.hidden_sizes, pretrained=pretrained, random_state=seed,
                       progress=False).fit(digits.X)
    np.testing.assert_array_equal(model.labels_, trained_results[0].labels[0])


REPORT_SCRIPT = ("import sys\nfrom dkm.cli import main\nstatus = main(sys.argv[1:])\n"
                 "print(status, 'tensorflow' in sys.modules)")


def test_report_claims_tests_the_claims_on_any_data_without_tensorflow(tmp_path):
    store = ResultsStore(tmp_path / "mine.jsonl")
    for method, accs in (("dkm-p", [0.80, 0.82, 0.81]), ("dcn-p", [0.70, 0.71, 0.72])):
        for seed, acc in zip(paper.PAPER_SEEDS, accs):
            split = {"acc": acc, "nmi": acc, "ari": acc}
            store.append(new_record("mine", method, seed, {"scale": 1.0, "lambda": 1.0},
                                    metrics={"validation": split, "test": split}))
    completed = subprocess.run(
        [sys.executable, "-c", REPORT_SCRIPT, "report", "--results", str(store.path), "--claims"],
        capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert completed.stdout.splitlines()[-1] == "0 False", completed.stderr
    assert "## mine: the paper's claims, margin from its runs' spread" in completed.stdout
    assert "| DKM^p > DCN^p | 3 | +10.0 ± 2.5 | 0.9 | holds |" in completed.stdout


def test_report_claims_replaces_the_tables(tmp_path, cli):
    ResultsStore(tmp_path / "mine.jsonl").path.write_text("")
    refused = cli("report", "--results", str(tmp_path / "mine.jsonl"), "--claims",
                  "--table", "table1")
    assert refused.returncode == 2 and "--claims replaces the tables" in refused.stderr
