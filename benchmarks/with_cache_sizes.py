"""Run a program in the reproducible arithmetic as a CPU with other caches would have, before the
mode pinned them: TensorFlow's matrix products blocked by the cache sizes given, not the mode's.

``dkm.reproducibility.arithmetic.REPRODUCIBLE_CACHE_SIZES`` is replaced, in this process, by the sizes given,
then PROGRAM runs here as its ``__main__``: ``dkm`` (the command line) or a Python script.
The records, audits and fits it writes name the sizes in their provenance. For instance, an
audit of the USPS record of DKM^p's seed 8905 with the 48 KiB of L1 data cache that newer
x86-64 cores have::

    python benchmarks/with_cache_sizes.py 49152 524288 268435456 dkm audit --reproducible \\
        --results results/usps.jsonl --method dkm-p --seed 8905 \\
        --output benchmarks/results/cache-sizes-audit.jsonl
"""
from __future__ import annotations

import argparse
import os
import runpy
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import dkm.reproducibility.arithmetic


def run_script(script: Path, *arguments: str, cache_sizes: Sequence[int] | None = None) -> str:
    """What a Python script prints, run in a process of its own that chooses its arithmetic
    itself (this environment less the reproducible arithmetic's variables), through this file
    with ``cache_sizes`` (L1, L2, L3, bytes) where they are given."""
    capped = set(dkm.reproducibility.arithmetic.reproducible_environment({}))
    environment = {k: v for k, v in os.environ.items() if k not in capped}
    told = [] if cache_sizes is None else [__file__, *map(str, cache_sizes)]
    return subprocess.run([sys.executable, *told, str(script), *arguments], check=True,
                          capture_output=True, text=True, env=environment).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("l1", type=int, help="L1 data cache, bytes")
    parser.add_argument("l2", type=int, help="L2 cache, bytes")
    parser.add_argument("l3", type=int, help="L3 cache, bytes")
    parser.add_argument("program", help="'dkm' (the command line) or a Python script's path")
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help="the program's arguments")
    args = parser.parse_args()
    if dkm.reproducibility.arithmetic.current_arithmetic() == "reproducible":
        parser.error("this process's environment is in the reproducible arithmetic already, so "
                     "importing dkm pinned the mode's sizes: start it from a native environment")
    dkm.reproducibility.arithmetic.REPRODUCIBLE_CACHE_SIZES = (args.l1, args.l2, args.l3)
    sys.argv = [args.program, *args.arguments]
    if args.program == "dkm":
        runpy.run_module("dkm", run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(args.program, run_name="__main__")


if __name__ == "__main__":
    main()
