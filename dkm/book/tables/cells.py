"""From records to a table: record -> frame -> selection -> cell -> table.

:func:`records_frame` turns validated records into a flat frame, one row per run;
:func:`selected_runs` picks the runs a cell uses (of a line search, the trade-off value with
the best mean validation ACC: :func:`selected_tradeoff`, :func:`selected_tradeoffs`); a
:class:`Cell` summarizes them (percent), with its significance marks and, on demand, the
paper's figure and verdict; :func:`build` lays a table's cells out as a DataFrame with the
paper's rows and columns, and :func:`comparisons` and :func:`disagreements` hold every result
cell against the paper's figure.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dkm.book.stats import (
    Comparison,
    compare_with_paper,
    comparison_interval,
    marks_from_figures,
    p_value_within_rounding,
    significance_marks,
    summarize,
)
from dkm.book.tables.spec import STATISTIC_LABELS, TABLES, TableSpec, with_recorded_rows
from dkm.protocol import paper, registry
from dkm.protocol.paper import TRADEOFF_GRID
from dkm.protocol.results import records_to_dataframe, score_column, validate_record


def records_frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Validated records as a flat frame, one row per distinct ``config_hash``.

    The records of a method nobody declared are left out: the tables label their
    rows by the registry (:meth:`dkm.protocol.results.ResultsStore.records`, which
    reads them, names them in its warning).
    """
    records = list(records)
    for record in records:
        validate_record(record, declared=False)
    frame = records_to_dataframe([r for r in records if r["method"] in registry.METHODS])
    return frame.drop_duplicates("config_hash", keep="last")


def _runs_of(frame: pd.DataFrame, method: str, dataset: str, distance: str) -> pd.DataFrame:
    mask = (
        (frame["method"] == method)
        & (frame["dataset"] == dataset)
        & (frame["distance"] == distance)
    )
    return frame[mask]


def selected_tradeoff(runs: pd.DataFrame) -> float:
    """The trade-off value with the best mean validation ACC among ``runs``.

    Parameters
    ----------
    runs : pandas.DataFrame
        Rows of :func:`dkm.protocol.results.records_to_dataframe` for one method,
        dataset and distance.

    Returns
    -------
    float
        NaN when the runs carry no trade-off (KM, AE-KM), no validation ACC
        or no rows; ties go to the smaller value.
    """
    means = runs.groupby("tradeoff")["val_acc"].mean().dropna()
    return float(means.idxmax()) if len(means) else math.nan


#: Columns of :func:`selected_tradeoffs`, in order.
SELECTED_TRADEOFF_COLUMNS = (
    "dataset",
    "method",
    "distance",
    "tradeoff_name",
    "values",
    "selected",
    "runs",
    "val_acc",
    "test_acc",
)


def selected_tradeoffs(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The validation-optimal λ or γ of every line search in the records.

    The records are grouped by dataset, method and distance; in each group
    :func:`selected_tradeoff` picks the value with the best mean validation
    ACC (ties go to the smaller value), the choice the result tables make.

    Parameters
    ----------
    records : iterable of dict
        Run records (:mod:`dkm.protocol.results`); a record stored twice (same
        ``config_hash``) counts once. Records of methods without a
        trade-off (KM, AE-KM) are ignored.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, method, distance), sorted, with the columns
        :data:`SELECTED_TRADEOFF_COLUMNS`: ``tradeoff_name`` (``"lambda"``
        or ``"gamma"``), ``values`` (how many distinct values were run: 1
        means no line search), ``selected`` (NaN without validation
        labels), ``runs`` (the runs at the selected value) and ``val_acc``
        / ``test_acc`` (their mean ACC, fractions).

    Raises
    ------
    ValueError
        For an invalid record.
    """
    frame = records_frame(records)
    frame = frame[frame["tradeoff"].notna()]
    rows = []
    for (dataset, method, distance), runs in frame.groupby(["dataset", "method", "distance"]):
        chosen = selected_tradeoff(runs)
        at_chosen = runs[runs["tradeoff"] == chosen]
        rows.append(
            {
                "dataset": dataset,
                "method": method,
                "distance": distance,
                "tradeoff_name": runs["tradeoff_name"].iloc[0],
                "values": int(runs["tradeoff"].nunique()),
                "selected": chosen,
                "runs": len(at_chosen),
                "val_acc": float(at_chosen["val_acc"].mean()) if len(at_chosen) else math.nan,
                "test_acc": float(at_chosen["test_acc"].mean()) if len(at_chosen) else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=list(SELECTED_TRADEOFF_COLUMNS))


def selected_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs of the selected trade-off value (all runs when there is none)."""
    chosen = selected_tradeoff(runs)
    return runs if math.isnan(chosen) else runs[runs["tradeoff"] == chosen]


