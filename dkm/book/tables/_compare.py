"""Every result cell against the paper's figure: :func:`comparisons` and :func:`disagreements`."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from dkm.book.stats import p_value_within_rounding
from dkm.book.tables._build import build
from dkm.book.tables._cells import _figure
from dkm.book.tables._spec import TABLES


#: The tables whose cells are compared with the paper's figures.
RESULT_TABLES: tuple[str, ...] = tuple(n for n, s in TABLES.items() if s.kind == "results")


def comparisons(
    records: Iterable[Mapping[str, Any]], names: Sequence[str] = RESULT_TABLES
) -> pd.DataFrame:
    """Every result cell compared with the paper, whatever its verdict.

    Parameters
    ----------
    records : iterable of dict
        Run records, as for :func:`build`.
    names : sequence of str
        Tables to scan (default: every table of results).

    Returns
    -------
    pandas.DataFrame
        One row per compared cell: ``table``, ``dataset``, ``model``,
        ``metric``, ``ours`` and ``paper`` (mean ± std, percent), ``n``,
        ``difference`` (ours − paper), ``p_value``, ``verdict``
        (``"consistent"``, ``"better"`` or ``"worse"``),
        ``p_within_rounding`` (:func:`dkm.book.stats.p_value_within_rounding`: the p
        value with the paper's figure read within its rounding, most
        favourably), and the unrounded ``ours_mean``, ``ours_std``,
        ``paper_mean`` and ``paper_std`` (percent); empty (with those columns)
        when no cell has both our runs and the paper's figure. A run that two tables show (DKM^p in Tables 1
        and 2) gives a row in each.
    """
    records = list(records)
    rows = []
    for name in names:
        table = build(name, records, vs_paper=True)
        for (_, model), row in table.iterrows():
            for (dataset, metric), cell in row.items():
                comparison = cell.comparison
                if comparison is None:
                    continue
                rows.append({
                    "table": name, "dataset": dataset, "model": model, "metric": metric,
                    "ours": _figure(comparison.mean, comparison.std),
                    "paper": _figure(comparison.paper_mean, comparison.paper_std),
                    "n": comparison.n, "difference": round(comparison.difference, 1),
                    "p_value": comparison.p_value, "verdict": comparison.verdict,
                    "p_within_rounding": p_value_within_rounding(comparison),
                    "ours_mean": comparison.mean, "ours_std": comparison.std,
                    "paper_mean": comparison.paper_mean, "paper_std": comparison.paper_std,
                })
    columns = ["table", "dataset", "model", "metric", "ours", "paper", "n", "difference",
               "p_value", "verdict", "p_within_rounding", "ours_mean", "ours_std", "paper_mean",
               "paper_std"]
    return pd.DataFrame(rows, columns=columns)


def disagreements(
    records: Iterable[Mapping[str, Any]], names: Sequence[str] = RESULT_TABLES
) -> pd.DataFrame:
    """Every result cell whose verdict against the paper is "better" or "worse".

    The rows of :func:`comparisons` without the consistent ones, same columns.
    """
    compared = comparisons(records, names)
    return compared[compared.verdict != "consistent"].reset_index(drop=True)
