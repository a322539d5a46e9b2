"""What the reproducible arithmetic costs on this CPU: the same kernels on every x86-64 CPU
(``dkm.reproducibility.arithmetic``, ``python -m dkm run --reproducible``) against the package's native ones.

The package trains USPS DKM^p for one seed, float32 products, in processes of its own taking
turns (native, reproducible, then reproducible, native, ...), with the same pretraining and
fine-tuning epochs, as ``vs_authors.py``'s package side does (its processes, marks and table);
each mode's compiled epochs come from a compilation cache that one untimed run of that mode
filled first. The mode's settings (AVX2 caps, no oneDNN, no platform-dependent math in XLA)
change the kernels on every CPU, the more where the native ones use wider vectors. Each
line printed names the CPU. Pause other work on the machine while it runs: the figures are wall
times.

Usage::

    python benchmarks/reproducible_cost.py --repeats 3 \
        --json benchmarks/results/reproducible-cost.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from dkm.reproducibility.arithmetic import reproducible_environment
from dkm.data import load
from dkm.protocol.provenance import cpu_identity

# sibling scripts: benchmarks/ is on the path
from vs_authors import SETTINGS, SEED, report, run_process

MODES = ("native", "reproducible")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each mode per setting")
    parser.add_argument("--data-home", default=None, help="the datasets' folder")
    parser.add_argument("--setting", action="append", dest="settings", choices=list(SETTINGS),
                        help="run only this setting (repeat for several); default: all")
    parser.add_argument("--json", type=Path, default=None, help="append every run here")
    args = parser.parse_args()
    environments = {"native": {}, "reproducible": reproducible_environment({})}
    capped = sorted(set(environments["reproducible"]) & set(os.environ))
    if capped:
        parser.error(f"{', '.join(capped)} set in this environment: the native runs would not "
                     "be native; unset them first")
    cpu = cpu_identity()
    n_samples = load("usps", args.data_home).n_samples
    for name in args.settings or SETTINGS:
        job = {"data_home": args.data_home, "epochs": SETTINGS[name], "precision": "float32"}
        runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
        with tempfile.TemporaryDirectory(prefix="dkm-xla-") as cache:
            for mode in MODES:  # untimed: fill each mode's compiled epochs
                run_process("package", job, cache, environments[mode])
            for repeat in range(args.repeats):
                for mode in MODES if repeat % 2 == 0 else MODES[::-1]:
                    run = run_process("package", job, cache, environments[mode])
                    run.update(mode=mode, environment=environments[mode], setting=name,
                               repeat=repeat, cpu=cpu)
                    runs[mode].append(run)
                    if args.json is not None:
                        with open(args.json, "a") as out:
                            out.write(json.dumps(run) + "\n")
        report(f"USPS DKM^p {name} epochs, float32, seed {SEED}", runs, n_samples, cpu)


if __name__ == "__main__":
    main()
