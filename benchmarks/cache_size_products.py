"""Which of a fit's matrix products round otherwise when Eigen reads other cache sizes?

In the reproducible arithmetic TensorFlow's products compute in blocks sized by the cache sizes
the mode pins (``dkm.reproducibility.arithmetic.REPRODUCIBLE_CACHE_SIZES``); before the pin they were the CPU's.
This script runs ``tests/products.py`` (a training step's products and a dataset's embedding for
each of the paper's networks and the small fit's, on random numbers of their shapes) twice, each
in a process of its own: with the mode's sizes, and with ``--cache-sizes`` (default: the 48 KiB
of L1 data cache of the AVX-512 CPUs, through ``benchmarks/with_cache_sizes.py``). Appends one
line to ``--json`` (default ``benchmarks/results/cache-size-products.jsonl``): the CPU, both
sizes and, for each computation, whether its bits differ (``dkm.book.analysis.cache_size_products``
reads them).

    python benchmarks/cache_size_products.py --cache-sizes 32768 1048576 268435456
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from dkm.protocol.provenance import cpu_identity

# a sibling script: benchmarks/ is on the path
from with_cache_sizes import run_script

REPO_ROOT = Path(__file__).resolve().parent.parent
PRODUCTS = REPO_ROOT / "tests" / "products.py"
DEFAULT_TOLD = (48 * 1024, 512 * 1024, 256 * 1024 * 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path,
                        default=REPO_ROOT / "benchmarks" / "results" / "cache-size-products.jsonl",
                        help="append the comparison here")
    parser.add_argument("--cache-sizes", type=int, nargs=3, metavar=("L1", "L2", "L3"),
                        default=DEFAULT_TOLD, help="the other sizes, bytes")
    args = parser.parse_args()
    pinned_run, told_run = (json.loads(run_script(PRODUCTS, cache_sizes=sizes))
                            for sizes in (None, args.cache_sizes))
    products = []
    for key, digest in pinned_run["digests"].items():
        network, phase, shape, part = key.split("|")
        products.append({"network": network, "phase": phase, "shape": shape, "part": part,
                         "differs": digest != told_run["digests"][key]})
    line = {"cpu": cpu_identity(), "pinned": pinned_run["cache_sizes"],
            "told": told_run["cache_sizes"], "products": products}
    with open(args.json, "a") as out:
        out.write(json.dumps(line) + "\n")
    differing = [p for p in products if p["differs"]]
    print(f"{line['cpu']}: {len(differing)} of {len(products)} computations differ between "
          f"{line['pinned']} and {line['told']}")
    for p in differing:
        print(f"  {p['network']}, {p['phase']}, {p['shape']} {p['part']}".rstrip())


if __name__ == "__main__":
    main()
