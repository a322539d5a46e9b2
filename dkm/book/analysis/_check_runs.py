"""The runs of the benchmarks' check scripts (``benchmarks/check_*.py``) and their gaps to the
protocol's runs or to each other."""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd


def check_runs(name: str, directory: str | Path) -> list[dict[str, Any]]:
    """The runs of a check script (``benchmarks/check_*.py``), read from ``<directory>/<name>.jsonl``.

    Returns an empty list when the file does not exist.
    """
    path = Path(directory) / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def check_gap(runs: Iterable[Mapping[str, Any]], changed: Mapping[str, Any],
              reference: Mapping[str, Any], metric: str = "acc") -> pd.Series:
    """Per seed, a check run's test score with ``changed`` minus the run with ``reference``.

    Check runs name what they changed against the protocol in ``changed``;
    seeds lacking either run are left out.
    """
    def by_seed(setting):
        return {r["seed"]: r["test"][metric] for r in runs if r.get("changed") == dict(setting)}

    first, second = by_seed(changed), by_seed(reference)
    return pd.Series({s: first[s] - second[s] for s in sorted(first) if s in second}, dtype=float)


def protocol_gap(runs: Iterable[Mapping[str, Any]], changed: Mapping[str, Any],
                 records: Iterable[Mapping[str, Any]], metric: str = "acc") -> pd.Series:
    """Per seed, a check run's test score with ``changed`` minus the protocol's run.

    Parameters
    ----------
    runs : iterable of dict
        Check runs (:func:`check_runs`), their test scores in percent.
    changed : mapping
        The setting of the check runs to read, as their ``changed`` field names it.
    records : iterable of dict
        The protocol's records; each check run is paired with the record of
        the same dataset, method and seed (the last one, if several).
    metric : {"acc", "nmi", "ari"}

    Returns
    -------
    pandas.Series
        The differences in points, indexed by seed (sorted); seeds without a
        protocol record are left out.
    """
    protocol = {(r["dataset"], r["method"], r["seed"]): 100 * r["metrics"]["test"][metric]
                for r in records if r.get("metrics")}
    gaps = {r["seed"]: r["test"][metric] - protocol[key] for r in runs
            if r.get("changed") == dict(changed)
            and (key := (r["dataset"], r["method"], r["seed"])) in protocol}
    return pd.Series(dict(sorted(gaps.items())), dtype=float)
