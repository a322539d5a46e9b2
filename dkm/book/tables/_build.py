"""Building a table: its cells laid out as a DataFrame with the paper's rows and columns."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

from dkm.book.tables._cells import _datasets_cells, _results_cells, _tradeoff_cells
from dkm.book.tables._selection import _scale_label
from dkm.book.tables._spec import _STATISTIC_LABELS, TABLES, TableSpec
from dkm.protocol import paper


def _row_label(spec: TableSpec, key: str) -> str:
    if spec.kind == "datasets":
        return _STATISTIC_LABELS[key]
    if spec.kind == "tradeoff":
        return f"{paper.TRADEOFF_SYMBOLS[paper.tradeoff_name(paper.method_id(key))]} ({key})"
    return key


def _columns(spec: TableSpec) -> tuple[list[tuple[str, ...]], pd.Index]:
    """The cell keys of the columns, in order, and the column index."""
    names = [paper.DATASET_LABELS.get(dataset, dataset) for dataset in spec.datasets]
    if spec.kind != "results":
        return [(dataset,) for dataset in spec.datasets], pd.Index(names, name="dataset")
    keys = [(dataset, metric) for dataset in spec.datasets for metric in spec.metrics]
    labels = [(name, metric.upper()) for name in names for metric in spec.metrics]
    return keys, pd.MultiIndex.from_tuples(labels, names=["dataset", "metric"])


_CELL_BUILDERS: Mapping[str, Callable[..., tuple[dict, list[pd.DataFrame]]]] = {
    "results": _results_cells,
    "tradeoff": _tradeoff_cells,
    "datasets": _datasets_cells,
}


def _legend(spec: TableSpec, vs_paper: bool) -> tuple[tuple[str, str], ...]:
    """(style, meaning) pairs; style ``""`` for a sentence that is not a mark."""
    legend = tuple((mark.style, mark.meaning) for mark in spec.marks)
    if vs_paper and spec.kind == "results":
        legend += (
            (
                "",
                "In parentheses: the paper's figure and the verdict of a Welch t-test "
                "against it (consistent: p > 0.05; a single run: z test against the "
                "paper's standard deviation)",
            ),
        )
    return legend


def build(
    name: str,
    records: Iterable[Mapping[str, Any]] = (),
    *,
    vs_paper: bool = False,
    missing_reason: str | Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Build one of the paper's tables from run records.

    Parameters
    ----------
    name : str
        A key of :data:`TABLES`.
    records : iterable of dict
        Run records (:mod:`dkm.protocol.results`), e.g. ``store.records()``; records
        of other methods or datasets are ignored. For ``"datasets"``: dicts
        with the keys ``dataset`` (id), ``samples``, ``classes`` and
        ``dimensions``.
    vs_paper : bool
        Add the paper's figure to each cell, and for result cells the
        verdict of :func:`dkm.book.stats.compare_with_paper`.
    missing_reason : str or mapping, optional
        Text of cells without records instead of "not run" (``"not
        loaded"`` for the datasets table); a mapping gives it per dataset id,
        e.g. ``{"rcv1": "not run: data unavailable"}``.

    Returns
    -------
    pandas.DataFrame
        Of :class:`Cell`, indexed by ``(group, row label)``; ``attrs`` holds
        ``table``, ``title``, ``caption``, ``legend`` and ``scales``.

    Raises
    ------
    ValueError
        For an unknown table name or an invalid record.
    """
    if name not in TABLES:
        raise ValueError(f"unknown table {name!r}; expected one of {sorted(TABLES)}")
    spec = TABLES[name]
    cells, used = _CELL_BUILDERS[spec.kind](spec, records, vs_paper, missing_reason)
    keys, columns = _columns(spec)
    rows = [(group.heading, key) for group in spec.groups for key in group.rows]
    table = pd.DataFrame(
        [[cells[(key, *column)] for column in keys] for _, key in rows],
        index=pd.MultiIndex.from_tuples(
            [(heading, _row_label(spec, key)) for heading, key in rows], names=["group", spec.stub]
        ),
        columns=columns,
        dtype=object,
    )
    table.attrs.update(
        table=name,
        title=spec.title,
        caption=spec.caption,
        legend=_legend(spec, vs_paper),
        scales=None if spec.kind == "datasets" else _scale_label(used),
    )
    return table
