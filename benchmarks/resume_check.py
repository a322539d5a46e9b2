"""A run killed mid-training and started again: does it write the record of a run never killed?

Trains one method for one seed at the paper's epochs three times, each in a
process of its own, with :func:`dkm.protocol.grid.run_grid` (as ``python -m dkm
run`` does): once to the end; once killed (SIGKILL, as a lost machine or an
out-of-memory kill would) as soon as the method's own training phase has saved
a checkpoint; and once more on the killed run's folder, which resumes from
that checkpoint (:mod:`dkm.checkpoints`). The phases save their state every
``--every`` seconds here instead of every five minutes, so that a run of a
few minutes has checkpoints to resume from. Prints one JSON line: the run,
the phase and epoch it resumed from (the resumed record's provenance), its
metrics and the uninterrupted run's, and whether the two records are the same
apart from their time stamps, wall times and provenance.

Usage (USPS's DKM^p, about ten minutes on two cores)::

    python benchmarks/resume_check.py --dataset usps --method dkm-p --seed 8905 \\
        >> benchmarks/results/resume-check.jsonl
"""
from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

#: What differs between two processes that train the same run.
PER_PROCESS = ("created", "wall_time_s", "provenance")

#: The phase name (its checkpoint file's ending) of each method's own training.
PHASES = {"dkm": "deep-k-means", "dcn": "dcn", "idec": "idec"}


def train(store: Path, args: argparse.Namespace) -> subprocess.Popen:
    """Start a process that runs the grid of one run into ``store``."""
    return subprocess.Popen([sys.executable, __file__, "--child", str(store),
                             "--dataset", args.dataset, "--method", args.method,
                             "--seed", str(args.seed), "--every", str(args.every),
                             "--scale", str(args.scale)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def child(args: argparse.Namespace) -> None:
    from dkm.checkpoints import PhaseCheckpoint
    from dkm.protocol.grid import run_grid

    # every `--every` seconds instead of every five minutes
    PhaseCheckpoint.due = lambda self: time.monotonic() - self._last_save >= args.every
    run_grid([args.dataset], [args.method], [args.seed], args.child, scale=args.scale,
             seeds_per_batch=1, progress=False, log=lambda message: None)


def only_record(store: Path) -> dict:
    records = [json.loads(line) for line in store.read_text().splitlines()]
    if len(records) != 1:
        raise SystemExit(f"{store} holds {len(records)} records, expected one")
    return records[0]


def check(args: argparse.Namespace) -> dict:
    from dkm.protocol import registry
    from dkm.protocol.provenance import provenance

    phase = PHASES[registry.get(args.method).family]
    with tempfile.TemporaryDirectory() as folder:
        plain, killed = (Path(folder) / name / "runs.jsonl" for name in ("plain", "killed"))
        if train(plain, args).wait() != 0:
            raise SystemExit("the uninterrupted run failed")
        process = train(killed, args)
        checkpoints = killed.parent / ".checkpoints"
        while not list(checkpoints.glob(f"*-{phase}.npz")):
            if process.poll() is not None:
                raise SystemExit(f"the run ended before its {phase} phase saved a checkpoint: "
                                 "lower --every")
            time.sleep(0.5)
        process.send_signal(signal.SIGKILL)
        process.wait()
        if killed.exists():
            raise SystemExit("the killed run wrote its record before it was killed")
        if train(killed, args).wait() != 0:
            raise SystemExit("the resumed run failed")
        expected, resumed = only_record(plain), only_record(killed)
    same = ({k: v for k, v in resumed.items() if k not in PER_PROCESS}
            == {k: v for k, v in expected.items() if k not in PER_PROCESS})
    return {
        "check": "resume", "dataset": args.dataset, "method": args.method, "seed": args.seed,
        "scale": args.scale, "checkpoint_every_s": args.every,
        "resumed": resumed["provenance"].get("resumed", []),
        "identical": same,
        "metrics": resumed["metrics"], "uninterrupted_metrics": expected["metrics"],
        "wall_time_s": {"uninterrupted": expected["wall_time_s"],
                        "resumed": resumed["wall_time_s"]},
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "provenance": provenance(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="usps")
    parser.add_argument("--method", default="dkm-p")
    parser.add_argument("--seed", type=int, default=8905)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--every", type=float, default=20.0,
                        help="seconds between two checkpoints of a phase (default 20)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from dkm.protocol import registry

    if registry.get(args.method).family not in PHASES:
        parser.error(f"{args.method} trains no phase of its own to interrupt; choose one of "
                     f"{[m for m in registry.ids() if registry.get(m).family in PHASES]}")
    if args.child:
        child(args)
    else:
        print(json.dumps(check(args)), flush=True)


if __name__ == "__main__":
    main()
