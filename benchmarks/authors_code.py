"""Run the DKM authors' own code beside the package: same data, same seeds, the package's records.

The authors published their TensorFlow 1 code (the public repository
``MaziarMF/deep-k-means``, GPL): ``dkm.py`` (DKM^p, DKM^a), ``dcn.py`` (DCN^np,
DCN^p) and ``aekm.py`` (AE-KM). This runner takes a clone of it that the user
provides (``--authors-repo PATH``; the project neither vendors nor copies their
code), runs their scripts on the package's datasets with the paper's seeds and
the paper's epochs and λ, and appends one record per (method, seed) in the
package's schema to ``<results>/<dataset>.jsonl``; ``report`` and the book
read them like any store. Method ids are ``<paper method>-authors-code``
(:data:`dkm.protocol.registry.METHODS`); each record's provenance names the clone's
commit (``authors_commit``).

Each (method, seed) runs in its own process, and a record is written as soon
as its run ends; runs already in the store are skipped, so an interrupted
command resumes when started again.

Compatibility layer
-------------------
Their scripts run unchanged apart from these replacements, made in the child
process before a script starts (:func:`install_compatibility`,
:func:`one_seed_source`):

1. ``import tensorflow as tf`` gets ``tensorflow.compat.v1`` with TensorFlow 2's
   behaviour disabled: their code builds TensorFlow 1 graphs (placeholders,
   sessions) that TensorFlow 2 runs only in that mode.
2. ``tf.layers.dense``: ``tensorflow.compat.v1.layers`` needs the separate
   ``tf_keras`` package in TensorFlow 2.16 and later. A minimal ``dense`` makes
   what TensorFlow 1's made with the arguments they pass: variables
   ``<name>/kernel`` (Glorot-uniform) and ``<name>/bias`` (zeros), reused by
   name, ``activation(x @ kernel + bias)``.
3. ``fetch_mldata`` (``sklearn.datasets`` and ``sklearn.datasets.mldata``) was
   removed from scikit-learn when mldata.org closed. A replacement hands over
   the package's arrays in the format theirs returned (:func:`mldata_bunch`):
   USPS, the paper's smoothed variant in [-1, 1], labels 1-10 (their script
   subtracts 1); MNIST, the 70,000 images as grey levels 0-255 (their script
   divides by 255), labels 0-9.
4. ``fetch_20newsgroups`` reads scikit-learn's cache in the data directory and
   never downloads, as the package's loader does: the same documents in the
   same order.
5. ``sklearn.utils.linear_assignment_.linear_assignment`` (used by their ACC)
   was removed from scikit-learn 0.23: SciPy's ``linear_sum_assignment``, as
   the array of matched pairs it returned.
6. ``sklearn.cluster.KMeans`` runs k-means++ ten times (``n_init=10``), as
   every scikit-learn of their time did by default; scikit-learn 1.4 and later
   run it once.
7. One seed per process: their loop ``for run in range(n_runs):`` runs over the
   index of the requested seed in their own seed list. Each of their runs
   resets the graph and seeds TensorFlow and NumPy from that list, so a run
   does not depend on the runs before it.
8. Scoring: their scripts run without ``-v`` (their own evaluation on all
   samples is left as it is, printed to the log). The runner keeps the cluster
   assignment their last evaluation scores, the final one, and scores it with
   the package's metrics on the package's validation/test split, as every
   record is scored.

Usage::

    python benchmarks/authors_code.py --authors-repo PATH --dataset usps \\
        --method dkm-p --method dkm-a --seeds 10 --results results/authors-code

``--scale`` multiplies the epoch counts (at least one epoch each) for quick
checks; ``--log-dir`` keeps each run's output (default: beside the store, in
``.logs/``).
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

#: Their scripts' dataset names (``-d``), by package dataset id.
DATASET_FLAGS = {"usps": "USPS", "mnist": "MNIST", "20news": "20NEWS"}

_RUN_LOOP = "for run in range(n_runs):"


@dataclasses.dataclass(frozen=True)
class AuthorsMethod:
    """How one of their scripts trains one of the paper's methods.

    Attributes
    ----------
    script : str
        The script in their repository.
    flags : tuple of str
        Its switches for this method (``-p`` pretraining, ``-a`` annealing).
    epochs : tuple of (str, int)
        Each epoch option with the paper's value (scaled by ``--scale``).
    takes_tradeoff : bool
        Whether the script takes λ (``-l``).
    """

    script: str
    flags: tuple[str, ...]
    epochs: tuple[tuple[str, int], ...]
    takes_tradeoff: bool


#: The paper's protocol in their scripts' options: pretraining 50 epochs, DCN^p 50 and DCN^np 200,
#: DKM^a 40 α × 5 epochs and DKM^p 20 × 5 epochs at α = 1000.
METHODS: dict[str, AuthorsMethod] = {
    "ae-km": AuthorsMethod("aekm.py", (), (("-e", 50),), False),
    "dcn-np": AuthorsMethod("dcn.py", (), (("-f", 200),), True),
    "dcn-p": AuthorsMethod("dcn.py", ("-p",), (("-e", 50), ("-f", 50)), True),
    # dkm.py: -f epochs for each of the 40 annealed α (DKM^a) or 20 copies of α = 1000 (DKM^p)
    "dkm-a": AuthorsMethod("dkm.py", ("-a",), (("-f", 5),), True),
    "dkm-p": AuthorsMethod("dkm.py", ("-p",), (("-e", 50), ("-f", 5)), True),
}


def script_arguments(method: str, dataset: str, tradeoff: float | None,
                     scale: float = 1.0) -> list[str]:
    """Their script's command-line arguments for ``method`` on ``dataset``.

    Always seeded (``-s``) and on the CPU (``-c``); epochs scaled by ``scale``,
    at least one.

    Examples
    --------
    >>> script_arguments("dkm-p", "usps", 1.0)
    ['-d', 'USPS', '-s', '-c', '-p', '-e', '50', '-f', '5', '-l', '1.0']
    """
    spec = METHODS[method]
    arguments = ["-d", DATASET_FLAGS[dataset], "-s", "-c", *spec.flags]
    for option, epochs in spec.epochs:
        arguments += [option, str(max(1, round(epochs * scale)))]
    if spec.takes_tradeoff:
        arguments += ["-l", repr(float(tradeoff))]
    return arguments


def one_seed_source(source: str, seed: int) -> str:
    """Their script with its run loop restricted to ``seed`` (compatibility item 7).

    Raises
    ------
    ValueError
        When the script has no single run loop or no seed list holding ``seed``
        (another version of their code).
    """
    seeds = _seed_list(source)
    if seed not in seeds:
        raise ValueError(f"seed {seed} is not in the script's seed list {seeds}: their code "
                         "runs only its own seeds")
    if source.count(_RUN_LOOP) != 1:
        raise ValueError(f"the script has {source.count(_RUN_LOOP)} lines {_RUN_LOOP!r}, not one: "
                         "is this the authors' deep-k-means code?")
    return source.replace(_RUN_LOOP, f"for run in [{seeds.index(seed)}]:")


def _seed_list(source: str) -> list[int]:
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "seeds"):
            return list(ast.literal_eval(node.value))
    raise ValueError("the script defines no seed list 'seeds = [...]': is this the authors' "
                     "deep-k-means code?")


def mldata_bunch(dataset: Any) -> types.SimpleNamespace:
    """The package's dataset as their ``fetch_mldata`` returned it (compatibility item 3).

    Parameters
    ----------
    dataset : dkm.data.Dataset
        ``usps`` (the paper's smoothed variant) or ``mnist``.

    Returns
    -------
    types.SimpleNamespace
        ``data`` (float64 in [-1, 1] for USPS, uint8 grey levels for MNIST) and
        ``target`` (float64: 1-10 for USPS, 0-9 for MNIST).
    """
    if dataset.name == "usps":
        return types.SimpleNamespace(data=dataset.X.astype(np.float64),
                                     target=dataset.y.astype(np.float64) + 1)
    if dataset.name == "mnist":
        grey = np.rint(dataset.X.astype(np.float64) * 255)
        return types.SimpleNamespace(data=grey.astype(np.uint8), target=dataset.y.astype(np.float64))
    raise ValueError(f"fetch_mldata served USPS and MNIST, not {dataset.name!r}")


def linear_assignment(cost: np.ndarray) -> np.ndarray:
    """The matched (row, column) pairs of a minimum-cost assignment (compatibility item 5)."""
    from scipy.optimize import linear_sum_assignment

    rows, columns = linear_sum_assignment(cost)
    return np.stack([rows, columns], axis=1)


def _dense(v1: Any) -> Callable[..., Any]:
    """TensorFlow 1's ``tf.layers.dense`` for the arguments their code passes (item 2)."""
    def dense(inputs, units, activation=None, name=None, reuse=None):
        with v1.variable_scope(name, default_name="dense", reuse=reuse):
            kernel = v1.get_variable("kernel", [int(inputs.shape[-1]), units], dtype=inputs.dtype,
                                     initializer=v1.glorot_uniform_initializer())
            bias = v1.get_variable("bias", [units], dtype=inputs.dtype,
                                   initializer=v1.zeros_initializer())
            outputs = v1.nn.bias_add(v1.matmul(inputs, kernel), bias)
            return outputs if activation is None else activation(outputs)
    return dense


def install_compatibility(dataset_name: str, data_home: str | None) -> None:
    """Items 1-6 of the module docstring, in this process's ``sys.modules``."""
    import sklearn.cluster
    import sklearn.datasets
    import tensorflow

    from dkm.data import get_data_home, load

    v1 = tensorflow.compat.v1
    v1.disable_v2_behavior()
    tf1 = types.ModuleType("tensorflow")
    tf1.__getattr__ = lambda name: getattr(v1, name)
    tf1.layers = types.SimpleNamespace(dense=_dense(v1))
    sys.modules["tensorflow"] = tf1

    def fetch_mldata(name: str, *args: Any, **kwargs: Any) -> types.SimpleNamespace:
        wanted = {"USPS": "usps", "MNIST original": "mnist"}.get(name)
        if wanted != dataset_name:
            raise ValueError(f"fetch_mldata({name!r}) asked while running {dataset_name!r}")
        return mldata_bunch(load(dataset_name, data_home))

    mldata = types.ModuleType("sklearn.datasets.mldata")
    mldata.fetch_mldata = fetch_mldata
    sys.modules["sklearn.datasets.mldata"] = mldata
    sklearn.datasets.fetch_mldata = fetch_mldata

    fetch_20newsgroups = sklearn.datasets.fetch_20newsgroups
    scikit_learn_home = str(Path(get_data_home(data_home)) / "scikit_learn_data")
    sklearn.datasets.fetch_20newsgroups = lambda *args, **kwargs: fetch_20newsgroups(
        *args, **{**kwargs, "data_home": scikit_learn_home, "download_if_missing": False})

    assignment = types.ModuleType("sklearn.utils.linear_assignment_")
    assignment.linear_assignment = linear_assignment
    sys.modules["sklearn.utils.linear_assignment_"] = assignment

    kmeans = sklearn.cluster.KMeans
    sklearn.cluster.KMeans = lambda *args, n_init=10, **kwargs: kmeans(*args, n_init=n_init,
                                                                        **kwargs)


def run_script(repo: Path, script: str, arguments: Sequence[str], seed: int,
               dataset_name: str, data_home: str | None,
               edit: Callable[[str], str] | None = None) -> np.ndarray:
    """Run their ``script`` for one seed in this process; the final cluster assignment.

    Installs the compatibility layer, so call it in a process of its own. ``edit``
    changes the script's source further (``benchmarks/vs_authors.py`` shortens
    DKM^p's list of α so, for its shortest run, and says so).
    """
    install_compatibility(dataset_name, data_home)
    path = repo / script
    source = one_seed_source(path.read_text(), seed)
    if edit is not None:
        source = edit(source)
    os.chdir(repo)  # their dataset modules read split/<dataset>/... from the working directory
    sys.path.insert(0, str(repo))
    import utils  # theirs

    scored: list[np.ndarray] = []
    cluster_acc = utils.cluster_acc

    def scoring(y_true: np.ndarray, y_pred: np.ndarray) -> float:
        scored.append(np.asarray(y_pred).copy())
        return cluster_acc(y_true, y_pred)

    utils.cluster_acc = scoring
    sys.argv = [str(path), *arguments]
    exec(compile(source, str(path), "exec"), {"__name__": "__main__", "__file__": str(path)})
    if not scored:
        raise RuntimeError(f"{script} scored no clustering: nothing to record")
    return scored[-1].astype(np.int64)


def authors_commit(repo: Path) -> str:
    """The clone's HEAD, with ``-dirty`` when its tracked files differ from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    try:
        return git("rev-parse", "HEAD") + ("-dirty" if git("status", "--porcelain",
                                                           "--untracked-files=no") else "")
    except (OSError, subprocess.CalledProcessError) as error:
        raise ValueError(f"{repo} is not a git clone of the authors' repository: {error}") from None


def make_record(dataset: Any, method: str, seed: int, labels: np.ndarray, params: dict[str, Any],
                wall_time_s: float, commit: str) -> dict[str, Any]:
    """The record of one run of their code, scored like every record of the package.

    Parameters
    ----------
    dataset : dkm.data.Dataset
        The data their script was handed.
    method : str
        The paper's method id (``"dkm-p"``); the record's is ``"dkm-p-authors-code"``.
    seed : int
        One of their seeds.
    labels : numpy.ndarray
        Their final cluster assignment of every sample.
    params : dict
        The configuration (:func:`run_params`).
    wall_time_s : float
        The run's duration.
    commit : str
        Their repository's commit (:func:`authors_commit`).
    """
    from dkm.protocol.experiments import SPLIT_SEED
    from dkm.protocol.provenance import provenance
    from dkm.metrics import evaluate
    from dkm.protocol.results import new_record
    from dkm.splits import validation_test_split

    if labels.shape != (dataset.n_samples,):
        raise ValueError(f"{labels.shape[0]} labels for {dataset.n_samples} samples")
    split = validation_test_split(dataset.n_samples, seed=SPLIT_SEED)
    metrics = {part: evaluate(dataset.y[idx], labels[idx])
               for part, idx in (("validation", split.validation), ("test", split.test))}
    return new_record(dataset.name, f"{method}-authors-code", seed, params, metrics=metrics,
                      wall_time_s=round(wall_time_s, 3),
                      provenance={**provenance(), "authors_commit": commit})


def run_params(method: str, dataset: Any, tradeoff: float | None, scale: float) -> dict[str, Any]:
    """What decides a run: their script and arguments, λ, the scale and the data."""
    from dkm.protocol.experiments import data_fingerprint

    params: dict[str, Any] = {
        "script": METHODS[method].script,
        "arguments": script_arguments(method, dataset.name, tradeoff, scale),
        "scale": scale, "data_fingerprint": data_fingerprint(dataset),
    }
    if METHODS[method].takes_tradeoff:
        params["lambda"] = float(tradeoff)
    return params


def run(repo: Path, dataset_name: str, methods: Sequence[str], seeds: Sequence[int],
        results: Path, scale: float = 1.0, data_home: str | None = None,
        log_dir: Path | None = None) -> list[dict[str, Any]]:
    """Run their code for every method and seed not yet in ``results/<dataset>.jsonl``.

    Returns
    -------
    list of dict
        The records written by this call, in order.
    """
    from dkm.data import load
    from dkm.protocol.experiments import default_tradeoff
    from dkm.protocol.results import ResultsStore, config_hash, store_path

    commit = authors_commit(repo)
    dataset = load(dataset_name, data_home)
    store = ResultsStore(store_path(results, dataset_name))
    log_dir = log_dir or results / ".logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for method in methods:
        params = run_params(method, dataset, default_tradeoff(method, dataset_name), scale)
        for seed in seeds:
            record_id = f"{method}-authors-code"
            if store.contains(config_hash(dataset_name, record_id, seed, params)):
                continue
            log = log_dir / f"{dataset_name}-{record_id}-{seed}.log"
            start = time.perf_counter()
            labels = _run_child(repo, METHODS[method].script, params["arguments"], seed,
                                dataset_name, data_home, log)
            record = make_record(dataset, method, seed, labels, params,
                                 time.perf_counter() - start, commit)
            store.append(record)
            written.append(record)
            test = record["metrics"]["test"]
            print(f"{dataset_name} {record_id} seed {seed}: test ACC {100 * test['acc']:.1f} "
                  f"NMI {100 * test['nmi']:.1f} ({record['wall_time_s']:.0f} s)", flush=True)
    return written


def _run_child(repo: Path, script: str, arguments: Sequence[str], seed: int, dataset_name: str,
               data_home: str | None, log: Path) -> np.ndarray:
    """:func:`run_script` in a process of its own, its output in ``log``."""
    labels_file = log.with_suffix(".npy")
    job = json.dumps({"repo": str(repo), "script": script, "arguments": list(arguments),
                      "seed": seed, "dataset": dataset_name, "data_home": data_home,
                      "labels": str(labels_file)})
    with open(log, "w") as output:
        done = subprocess.run([sys.executable, __file__, "--child", job], stdout=output,
                              stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise RuntimeError(f"{script} {' '.join(arguments)} (seed {seed}) failed with exit code "
                           f"{done.returncode}; its output is in {log}")
    labels = np.load(labels_file)
    labels_file.unlink()
    return labels


def _child(job: str) -> None:
    spec = json.loads(job)
    labels = run_script(Path(spec["repo"]), spec["script"], spec["arguments"], spec["seed"],
                        spec["dataset"], spec["data_home"])
    np.save(spec["labels"], labels)


def main(argv: Sequence[str] | None = None) -> None:
    from dkm.protocol.paper import PAPER_SEEDS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--authors-repo", type=Path, required=True,
                        help="a clone of the authors' repository (MaziarMF/deep-k-means)")
    parser.add_argument("--dataset", required=True, choices=sorted(DATASET_FLAGS))
    parser.add_argument("--method", action="append", dest="methods", choices=sorted(METHODS),
                        required=True, help="a paper method id; repeat for several")
    parser.add_argument("--seeds", type=int, default=10,
                        help="the first N of the paper's seeds (default 10)")
    parser.add_argument("--seed", type=int, action="append", dest="seed_list",
                        help="an explicit seed (repeat); overrides --seeds")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply the epoch counts (at least one each); default 1")
    parser.add_argument("--results", type=Path, default=Path("results/authors-code"),
                        help="the folder of the stores (default results/authors-code)")
    parser.add_argument("--data-home", help="the datasets' folder (default: DKM_DATA_HOME)")
    parser.add_argument("--log-dir", type=Path, help="each run's output (default RESULTS/.logs)")
    args = parser.parse_args(argv)
    if not (args.authors_repo / "dkm.py").is_file():
        parser.error(f"{args.authors_repo} holds no dkm.py: give a clone of the authors' "
                     "repository (git clone of MaziarMF/deep-k-means)")
    seeds = args.seed_list or list(PAPER_SEEDS[:args.seeds])
    run(args.authors_repo.resolve(), args.dataset, args.methods, seeds, args.results,
        args.scale, args.data_home, args.log_dir)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        _child(sys.argv[2])
    else:
        main()
