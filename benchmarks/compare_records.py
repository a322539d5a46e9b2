"""Do two folders of results stores hold the same records, bit for bit?

A refactoring must not move the numbers: run the same small grid before and after it into two
folders, then compare them with this script. Every ``*.jsonl`` store below ``BEFORE`` is
matched with the store of the same relative path below ``AFTER``; records are matched by
``config_hash`` and compared field by field, as parsed JSON (so every float bit for bit), except
the fields that differ between two processes that train the same run (time stamps, wall times,
provenance). Prints one line per store and a summary; exits with status 1 when anything differs
or is missing.

Usage::

    python benchmarks/compare_records.py BEFORE AFTER
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

#: What differs between two processes that train the same run.
PER_PROCESS = ("created", "wall_time_s", "provenance")


def _records(store: Path) -> dict[str, dict[str, Any]]:
    """The records of a JSON Lines store by configuration hash, per-process fields removed."""
    records = {}
    for line in store.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            records[record["config_hash"]] = {k: v for k, v in record.items()
                                              if k not in PER_PROCESS}
    return records


def _differences(before: Any, after: Any, path: str = "") -> list[str]:
    """The paths at which two parsed JSON values differ (floats compared exactly)."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [d for key in sorted(set(before) | set(after))
                for d in (_differences(before.get(key), after.get(key), f"{path}.{key}")
                          if key in before and key in after else [f"{path}.{key} (missing)"])]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [d for i, (b, a) in enumerate(zip(before, after))
                for d in _differences(b, a, f"{path}[{i}]")]
    return [] if type(before) is type(after) and before == after else [
        f"{path}: {before!r} != {after!r}"]


def compare(before: Path, after: Path) -> int:
    """Print the comparison of every store of ``before`` with ``after``'s; the number of
    records that differ or are missing."""
    stores = sorted(p.relative_to(before) for p in before.rglob("*.jsonl"))
    if not stores:
        raise SystemExit(f"no *.jsonl store below {before}")
    bad = total = 0
    for name in stores:
        old = _records(before / name)
        new = _records(after / name) if (after / name).exists() else {}
        differing = {h: _differences(old[h], new[h]) for h in old if h in new}
        differing = {h: d for h, d in differing.items() if d}
        missing, extra = sorted(set(old) - set(new)), sorted(set(new) - set(old))
        total += len(old)
        bad += len(differing) + len(missing) + len(extra)
        print(f"{name}: {len(old)} records, {len(old) - len(missing) - len(differing)} identical, "
              f"{len(differing)} differing, {len(missing)} missing, {len(extra)} extra")
        for h, paths in differing.items():
            print(f"  {h[:12]}: {'; '.join(paths[:5])}")
    print(f"{total} records compared, {total - bad} identical" if bad else
          f"{total} records compared: all identical, bit for bit")
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="the folder of the reference stores")
    parser.add_argument("after", type=Path, help="the folder of the stores to check")
    args = parser.parse_args(argv)
    return 1 if compare(args.before, args.after) else 0


if __name__ == "__main__":
    sys.exit(main())
