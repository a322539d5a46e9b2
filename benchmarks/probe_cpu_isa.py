"""Does a CPU run's arithmetic depend on the machine? The first pretraining epoch, set by set.

A committed snapshot keeps its pretraining's per-epoch loss. This probe trains
the same pretraining for one epoch (same data, seed, network and minibatches)
in a fresh process under several settings: as the machine runs it, with more
intra-op threads, and with the instruction sets that XLA's CPU compiler and
oneDNN may use capped (``XLA_FLAGS=--xla_cpu_max_isa``, ``ONEDNN_MAX_CPU_ISA``),
and sets each first-epoch loss beside the snapshot's. Equal values mean the
same arithmetic; a setting that changes the value shows what the result
depends on.

With ``--checkout DIR`` (a checkout of the commit that wrote the snapshot,
e.g. ``git worktree add DIR <commit>``) one more run uses that code.

Usage (one JSON line per setting, then the snapshot's)::

    git worktree add /tmp/snapshot-code 97fc1e2
    python benchmarks/probe_cpu_isa.py --snapshot results/snapshots/usps-8905-dkm-p-decay-1e-4.npz \\
        --checkout /tmp/snapshot-code > benchmarks/results/probe-cpu-isa.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

#: name -> environment variables set for that run (on top of the caller's)
SETTINGS = {
    "as the machine runs it": {},
    "4 intra-op threads": {"TF_NUM_INTRAOP_THREADS": "4", "OMP_NUM_THREADS": "4"},
    "oneDNN off": {"TF_ENABLE_ONEDNN_OPTS": "0"},
    "oneDNN capped at AVX2": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
    "XLA capped at AVX2": {"XLA_FLAGS": "--xla_cpu_max_isa=AVX2"},
    "XLA capped at AVX": {"XLA_FLAGS": "--xla_cpu_max_isa=AVX"},
}

#: one epoch of the snapshot's pretraining (scale 1/50 of its 50 epochs), in a fresh process
_ONE_EPOCH = """
import json, sys, tempfile
from pathlib import Path
from dkm.book.snapshots import save_snapshot
from dkm.protocol.provenance import provenance
dataset, seed, epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with tempfile.TemporaryDirectory() as folder:
    snapshot = save_snapshot(dataset, ["ae-km"], seed, Path(folder) / "probe.npz", n_points=10,
                             scale=1 / epochs)
print(json.dumps({"first_epoch_loss": float(snapshot.history["ae-km"]["pretrain_loss"][0]),
                  "provenance": provenance()}))
"""


def first_epoch(dataset: str, seed: int, epochs: int, env: dict[str, str]) -> dict:
    """The first pretraining epoch's loss in a fresh process run with ``env`` added."""
    completed = subprocess.run(  # -P: the working directory does not shadow PYTHONPATH
        [sys.executable, "-P", "-c", _ONE_EPOCH, dataset, str(seed), str(epochs)],
        capture_output=True, text=True, check=True, env={**os.environ, **env})
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", required=True, type=Path,
                        help="a committed snapshot whose pretraining the probe repeats")
    parser.add_argument("--checkout", type=Path, default=None,
                        help="a checkout of another commit: one more run uses its code")
    args = parser.parse_args()

    from dkm.book.snapshots import load_snapshot

    snapshot = load_snapshot(args.snapshot)
    meta = snapshot.meta
    method = next(m for m in meta["methods"] if "pretrain_loss" in snapshot.history[m])
    recorded = snapshot.history[method]["pretrain_loss"]
    settings = dict(SETTINGS)
    if args.checkout is not None:
        settings["the code of another commit"] = {"PYTHONPATH": str(args.checkout.resolve())}
    for name, env in settings.items():
        run = first_epoch(meta["dataset"], meta["seed"], len(recorded), env)
        print(json.dumps({"kind": "setting", "setting": name, "env": env, **run}), flush=True)
    print(json.dumps({"kind": "snapshot", "snapshot": str(args.snapshot),
                      "first_epoch_loss": float(recorded[0]), "created": meta["created"],
                      "provenance": meta["provenance"]}))


if __name__ == "__main__":
    main()
