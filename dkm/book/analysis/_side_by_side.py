"""Two programs or two settings timed in processes that take turns
(``benchmarks/vs_authors.py``, ``benchmarks/reproducible_cost.py``): their medians, and the
median of their per-pair ratios."""
from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

def warm_rate(marks: Sequence[float], n_samples: int) -> float | None:
    """Samples per second of a phase's warm epochs (those after its first), from the times its
    epochs ended; None with fewer than two epochs."""
    gaps = [b - a for a, b in zip(marks, marks[1:])]
    return n_samples / statistics.median(gaps) if gaps else None


#: What a run measures, read from the run and the points in an epoch, and whether more of it is
#: better.
SIDE_BY_SIDE_MEASURES: dict[str, tuple[Callable[[Mapping[str, Any], int], float | None], bool]] = {
    "warm pretraining epoch, samples/s": (lambda run, n: warm_rate(run["marks"]["pretrain"], n),
                                          True),
    "warm fine-tuning epoch, samples/s": (lambda run, n: warm_rate(run["marks"]["finetune"], n),
                                          True),
    "whole process, s": (lambda run, n: run["wall_s"], False),
    "peak memory, MB": (lambda run, n: run["peak_mb"], False),
}


def side_by_side(runs: Mapping[str, Sequence[Mapping[str, Any]]],
                 n_samples: int) -> pd.DataFrame:
    """Medians of two sides' runs and the median of their per-pair ratios.

    Parameters
    ----------
    runs : mapping of two sides' names to their runs
        The first side is the yardstick. Each run holds ``wall_s``,
        ``peak_mb`` and ``marks`` (the end times of its ``"pretrain"`` and
        ``"finetune"`` epochs); the ``i``-th runs of the two sides form a pair.
    n_samples : int
        The points in an epoch.

    Returns
    -------
    pandas.DataFrame
        Indexed by the measures of :data:`SIDE_BY_SIDE_MEASURES` that both
        sides have: each side's median, and ``ratio``, the median over pairs
        of how many times better the second side is than the first (the
        first's time or memory over the second's; the second's rate over the
        first's), and ``reads``, that ratio in words (``"1.25× faster"``, ``"1.10×
        more"``: the second side's memory).
    """
    first, second = runs
    rows = {}
    for measure, (value, higher_is_better) in SIDE_BY_SIDE_MEASURES.items():
        a, b = ([value(run, n_samples) for run in runs[side]] for side in (first, second))
        pairs = [(x, y) for x, y in zip(a, b) if x and y]
        if not pairs:
            continue
        ratio = statistics.median(y / x if higher_is_better else x / y for x, y in pairs)
        better, worse = ("less", "more") if measure.startswith("peak memory") \
            else ("faster", "slower")
        rows[measure] = {
            first: statistics.median(x for x in a if x is not None),
            second: statistics.median(y for y in b if y is not None),
            "ratio": ratio,
            "reads": f"{ratio:.2f}× {better}" if ratio >= 1 else f"{1 / ratio:.2f}× {worse}",
        }
    return pd.DataFrame.from_dict(rows, orient="index", columns=[first, second, "ratio", "reads"])
