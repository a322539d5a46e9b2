"""The cells of a table: :class:`Cell`, and the cells of each kind of table.

A result cell summarizes its runs (percent), with its significance marks and,
on demand, the paper's figure and verdict; a trade-off cell shows the selected
λ or γ; a datasets cell a statistic.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dkm.book.stats import Comparison, compare_with_paper, significance_marks, summarize
from dkm.book.tables._selection import _records_frame, _runs_of, _selected_runs, selected_tradeoff
from dkm.book.tables._spec import _STATISTIC_LABELS, TableSpec
from dkm.protocol import paper

#: Runs per cell in the paper; other counts are shown as ``(n=...)``.
PAPER_RUNS = 10


@dataclass(frozen=True)
class Cell:
    """One cell of a built table.

    Attributes
    ----------
    text : str
        The figure as the paper writes it (``"75.7±1.3"``, ``"1e-1"``) or
        the missing-cell text.
    bold, underline : bool
        Significance marks; they apply to ``text`` only.
    note : str
        Shown after the text, unmarked: ``"(paper 72.9±0.8, consistent)"``.
    runs : tuple of float
        The runs behind a result cell, in percent.
    comparison : Comparison or None
        The test against the paper (``vs_paper=True`` and runs present).
    missing : bool
        True where the records hold nothing for the cell: ``text`` is the
        missing-cell text and ``note`` at most the paper's figure.
    """

    text: str
    bold: bool = False
    underline: bool = False
    note: str = ""
    runs: tuple[float, ...] = field(default=(), repr=False)
    comparison: Comparison | None = field(default=None, repr=False)
    missing: bool = False

    def __str__(self) -> str:
        return f"{self.text} {self.note}" if self.note else self.text


def _figure(mean: float, std: float) -> str:
    return f"{mean:.1f}" if math.isnan(std) else f"{mean:.1f}±{std:.1f}"


def _note(parts: list[str]) -> str:
    return f"({', '.join(parts)})" if parts else ""


def _missing_text(
    spec: TableSpec, dataset: str, missing_reason: str | Mapping[str, str] | None
) -> str:
    if isinstance(missing_reason, Mapping):
        return missing_reason.get(dataset, spec.missing)
    return missing_reason or spec.missing


def _paper_figure(
    spec: TableSpec, label: str, dataset: str, metric: str
) -> tuple[float, float, int] | None:
    try:
        return paper.reported(spec.paper_table, label, dataset, metric)
    except ValueError:
        return None


def _result_cell(
    runs: tuple[float, ...],
    missing: str,
    marks: set[str],
    reference: tuple[float, float, int] | None,
) -> Cell:
    """A result cell from its runs (percent), marks and the paper's figure."""
    paper_part = [f"paper {_figure(*reference[:2])}"] if reference else []
    if not runs:
        return Cell(missing, note=_note(paper_part), missing=True)
    mean, std, n = summarize(runs)
    parts = [] if n == PAPER_RUNS else [f"n={n}"]
    comparison = compare_with_paper(runs, *reference) if reference else None
    if comparison is not None:
        parts += paper_part + [comparison.verdict]
    return Cell(
        _figure(mean, std), "bold" in marks, "underline" in marks, _note(parts), runs, comparison
    )


def _row_runs(frame: pd.DataFrame, label: str, dataset: str) -> pd.DataFrame:
    ref = paper.parse_model_label(label)
    return _selected_runs(_runs_of(frame, ref.method, dataset, ref.distance or "euclidean"))


def _column_name(label: str, metric: str) -> str:
    """The flat column of a row's test metric: ``test_acc`` or, for "+ KM" rows, ``km_test_acc``."""
    prefix = "km_" if paper.parse_model_label(label).kmeans_on_embedding else ""
    return f"{prefix}test_{metric}"


def _mark_groups(spec: TableSpec, labels: list[str]) -> dict[str, set[str]]:
    """Mark style -> the row labels that may define its best."""
    return {
        mark.style: {
            label
            for label in labels
            if mark.best_among is None or paper.parse_model_label(label).method in mark.best_among
        }
        for mark in spec.marks
    }


