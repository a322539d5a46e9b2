"""Does this CPU give the reproducible fixture's bits? ``tests/small_fit.py``'s small DKM^p fit,
in the reproducible arithmetic and in the native one, each in a process of its own.

Appends one line per mode to ``--json`` (default ``benchmarks/results/reproducible-fits.jsonl``):
the fit's bits (labels', centres', weights' and losses'), its arithmetic settings, the CPU and
the mode (``--cache-sizes``: the reproducible fit only, as on a CPU whose caches Eigen reads
as those). ``tests/test_arithmetic.py`` compares the reproducible fit with the fixture
(``tests/fixtures/reproducible-dkm-p.json``) on every machine the tests run on; these lines keep
what each CPU gave, for chapter 11 (:func:`dkm.book.analysis.reproducible_fits`).

    python benchmarks/reproducible_fits.py
    python benchmarks/reproducible_fits.py --cache-sizes 49152 524288 268435456
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

# a sibling script: benchmarks/ is on the path
from with_cache_sizes import run_script

REPO_ROOT = Path(__file__).resolve().parent.parent
SMALL_FIT = REPO_ROOT / "tests" / "small_fit.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path,
                        default=REPO_ROOT / "benchmarks" / "results" / "reproducible-fits.jsonl",
                        help="append each mode's fit here")
    parser.add_argument("--cache-sizes", type=int, nargs=3, metavar=("L1", "L2", "L3"),
                        help="only the reproducible fit, its matrix products blocked by these "
                             "cache sizes (bytes) instead of the mode's, as on a CPU with "
                             "these caches before the mode pinned them "
                             "(benchmarks/with_cache_sizes.py)")
    args = parser.parse_args()
    for mode in ("reproducible",) if args.cache_sizes else ("reproducible", "native"):
        fit = json.loads(run_script(SMALL_FIT, mode, cache_sizes=args.cache_sizes))
        with open(args.json, "a") as out:
            out.write(json.dumps({"mode": mode, **fit}) + "\n")
        print(mode, fit["cpu"], fit["labels"][:16], flush=True)


if __name__ == "__main__":
    main()