def _scale_label(frames: list[pd.DataFrame]) -> str:
    """``"1"``, ``"0.1, 1"``, ``"unspecified"`` or ``"none"``: the scales of the runs used."""
    scales = pd.concat(frames)["scale"] if frames else pd.Series(dtype=float)
    values = sorted(set(scales.dropna().tolist()))
    named = ", ".join(f"{value:g}" for value in values)
    if scales.isna().any():
        named = f"{named}, unspecified" if named else "unspecified"
    return named or "none"


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
    paper_marks : frozenset of str
        The marks of the paper's figure (``"bold"``, ``"underline"``),
        computed from the paper's figures of the column
        (:func:`dkm.book.stats.marks_from_figures`); empty without them.
    """

    text: str
    bold: bool = False
    underline: bool = False
    note: str = ""
    runs: tuple[float, ...] = field(default=(), repr=False)
    comparison: Comparison | None = field(default=None, repr=False)
    missing: bool = False
    paper_marks: frozenset[str] = frozenset()

    def __str__(self) -> str:
        return f"{self.text} {self.note}" if self.note else self.text


def figure(mean: float, std: float) -> str:
    """A mean and its standard deviation as the paper writes them, ``"75.7±1.3"`` (the mean
    alone when the deviation is NaN: a single run)."""
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
    paper_marks: frozenset[str] = frozenset(),
) -> Cell:
    """A result cell from its runs (percent), marks, the paper's figure and its marks."""
    paper_part = [f"paper {figure(*reference[:2])}"] if reference else []
    if not runs:
        return Cell(missing, note=_note(paper_part), missing=True, paper_marks=paper_marks)
    mean, std, n = summarize(runs)
    parts = [] if n == PAPER_RUNS else [f"n={n}"]
    comparison = compare_with_paper(runs, *reference) if reference else None
    if comparison is not None:
        parts += paper_part + [comparison.verdict]
    return Cell(figure(mean, std), "bold" in marks, "underline" in marks, _note(parts), runs,
                comparison, paper_marks=paper_marks)


def _row_runs(frame: pd.DataFrame, label: str, dataset: str) -> pd.DataFrame:
    ref = paper.parse_model_label(label)
    return selected_runs(_runs_of(frame, ref.method, dataset, ref.distance or "euclidean"))


def _column_name(label: str, metric: str) -> str:
    """The flat column of a row's test metric: ``test_acc`` or, for "+ KM" rows, ``km_test_acc``."""
    return score_column(metric, "test", paper.parse_model_label(label).kmeans_on_embedding)


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
    frame = records_frame(records)
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
            references = {label: _paper_figure(spec, label, dataset, metric) if vs_paper else None
                          for label in labels}
            reported = {label: figure for label, figure in references.items() if figure}
            paper_marks = marks_from_figures(reported, groups)
            for label in labels:
                cells[label, dataset, metric] = _result_cell(
                    samples[label],
                    _missing_text(spec, dataset, missing_reason),
                    {style for style, marked in marks.items() if label in marked},
                    references[label],
                    frozenset(style for style, marked in paper_marks.items() if label in marked),
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


def _unfinished_search(runs: pd.DataFrame) -> list[str]:
    """What a line search has yet to run, in words; empty once each seed has run the whole grid."""
    grid = len(TRADEOFF_GRID)
    values = runs["tradeoff"].nunique()
    if values < grid:
        return [f"{values} of {grid} values run"]
    values_per_seed = runs.groupby("seed")["tradeoff"].nunique()
    whole = int((values_per_seed == grid).sum())
    return [] if whole == len(values_per_seed) else [
        f"whole grid on {whole} of {len(values_per_seed)} seeds"]


def _tradeoff_cell(chosen: float, reference: float | None, vs_paper: bool, missing: str,
                   unfinished: list[str]) -> Cell:
    if not math.isnan(chosen):
        note = _note(
            ([f"paper {_tradeoff_text(reference)}"] if vs_paper and reference is not None else [])
            + unfinished
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
    frame = records_frame(records)
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
                _unfinished_search(runs),
            )
            if not math.isnan(chosen):
                used.append(runs)
    return cells, used


def _dataset_rows(statistics: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Dataset id -> its statistics, checking the keys."""
    rows = {}
    for entry in statistics:
        missing = {"dataset", *STATISTIC_LABELS} - set(entry)
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


def _row_label(spec: TableSpec, key: str) -> str:
    if spec.kind == "datasets":
        return STATISTIC_LABELS[key]
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
    if spec.rows_from_records:
        records = list(records)
        spec = with_recorded_rows(spec, (r["method"] for r in records if
                                         r["params"].get("distance", "euclidean") == "euclidean"),
                                  (r["dataset"] for r in records))
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
        ``difference`` (ours − paper), ``low`` and ``high`` (its 95 % interval,
        :func:`dkm.book.stats.comparison_interval`: "consistent" when it holds zero),
        ``p_value``, ``verdict`` (``"consistent"``, ``"better"`` or ``"worse"``),
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
                    "ours": figure(comparison.mean, comparison.std),
                    "paper": figure(comparison.paper_mean, comparison.paper_std),
                    "n": comparison.n, "difference": round(comparison.difference, 1),
                    **dict(zip(("low", "high"), comparison_interval(comparison))),
                    "p_value": comparison.p_value, "verdict": comparison.verdict,
                    "p_within_rounding": p_value_within_rounding(comparison),
                    "ours_mean": comparison.mean, "ours_std": comparison.std,
                    "paper_mean": comparison.paper_mean, "paper_std": comparison.paper_std,
                })
    columns = ["table", "dataset", "model", "metric", "ours", "paper", "n", "difference", "low",
               "high", "p_value", "verdict", "p_within_rounding", "ours_mean", "ours_std", "paper_mean",
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
