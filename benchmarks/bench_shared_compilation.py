"""Small fits in one process, with and without sharing compiled epochs
(dkm.reproducibility.shared_functions).

Each side runs in a fresh process: ``--fits`` fits of
one method on the digits (a small network, two seeds trained together), each with other seeds,
so every fit traces the same graphs. With sharing, the fits after the first run the first fit's
compiled epochs; without (``max_bytes=0`` keeps nothing), each compiles its own. Prints one JSON
line per side, with the CPU named, and checks that both sides' records are the same bit for bit.

    DKM_DATA_HOME=../shared/data python benchmarks/bench_shared_compilation.py [--method dkm-p]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

SCALE = 0.06
HIDDEN_SIZES = (32, 32, 64)


def _child(method: str, fits: int, share: bool) -> None:
    from dkm.data import load
    from dkm.methods.common import LoopConfig
    from dkm.protocol.experiments import run_seeds
    from dkm.protocol.provenance import cpu_identity
    from dkm.reproducibility.shared_functions import shared_epochs

    if not share:
        shared_epochs.max_bytes = 0
    digits = load("digits")
    loop = LoopConfig(hidden_sizes=HIDDEN_SIZES, progress=False)
    times, scores = [], []
    for fit in range(fits):
        start = time.perf_counter()
        records = run_seeds(digits, method, [2 * fit + 1, 2 * fit + 2], scale=SCALE, loop=loop)
        times.append(round(time.perf_counter() - start, 2))
        scores.append([record["metrics"] for record in records])
    print(json.dumps({"method": method, "sharing": share, "fit_s": times,
                      "shared_traces": shared_epochs.hits, "cpu": cpu_identity(),
                      "metrics": scores}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="dkm-p")
    parser.add_argument("--fits", type=int, default=4)
    parser.add_argument("--child", choices=["on", "off"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.method, args.fits, args.child == "on")
        return
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1",
           "TF_CPP_MIN_LOG_LEVEL": "2"}
    sides = {}
    for side in ("off", "on"):
        done = subprocess.run([sys.executable, __file__, "--method", args.method, "--fits",
                               str(args.fits), "--child", side],
                              env=env, capture_output=True, text=True, check=True)
        sides[side] = json.loads(done.stdout.strip().splitlines()[-1])
        print(json.dumps({k: v for k, v in sides[side].items() if k != "metrics"}), flush=True)
    same = sides["off"]["metrics"] == sides["on"]["metrics"]
    print(json.dumps({"same_records_bit_for_bit": same}))
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
