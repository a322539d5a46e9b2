"""benchmarks/authors_code.py: the authors' own code run beside the package.

The pieces the project owns (the data hand-over, the seed restriction, the
record) are tested here on their own and, end to end, on a small script written
in the authors' style that needs no clone of their code. The run of their real
code is tested only when ``--authors-repo`` names a clone.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dkm.data import load
from dkm.protocol.experiments import SPLIT_SEED
from dkm.metrics import evaluate
from dkm.protocol.results import ResultsStore, validate_record
from dkm.splits import validation_test_split

ROOT = Path(__file__).resolve().parents[1]


def _runner():
    spec = importlib.util.spec_from_file_location("authors_code",
                                                  ROOT / "benchmarks" / "authors_code.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


authors_code = _runner()

# A script in the authors' style: their argument names, dataset module, seed list and run loop,
# TensorFlow 1 graph code with tf.layers.dense, their ACC through linear_assignment, and KMeans.
_SCRIPT = '''
import argparse
import numpy as np
import tensorflow as tf
from sklearn.cluster import KMeans
from utils import cluster_acc

parser = argparse.ArgumentParser()
parser.add_argument("-d", "--dataset", type=str.upper, required=True)
parser.add_argument("-s", "--seeded", action="store_true")
parser.add_argument("-c", "--cpu", action="store_true")
parser.add_argument("-p", "--pretrain", action="store_true")
parser.add_argument("-e", "--p_epochs", type=int, default=50)
parser.add_argument("-f", "--f_epochs", type=int, default=5)
parser.add_argument("-l", "--lambda", type=float, default=1.0, dest="lambda_")
args = parser.parse_args()
if args.dataset == "USPS":
    import usps_specs as specs

seeds = [8905, 9129, 291]
n_runs = 3
for run in range(n_runs):
    tf.reset_default_graph()
    tf.set_random_seed(seeds[run])
    np.random.seed(seeds[run])
    x = tf.placeholder(dtype=tf.float32, shape=(None, specs.data.shape[1]))
    h = tf.layers.dense(inputs=x, units=3, activation=tf.nn.relu, name="embedding",
                        reuse=tf.AUTO_REUSE)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        embedding = sess.run(h, feed_dict={x: specs.data})
    labels = KMeans(n_clusters=specs.n_clusters, init="k-means++").fit(embedding).labels_
    np.save("labels-{}.npy".format(seeds[run]), labels)
    print("ACC", cluster_acc(specs.target, labels))
'''

_UTILS = '''
import numpy as np
from sklearn.utils.linear_assignment_ import linear_assignment

def cluster_acc(y_true, y_pred):
    y_true = y_true.astype(np.int64)
    D = max(y_pred.max(), y_true.max()) + 1
    w = np.zeros((D, D), dtype=np.int64)
    for i in range(y_pred.size):
        w[y_pred[i], y_true[i]] += 1
    ind = linear_assignment(w.max() - w)
    return sum([w[i, j] for i, j in ind]) * 1.0 / y_pred.size
'''

_SPECS = '''
from sklearn.datasets.mldata import fetch_mldata
dataset = fetch_mldata("USPS")
data = dataset.data
target = dataset.target - 1
n_samples = data.shape[0]
n_clusters = 10
'''


@pytest.fixture
def styled_repo(tmp_path: Path) -> Path:
    """A git repository holding a script in the authors' style as ``dkm.py``."""
    repo = tmp_path / "authors"
    repo.mkdir()
    for name, text in (("dkm.py", _SCRIPT), ("utils.py", _UTILS), ("usps_specs.py", _SPECS)):
        (repo / name).write_text(textwrap.dedent(text))
    for command in (["init", "-q"], ["add", "."],
                    ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "styled"]):
        subprocess.run(["git", "-C", str(repo), *command], check=True)
    return repo


def test_the_hand_over_gives_the_arrays_fetch_mldata_gave(data_home):
    usps = load("usps", data_home)
    bunch = authors_code.mldata_bunch(usps)
    assert bunch.data.dtype == np.float64 and np.array_equal(bunch.data, usps.X)
    assert bunch.data.min() >= -1 and bunch.data.max() <= 1
    assert np.array_equal(bunch.target - 1, usps.y) and set(bunch.target) == set(range(1, 11))
    mnist = load("mnist", data_home)
    bunch = authors_code.mldata_bunch(mnist)
    assert bunch.data.dtype == np.uint8 and bunch.data.max() == 255
    assert np.allclose(bunch.data / 255.0, mnist.X, atol=1e-7)
    assert np.array_equal(bunch.target, mnist.y)
    with pytest.raises(ValueError, match="USPS and MNIST, not 'digits'"):
        authors_code.mldata_bunch(load("digits"))


def test_linear_assignment_gives_the_matched_pairs():
    cost = np.array([[4, 1, 3], [2, 0, 5], [3, 2, 2]])
    pairs = authors_code.linear_assignment(cost)
    assert pairs.shape == (3, 2)
    assert cost[pairs[:, 0], pairs[:, 1]].sum() == 5  # 1 + 2 + 2, the minimum


