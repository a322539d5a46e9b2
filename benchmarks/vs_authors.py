"""The package's DKM^p beside the authors' own code, on the CPU: epoch speed, start-up, memory.

Both train USPS DKM^p for one seed in processes of their own, taking turns (authors, package,
then package, authors, ...), each with the same pretraining and fine-tuning epochs; the
authors' code runs from a clone the user gives (``--authors-repo``), through
``benchmarks/authors_code.py``'s compatibility layer. From each process come:

* its wall time, start to exit, and its peak resident memory (``ru_maxrss``);
* the time of each epoch's end: the authors' script prints a line as each pretraining epoch
  and each α starts (their fine-tuning runs ``-f`` epochs per α, 20 α for DKM^p, and scores
  the clustering after each α, as their loop does); the package's child prints one after each
  epoch. A *warm* epoch is one after the first of its phase, in samples per second.

Settings: ``10 + 20`` is 10 pretraining and 20 fine-tuning epochs (the authors' ``-e 10 -f
1``: 20 α of one epoch each); ``1 + 1`` is one of each, for which the authors' list of 20 α is
cut to its first (the one edit of their source beyond the compatibility layer). The package's
products run in float32 or, with ``--precision bfloat16``, in bfloat16 (the authors' code in
float32 always). Both processes start TensorFlow without Keras, as ``python -m dkm`` does
(``TF_USE_LEGACY_KERAS=1`` where ``tf_keras`` is not installed; a value of the caller's is
kept): neither program uses Keras (the authors' ``tf.layers.dense`` is the compatibility
layer's), and TensorFlow's eager import of it costs each about 5 s and 130 MB. Each line
printed names the CPU. Pause other work on the machine while it runs: the figures are wall
times.

Each process compiles its own epochs, as a first run does (the records of runs made while the
package kept compiled epochs on disk name ``xla_cache``). ``--arithmetic reproducible`` runs
the package's processes in the reproducible arithmetic (``dkm.reproducibility.arithmetic``,
the records' default), the authors' in their native float32 as always.

Usage::

    python benchmarks/vs_authors.py --authors-repo PATH --repeats 3 \
        --json benchmarks/results/vs-authors.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
SEED = 8905
#: (pretraining epochs, fine-tuning epochs) of each setting.
SETTINGS = {"10 + 20": (10, 20), "1 + 1": (1, 1)}


def _authors_child(job: dict[str, Any]) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    from authors_code import run_script

    pretrain, finetune = job["epochs"]
    arguments = ["-d", "USPS", "-s", "-c", "-p", "-e", str(pretrain), "-f", "1", "-l", "1.0"]

    def alphas(source: str) -> str:
        if "max_n = 20  #" not in source:
            raise ValueError("dkm.py sets no 'max_n = 20' (DKM^p's number of α): another "
                             "version of the authors' code?")
        return source.replace("max_n = 20  #", f"max_n = {finetune}  #", 1)

    run_script(Path(job["repo"]), "dkm.py", arguments, SEED, "usps", job["data_home"],
               edit=alphas)


def _package_child(job: dict[str, Any]) -> None:
    from dkm import DeepKMeans
    from dkm.annealing import constant
    from dkm.data import load
    from dkm.training import Trainer

    run_epoch = Trainer.run_epoch

    def timed(self, *args, **kwargs):
        result = run_epoch(self, *args, **kwargs)
        print(f"EPOCH END {time.perf_counter():.6f}", flush=True)
        return result

    Trainer.run_epoch = timed
    pretrain, finetune = job["epochs"]
    data = load("usps", job["data_home"])
    DeepKMeans(data.n_clusters, lam=1.0, pretrain_epochs=pretrain,
               schedule=constant(1000.0, finetune), random_state=SEED,
               progress=False, precision=job["precision"]).fit(data.X)


def run_process(side: str, job: dict[str, Any],
                extra_env: dict[str, str] | None = None) -> dict[str, Any]:
    """One process: its wall time, peak memory, and the times its output marks epochs by.

    ``side`` is ``"authors"`` or ``"package"``; ``extra_env`` is set on top of this
    process's environment.
    """
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    env.pop("TF_XLA_FLAGS", None)
    if find_spec("tf_keras") is None:
        env.setdefault("TF_USE_LEGACY_KERAS", "1")
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, __file__, "--child", side, json.dumps(job)],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env=env)
    marks: dict[str, list[float]] = {"pretrain": [], "finetune": []}
    for line in child.stdout:
        now = time.perf_counter()
        if side == "package" and line.startswith("EPOCH END"):
            now = float(line.split()[2])
            phase = "pretrain" if len(marks["pretrain"]) < job["epochs"][0] else "finetune"
            marks[phase].append(now)
        elif line.startswith("Pretraining step: epoch"):
            marks["pretrain"].append(now)
        elif line.startswith("Running k-means on the learned embeddings"):
            marks["pretrain"].append(now)  # the end of the last pretraining epoch
        elif line.startswith("Training step: alpha"):
            marks["finetune"].append(now)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise RuntimeError(f"the {side} process of {job['epochs']} ended with status {status}")
    if side == "authors":  # lines as epochs and α start: the last α ends with the output
        marks["finetune"].append(now)
        marks = {phase: times[1:] for phase, times in marks.items()}  # starts -> ends
    return {"wall_s": wall, "peak_mb": usage.ru_maxrss / 1024, "marks": marks,
            "TF_USE_LEGACY_KERAS": env.get("TF_USE_LEGACY_KERAS")}


def main() -> None:
    from dkm.reproducibility.arithmetic import reproducible_environment
    from dkm.data import load
    from dkm.protocol.provenance import cpu_identity

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--authors-repo", type=Path, required=True,
                        help="a clone of the authors' repository (MaziarMF/deep-k-means)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each side per setting")
    parser.add_argument("--data-home", default=None, help="the datasets' folder")
    parser.add_argument("--setting", action="append", dest="settings", choices=list(SETTINGS),
                        help="run only this setting (repeat for several); default: all")
    parser.add_argument("--precision", choices=("float32", "bfloat16"), default="float32",
                        help="the precision of the package's matrix products (the authors' "
                             "code runs in float32)")
    parser.add_argument("--arithmetic", choices=("native", "reproducible"), default="native",
                        help="the arithmetic of the package's processes (the authors' code runs "
                             "in the native one)")
    parser.add_argument("--json", type=Path, default=None, help="append every run here")
    args = parser.parse_args()
    if not (args.authors_repo / "dkm.py").is_file():
        parser.error(f"{args.authors_repo} holds no dkm.py: give a clone of the authors' code")
    capped = sorted(set(reproducible_environment({})) & set(os.environ))
    if capped:
        parser.error(f"{', '.join(capped)} set in this environment: the authors' code would not "
                     "run natively; unset them first (--arithmetic chooses the package's)")
    package_env = reproducible_environment({}) if args.arithmetic == "reproducible" else {}
    cpu = cpu_identity()
    n_samples = load("usps", args.data_home).n_samples
    for name in args.settings or SETTINGS:
        epochs = SETTINGS[name]
        job = {"repo": str(args.authors_repo.resolve()), "data_home": args.data_home,
               "epochs": epochs, "precision": args.precision}
        runs: dict[str, list[dict[str, Any]]] = {"authors": [], "package": []}
        for repeat in range(args.repeats):
            for side in ("authors", "package") if repeat % 2 == 0 else ("package", "authors"):
                run = run_process(side, job, package_env if side == "package" else None)
                run.update(side=side, setting=name, repeat=repeat, cpu=cpu,
                           precision=args.precision,
                           arithmetic=args.arithmetic if side == "package" else "native")
                runs[side].append(run)
                if args.json is not None:
                    with open(args.json, "a") as out:
                        out.write(json.dumps(run) + "\n")
        report(f"USPS DKM^p {name} epochs, package in {args.precision}, {args.arithmetic} "
               f"arithmetic, seed {SEED}", runs, n_samples, cpu)


def report(title: str, runs: dict[str, list[dict[str, Any]]], n_samples: int, cpu: str) -> None:
    """Print :func:`dkm.book.analysis.side_by_side` of two sides' runs (the first is the
    yardstick) as a Markdown table."""
    from dkm.book.analysis import side_by_side

    first, second = runs
    print(f"\n{cpu}: {title}, {len(runs[first])} runs a side")
    print(f"| | {first} | {second} | {second} is (median of pairs) |\n|---|---|---|---|")
    for measure, row in side_by_side(runs, n_samples).iterrows():
        print(f"| {measure} | {row[first]:,.1f} | {row[second]:,.1f} | {row['reads']} |")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        {"authors": _authors_child, "package": _package_child}[sys.argv[2]](json.loads(sys.argv[3]))
    else:
        main()