def _results_cells(
    spec: TableSpec,
    records: Iterable[Mapping[str, Any]],
    vs_paper: bool,
    missing_reason: str | Mapping[str, str] | None,
) -> tuple[dict, list[pd.DataFrame]]:
    """(row label, dataset, metric) -> Cell, and the runs used."""
    frame = _records_frame(records)
    labels = [label for group in spec.groups for label in group.rows]
    selected = {
        (label, dataset): _row_runs(frame, label, dataset)
        for label in labels
        for dataset in spec.datasets
    }
    groups = _mark_groups(spec, labels)
    cells = {}
    for dataset in spec.datasets:
        for metric in spec.metrics:
            samples = {
                label: tuple(100 * selected[label, dataset][_column_name(label, metric)].dropna())
                for label in labels
            }
            marks = significance_marks(samples, groups)
            for label in labels:
                reference = _paper_figure(spec, label, dataset, metric) if vs_paper else None
                cells[label, dataset, metric] = _result_cell(
                    samples[label],
                    _missing_text(spec, dataset, missing_reason),
                    {style for style, marked in marks.items() if label in marked},
                    reference,
                )
    contributing = (
        runs[runs[_column_name(label, spec.metrics[0])].notna()]
        for (label, _), runs in selected.items()
    )
    return cells, [runs for runs in contributing if len(runs)]


def _tradeoff_text(value: float) -> str:
    """``1e-1``, ``1e+0`` like the paper for powers of ten, else ``%g``."""
    exponent = round(math.log10(value))
    return f"1e{exponent:+d}" if math.isclose(value, 10.0**exponent) else f"{value:g}"


def _line_search_optimum(runs: pd.DataFrame) -> float:
    """The selected trade-off of a line search (2+ values), else NaN."""
    return selected_tradeoff(runs) if runs["tradeoff"].nunique() > 1 else math.nan


def _tradeoff_cell(chosen: float, reference: float | None, vs_paper: bool, missing: str) -> Cell:
    if not math.isnan(chosen):
        note = _note(
            [f"paper {_tradeoff_text(reference)}"] if vs_paper and reference is not None else []
        )
        return Cell(_tradeoff_text(chosen), note=note)
    if reference is None:
        return Cell(missing, missing=True)
    return Cell(_tradeoff_text(reference), note="(paper)")


def _tradeoff_cells(
    spec: TableSpec,
    records: Iterable[Mapping[str, Any]],
    vs_paper: bool,
    missing_reason: str | Mapping[str, str] | None,
) -> tuple[dict, list[pd.DataFrame]]:
    """(row label, dataset) -> Cell, and the line searches used."""
    frame = _records_frame(records)
    cells, used = {}, []
    for label in (label for group in spec.groups for label in group.rows):
        method = paper.method_id(label)
        for dataset in spec.datasets:
            runs = _runs_of(frame, method, dataset, "euclidean")
            chosen = _line_search_optimum(runs)
            cells[label, dataset] = _tradeoff_cell(
                chosen,
                paper.optimal_tradeoff(method, dataset, default=None),
                vs_paper,
                _missing_text(spec, dataset, missing_reason),
            )
            if not math.isnan(chosen):
                used.append(runs)
    return cells, used


def _dataset_rows(statistics: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Dataset id -> its statistics, checking the keys."""
    rows = {}
    for entry in statistics:
        missing = {"dataset", *_STATISTIC_LABELS} - set(entry)
        if missing:
            raise ValueError(f"dataset statistics {dict(entry)!r} lack the keys {sorted(missing)}")
        rows[entry["dataset"]] = entry
    return rows


def _datasets_cells(
    spec: TableSpec,
    statistics: Iterable[Mapping[str, Any]],
    vs_paper: bool,
    missing_reason: str | Mapping[str, str] | None,
) -> tuple[dict, list[pd.DataFrame]]:
    """(statistic, dataset) -> Cell; no runs are used."""
    ours = _dataset_rows(statistics)
    cells = {}
    for key in (key for group in spec.groups for key in group.rows):
        for dataset in spec.datasets:
            reference = [f"paper {paper.dataset_statistics(dataset)[key]:,}"] if vs_paper else []
            if dataset in ours:
                cells[key, dataset] = Cell(f"{int(ours[dataset][key]):,}", note=_note(reference))
            else:
                cells[key, dataset] = Cell(_missing_text(spec, dataset, missing_reason),
                                           note=_note(reference), missing=True)
    return cells, []