def test_one_seed_runs_only_that_seeds_index():
    source = "seeds = [8905, 9129, 291]\nn_runs = 3\nfor run in range(n_runs):\n    pass\n"
    assert authors_code.one_seed_source(source, 291).endswith("for run in [2]:\n    pass\n")
    with pytest.raises(ValueError, match="seed 7 is not in the script's seed list"):
        authors_code.one_seed_source(source, 7)
    with pytest.raises(ValueError, match="defines no seed list"):
        authors_code.one_seed_source("for run in range(n_runs):\n    pass\n", 291)
    with pytest.raises(ValueError, match="has 0 lines"):
        authors_code.one_seed_source("seeds = [291]\n", 291)


def test_the_arguments_are_the_papers_epochs_scaled():
    assert authors_code.script_arguments("dcn-np", "mnist", 0.1) == [
        "-d", "MNIST", "-s", "-c", "-f", "200", "-l", "0.1"]
    assert authors_code.script_arguments("ae-km", "usps", None, scale=0.001) == [
        "-d", "USPS", "-s", "-c", "-e", "1"]


def test_a_styled_script_runs_for_one_seed_into_a_record(styled_repo, tmp_path, data_home):
    results = tmp_path / "results"
    written = authors_code.run(styled_repo, "usps", ["dkm-p"], [9129], results, scale=0.02)
    assert [r["seed"] for r in written] == [9129]
    assert not (styled_repo / "labels-8905.npy").exists()  # the other seeds did not run
    record = written[0]
    validate_record(record)
    assert record["method"] == "dkm-p-authors-code" and record["dataset"] == "usps"
    assert record["params"]["arguments"] == ["-d", "USPS", "-s", "-c", "-p", "-e", "1", "-f",
                                             "1", "-l", "1.0"]
    commit = subprocess.run(["git", "-C", str(styled_repo), "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert record["provenance"]["authors_commit"] == commit  # its untracked outputs aside
    # the record scores the script's final assignment on the package's split
    labels = np.load(styled_repo / "labels-9129.npy")
    usps = load("usps", data_home)
    split = validation_test_split(usps.n_samples, seed=SPLIT_SEED)
    assert record["metrics"]["test"] == evaluate(usps.y[split.test], labels[split.test])
    assert record["metrics"]["validation"] == evaluate(usps.y[split.validation],
                                                       labels[split.validation])
    assert record["metrics"]["test"]["acc"] > 0.2  # above chance (0.1): the data was handed over
    assert [json.loads(line)["seed"] for line in open(results / "usps.jsonl")] == [9129]
    # run again: the record is there, nothing runs
    assert authors_code.run(styled_repo, "usps", ["dkm-p"], [9129], results, scale=0.02) == []
    assert len(ResultsStore(results / "usps.jsonl").records()) == 1


def test_a_failing_script_names_its_log(styled_repo, tmp_path, data_home):
    (styled_repo / "usps_specs.py").write_text("raise RuntimeError('no data')\n")
    with pytest.raises(RuntimeError, match=r"failed with exit code 1; its output is in .*\.log"):
        authors_code.run(styled_repo, "usps", ["dkm-p"], [291], tmp_path / "r", scale=0.02)
    assert "no data" in next((tmp_path / "r" / ".logs").glob("*.log")).read_text()


def test_the_authors_dkm_p_runs_on_usps(authors_repo, tmp_path, data_home):
    written = authors_code.run(authors_repo, "usps", ["dkm-p"], [8905], tmp_path, scale=0.02)
    assert written[0]["metrics"]["test"]["acc"] > 0.2
    assert written[0]["provenance"]["authors_commit"].startswith(
        subprocess.run(["git", "-C", str(authors_repo), "rev-parse", "HEAD"],
                       capture_output=True, text=True, check=True).stdout.strip())


@pytest.mark.parametrize("dataset, specs", [("usps", "usps_specs"), ("mnist", "mnist_specs"),
                                            ("20news", "_20news_specs")])
def test_the_authors_dataset_modules_read_the_packages_data(authors_repo, dataset, specs,
                                                           data_home):
    # in a process of its own: the compatibility layer replaces modules of the process
    check = textwrap.dedent(f'''
        import importlib.util, os, sys
        import numpy as np
        spec = importlib.util.spec_from_file_location("authors_code", {str(ROOT / "benchmarks" /
                                                                          "authors_code.py")!r})
        runner = importlib.util.module_from_spec(spec)
        sys.modules["authors_code"] = runner
        spec.loader.exec_module(runner)
        runner.install_compatibility({dataset!r}, None)
        os.chdir({str(authors_repo)!r})
        sys.path.insert(0, os.getcwd())
        import {specs} as specs
        from dkm.data import load
        ours = load({dataset!r})
        assert np.allclose(specs.data, ours.X, atol=1e-6), "features"
        assert np.array_equal(np.asarray(specs.target, dtype=np.int64), ours.y), "labels"
        print("same data")
    ''')
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0 and "same data" in done.stdout, done.stderr[-2000:]
