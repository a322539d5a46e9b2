"""Time to load a dataset of the paper from its cached file (MNIST by default).

The first load includes the SHA-256 check of the file; later loads in the same
process reuse the cached digest. Prints one JSON object.

    DKM_DATA_HOME=../shared/data python benchmarks/bench_load.py [--dataset mnist] [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import platform
import time

from dkm.data import available_datasets, get_data_home, load


def _timed_load(name: str, data_home: str | None) -> tuple[float, tuple[int, int]]:
    """Seconds to load ``name`` once, and the shape of its features."""
    start = time.perf_counter()
    dataset = load(name, data_home, download=False)
    return time.perf_counter() - start, dataset.X.shape


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mnist", choices=available_datasets())
    parser.add_argument("--repeats", type=int, default=3, help="loads after the first one")
    parser.add_argument("--data-home", default=None, help="default: DKM_DATA_HOME, then the cache")
    args = parser.parse_args()

    first, shape = _timed_load(args.dataset, args.data_home)
    later = [_timed_load(args.dataset, args.data_home)[0] for _ in range(args.repeats)]
    print(
        json.dumps(
            {
                "dataset": args.dataset,
                "data_home": str(get_data_home(args.data_home)),
                "shape": list(shape),
                "first_load_s": round(first, 3),
                "best_later_load_s": round(min(later), 3) if later else None,
                "machine": f"{platform.machine()}, {platform.python_version()}",
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
