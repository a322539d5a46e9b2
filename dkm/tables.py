"""The tables of the paper and its supplement, rebuilt from run records.

:func:`build` turns run records (:mod:`dkm.results`) into a table with the
paper's layout, :func:`render` writes it as Markdown, HTML or LaTeX. Each
table is described by a small declarative :class:`TableSpec` in
:data:`TABLES`:

============== ==========================================================
name           the paper's table
============== ==========================================================
``table1``     Table 1: KM, AE-KM, DCN, DKM; ACC and NMI
``table2``     Table 2: IDEC and DKM; ACC and NMI
``ari1``       supplement: ARI of the k-Means-related methods
``ari2``       supplement: ARI of IDEC and DKM
``cosine``     supplement: DKM with f Euclidean or cosine on 20NEWS
``friendliness`` supplement: k-means on the learned embeddings
``tradeoff``   supplement: the validation-optimal λ and γ
``datasets``   supplement: the datasets' statistics
============== ==========================================================

The DataFrame
-------------
Rows are indexed by ``(group heading, row label)`` (heading ``""`` when the
paper has none; labels as the paper writes them, ``"DKM^p"``), columns by
``(dataset, metric)`` for the result tables and by dataset for the other two.
Every cell is a :class:`Cell`: its text, its marks, its runs (in percent)
and, with ``vs_paper=True``, its :class:`~dkm.stats.Comparison` with the
paper; ``str(cell)`` is the plain text. ``DataFrame.attrs`` holds the title,
caption, legend of the marks and the scales of the runs, for :func:`render`.

Which runs fill a cell
----------------------
Only the test split is reported (``metrics["test"]``; the "+ KM" rows of the
friendliness table take ``kmeans_on_embedding["test"]``), in percent. A cell
gathers the records of its method, dataset and distance (``DKM^a_ce``:
cosine; every other row: Euclidean); a record stored twice (same
``config_hash``) counts once, the later copy winning. When the records hold
several trade-off values (a line search), the cell uses the value with the
best mean validation ACC of the method itself, as the paper's protocol does
(ties go to the smaller value); :func:`selected_tradeoff` exposes that
choice, :func:`selected_tradeoffs` makes it for every line search in a set
of records, and the ``tradeoff`` table reports it. The mean and the sample
standard deviation are shown as ``75.7±1.3`` like the paper, with
``(n=3)`` added when a cell has a number of runs other than the paper's 10.
A cell without records reads "not run", or the caller's reason.

Marks
-----
Marks follow :func:`dkm.stats.significance_marks`. The result tables mark
bold the cells not significantly different from the best method with
pretraining and underline those not significantly different from the best
one without; the cosine and friendliness tables mark bold the cells not
significantly different from the best row. Markdown has no underline: there,
bold is ``**75.7±1.3**`` and the paper's underline is written as emphasis,
``_75.7±1.3_`` (both: ``**_75.7±1.3_**``), and the legend under the table
says so. LaTeX uses ``\\textbf`` / ``\\underline`` and HTML ``<b>`` / ``<u>``.

Side by side with the paper
---------------------------
With ``vs_paper=True`` each result cell reads
``72.1±1.0 (paper 72.9±0.8, consistent)``: the reproduced figure (with its
marks), the paper's and the verdict of :func:`dkm.stats.compare_with_paper`
(``consistent``, ``better`` or ``worse``).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dkm import paper
from dkm.results import records_to_dataframe, validate_record
from dkm.stats import (
    NOT_PRETRAINED,
    PRETRAINED,
    Comparison,
    compare_with_paper,
    p_value_within_rounding,
    significance_marks,
    summarize,
)

__all__ = [
    "PAPER_RUNS",
    "Mark",
    "RowGroup",
    "TableSpec",
    "Cell",
    "TABLES",
    "FORMATS",
    "RESULT_TABLES",
    "selected_tradeoff",
    "SELECTED_TRADEOFF_COLUMNS",
    "selected_tradeoffs",
    "build",
    "render",
    "typeset",
    "VERDICT_MARKS",
    "disagreements",
]

#: Runs per cell in the paper; other counts are shown as ``(n=...)``.
PAPER_RUNS = 10
_PAPER_DATASETS = tuple(paper.DATASET_LABELS)


@dataclass(frozen=True)
class Mark:
    """A significance mark of a table.

    Attributes
    ----------
    style : str
        ``"bold"`` or ``"underline"``.
    best_among : frozenset of str or None
        Method ids whose rows may define the best; ``None``: every row.
    meaning : str
        The legend, completing "<style>: ...".
    """

    style: str
    best_among: frozenset[str] | None
    meaning: str


@dataclass(frozen=True)
class RowGroup:
    """Consecutive rows under one heading (``""``: no heading)."""

    heading: str
    rows: tuple[str, ...]


@dataclass(frozen=True)
class TableSpec:
    """Declarative description of one table.

    Attributes
    ----------
    kind : str
        ``"results"`` (cells are runs' metrics), ``"tradeoff"`` (cells are
        the optimal λ / γ) or ``"datasets"`` (cells are dataset statistics).
    title, caption : str
        Shown above the rendered table.
    groups : tuple of RowGroup
        The rows, in the paper's order. Result and trade-off rows are paper
        labels (:func:`dkm.paper.parse_model_label`); dataset rows are the
        keys ``"samples"``, ``"classes"``, ``"dimensions"``.
    datasets : tuple of str
        Column datasets (package ids).
    metrics : tuple of str
        Column metrics of a result table (``"acc"``, ``"nmi"``, ``"ari"``).
    marks : tuple of Mark
        Significance marks of a result table.
    paper_table : str or None
        Short name of the paper's table in :data:`dkm.paper.TABLE_KEYS`.
    stub : str
        Heading of the row-label column.
    missing : str
        Text of a cell with nothing to show.
    """

    kind: str
    title: str
    caption: str
    groups: tuple[RowGroup, ...]
    datasets: tuple[str, ...] = _PAPER_DATASETS
    metrics: tuple[str, ...] = ()
    marks: tuple[Mark, ...] = ()
    paper_table: str | None = None
    stub: str = "Model"
    missing: str = "not run"


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
    """

    text: str
    bold: bool = False
    underline: bool = False
    note: str = ""
    runs: tuple[float, ...] = field(default=(), repr=False)
    comparison: Comparison | None = field(default=None, repr=False)

    def __str__(self) -> str:
        return f"{self.text} {self.note}" if self.note else self.text


_WITH_PRETRAINING = Mark(
    "bold",
    PRETRAINED,
    "no significant difference (p > 0.05) to the best approach with pretraining "
    "for each dataset/metric pair",
)
_WITHOUT_PRETRAINING = Mark(
    "underline",
    NOT_PRETRAINED,
    "no significant difference (p > 0.05) to the best approach without pretraining "
    "for each dataset/metric pair",
)
_TO_THE_BEST = Mark(
    "bold", None, "no significant difference (p > 0.05) to the best for each dataset/metric"
)
_WITHOUT_HEADING = "Deep clustering approaches without pretraining"
_WITH_HEADING = "Deep clustering approaches with pretraining"
_RESULTS_CAPTION = (
    "Each cell contains the average and standard deviation (%) computed over the runs; "
    "higher is better."
)


def _results_spec(
    title: str,
    first: tuple[str, ...],
    without: tuple[str, ...],
    with_: tuple[str, ...],
    metrics: tuple[str, ...],
    paper_table: str,
) -> TableSpec:
    """A table of the paper's main layout: baselines, then without / with pretraining."""
    groups = (RowGroup("", first),) if first else ()
    return TableSpec(
        kind="results",
        title=title,
        caption=_RESULTS_CAPTION,
        groups=groups + (RowGroup(_WITHOUT_HEADING, without), RowGroup(_WITH_HEADING, with_)),
        metrics=metrics,
        marks=(_WITH_PRETRAINING, _WITHOUT_PRETRAINING),
        paper_table=paper_table,
    )


_KM_RELATED = (("KM", "AE-KM"), ("DCN^np", "DKM^a"), ("DCN^p", "DKM^p"))
_VS_IDEC = ((), ("IDEC^np", "DKM^a"), ("IDEC^p", "DKM^p"))

#: Every table of the paper and its supplement, by short name.
TABLES: dict[str, TableSpec] = {
    "table1": _results_spec(
        "Table 1: clustering results of the k-Means-related methods (ACC and NMI)",
        *_KM_RELATED,
        ("acc", "nmi"),
        "table1",
    ),
    "table2": _results_spec(
        "Table 2: clustering results of the DKM and IDEC methods (ACC and NMI)",
        *_VS_IDEC,
        ("acc", "nmi"),
        "table2",
    ),
    "ari1": _results_spec(
        "Supplement: clustering results of the k-Means-related methods (ARI)",
        *_KM_RELATED,
        ("ari",),
        "ari1",
    ),
    "ari2": _results_spec(
        "Supplement: clustering results of the DKM and IDEC methods (ARI)",
        *_VS_IDEC,
        ("ari",),
        "ari2",
    ),
    "cosine": TableSpec(
        kind="results",
        title="Supplement: DKM with the euclidean and cosine distances on 20NEWS",
        caption=_RESULTS_CAPTION,
        groups=(
            RowGroup("f = euclidean distance, g = euclidean distance", ("DKM^a_ee", "DKM^p_ee")),
            RowGroup("f = cosine distance, g = euclidean distance", ("DKM^a_ce", "DKM^p_ce")),
        ),
        datasets=("20news",),
        metrics=("acc", "nmi", "ari"),
        marks=(_TO_THE_BEST,),
        paper_table="cosine",
    ),
    "friendliness": TableSpec(
        kind="results",
        title="Supplement: k-Means applied to the learned embedding spaces (k-Means-friendliness)",
        caption=_RESULTS_CAPTION + ' "+ KM": k-means on the final embedding of the method.',
        groups=(RowGroup("", ("AE-KM", "DCN^p + KM", "DKM^a + KM", "DKM^p + KM")),),
        metrics=("acc", "nmi"),
        marks=(_TO_THE_BEST,),
        paper_table="friendliness",
    ),
    "tradeoff": TableSpec(
        kind="tradeoff",
        title="Supplement: optimal trade-off hyperparameters (λ for DKM and DCN, γ for IDEC)",
        caption=(
            "The value with the best mean validation ACC of a line search in the records; "
            '"(paper)" where the records hold no line search for the cell.'
        ),
        groups=(RowGroup("", ("DKM^a", "DKM^p", "DCN^p", "DCN^np", "IDEC^p", "IDEC^np")),),
        stub="Hyperparameter",
    ),
    "datasets": TableSpec(
        kind="datasets",
        title="Supplement: statistics of the datasets",
        caption="Dimensions of the images are flattened (MNIST: 28 × 28 = 784).",
        groups=(RowGroup("", ("samples", "classes", "dimensions")),),
        stub="Dataset",
        missing="not loaded",
    ),
}

_STATISTIC_LABELS = {"samples": "#Samples", "classes": "#Classes", "dimensions": "Dimensions"}
_TRADEOFF_SYMBOLS = {"lambda": "λ", "gamma": "γ"}


# ---------------------------------------------------------------- selecting runs


def _records_frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Validated records as a flat frame, one row per distinct ``config_hash``."""
    records = list(records)
    for record in records:
        validate_record(record)
    frame = records_to_dataframe(records)
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
        Rows of :func:`dkm.results.records_to_dataframe` for one method,
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
        Run records (:mod:`dkm.results`); a record stored twice (same
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
    frame = _records_frame(records)
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


def _selected_runs(runs: pd.DataFrame) -> pd.DataFrame:
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


# ---------------------------------------------------------------- cells


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
        return Cell(missing, note=_note(paper_part))
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


def _paper_tradeoff(method: str, dataset: str) -> float | None:
    try:
        return paper.optimal_tradeoff(method, dataset)
    except ValueError:
        return None


def _line_search_optimum(runs: pd.DataFrame) -> float:
    """The selected trade-off of a line search (2+ values), else NaN."""
    return selected_tradeoff(runs) if runs["tradeoff"].nunique() > 1 else math.nan


def _tradeoff_cell(chosen: float, reference: float | None, vs_paper: bool, missing: str) -> Cell:
    if not math.isnan(chosen):
        note = _note(
            [f"paper {_tradeoff_text(reference)}"] if vs_paper and reference is not None else []
        )
        return Cell(_tradeoff_text(chosen), note=note)
    return Cell(missing) if reference is None else Cell(_tradeoff_text(reference), note="(paper)")


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
                _paper_tradeoff(method, dataset),
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
            text = (
                f"{int(ours[dataset][key]):,}"
                if dataset in ours
                else _missing_text(spec, dataset, missing_reason)
            )
            cells[key, dataset] = Cell(text, note=_note(reference))
    return cells, []


# ---------------------------------------------------------------- building


def _row_label(spec: TableSpec, key: str) -> str:
    if spec.kind == "datasets":
        return _STATISTIC_LABELS[key]
    if spec.kind == "tradeoff":
        return f"{_TRADEOFF_SYMBOLS[paper.tradeoff_name(paper.method_id(key))]} ({key})"
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
        Run records (:mod:`dkm.results`), e.g. ``store.records()``; records
        of other methods or datasets are ignored. For ``"datasets"``: dicts
        with the keys ``dataset`` (id), ``samples``, ``classes`` and
        ``dimensions``.
    vs_paper : bool
        Add the paper's figure to each cell, and for result cells the
        verdict of :func:`dkm.stats.compare_with_paper`.
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


# ---------------------------------------------------------------- rendering


@dataclass(frozen=True)
class _Format:
    """How one output format writes text, labels and marks."""

    escape: Callable[[str], str]
    scripts: Callable[[str, str | None], str]
    styles: Mapping[str, Callable[[str], str]]
    style_names: Mapping[str, str]
    compact: bool = False


_LABEL_MARKUP = re.compile(r"\^([a-z]+)(?:_([a-z]+))?")


def _format_label(label: str, fmt: _Format) -> str:
    """Escape a row label, writing ``^p`` and ``_ce`` as super/subscripts."""
    pieces, position = [], 0
    for match in _LABEL_MARKUP.finditer(label):
        pieces.append(fmt.escape(label[position : match.start()]))
        pieces.append(fmt.scripts(match[1], match[2]))
        position = match.end()
    pieces.append(fmt.escape(label[position:]))
    return "".join(pieces)


def _latex_escape(text: str) -> str:
    special = {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\^{}",
        "<": r"$<$",
        ">": r"$>$",
        "±": r"$\pm$",
        "×": r"$\times$",
        "λ": r"$\lambda$",
        "γ": r"$\gamma$",
    }
    return "".join(special.get(char, char) for char in text)


def _latex_scripts(superscript: str, subscript: str | None) -> str:
    """``$^{\\mathrm{a}}_{\\mathrm{ce}}$``: one math group, so that no ``$$`` appears."""
    below = f"_{{\\mathrm{{{subscript}}}}}" if subscript else ""
    return f"$^{{\\mathrm{{{superscript}}}}}{below}$"


_FORMATS: Mapping[str, _Format] = {
    "markdown": _Format(
        escape=lambda text: text.replace("|", r"\|"),
        scripts=lambda above, below: f"^{above}" + (f"_{below}" if below else ""),
        styles={"bold": lambda text: f"**{text}**", "underline": lambda text: f"_{text}_"},
        style_names={"bold": "Bold", "underline": "Italic (the paper's underline)"},
    ),
    "html": _Format(
        escape=html.escape,
        scripts=lambda above, below: (
            f"<sup>{above}</sup>" + (f"<sub>{below}</sub>" if below else "")
        ),
        styles={"bold": lambda text: f"<b>{text}</b>", "underline": lambda text: f"<u>{text}</u>"},
        style_names={"bold": "Bold", "underline": "Underlined"},
    ),
    "html-compact": _Format(
        escape=html.escape,
        scripts=lambda above, below: (
            f"<sup>{above}</sup>" + (f"<sub>{below}</sub>" if below else "")
        ),
        styles={"bold": lambda text: f"<b>{text}</b>", "underline": lambda text: f"<u>{text}</u>"},
        style_names={"bold": "Bold", "underline": "Underlined"},
        compact=True,
    ),
    "latex": _Format(
        escape=_latex_escape,
        scripts=_latex_scripts,
        styles={
            "bold": lambda text: f"\\textbf{{{text}}}",
            "underline": lambda text: f"\\underline{{{text}}}",
        },
        style_names={"bold": "Bold", "underline": "Underlined"},
    ),
}

#: The output formats of :func:`render`.
FORMATS = tuple(_FORMATS)


def typeset(text: str, fmt: str = "html") -> str:
    """``text`` escaped for ``fmt``, the paper's labels in it with their scripts.

    Examples
    --------
    >>> typeset("DKM^p beats DCN^p; DKM^a_ce")
    'DKM<sup>p</sup> beats DCN<sup>p</sup>; DKM<sup>a</sup><sub>ce</sub>'
    """
    if fmt not in _FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    return _format_label(text, _FORMATS[fmt])


def _cell_text(value: Any, fmt: _Format) -> str:
    """A cell in a format: marked text, then the unmarked note."""
    if not isinstance(value, Cell):
        return fmt.escape(str(value))
    text = fmt.escape(value.text)
    if value.underline:
        text = fmt.styles["underline"](text)
    if value.bold:
        text = fmt.styles["bold"](text)
    return f"{text} {fmt.escape(value.note)}" if value.note else text


#: Marks of the compact format: our figure against the paper's.
VERDICT_MARKS: Mapping[str, str] = {"better": "▲", "worse": "▼", "consistent": ""}
_COMPACT_LEGEND = ("Under each of our figures (mean over the n runs), the paper's; ▲ / ▼: ours "
                   "significantly above / below it (Welch t-test, p < 0.05; a single run: z test "
                   "against the paper's standard deviation), otherwise consistent; –: no run of "
                   "ours")


def _compact_cell(value: Any, fmt: _Format) -> str:
    """Our figure with its marks and verdict, the paper's figure below it (HTML)."""
    if isinstance(value, Cell) and value.comparison is None and value.note.startswith("(paper "):
        # no runs of ours: a dash, the paper's figure below it (the reason is in the text)
        return (f'<span title="{fmt.escape(value.text)}">–</span><br>'
                f'<small style="color:#666">{fmt.escape(value.note[1:-1])}</small>')
    if not isinstance(value, Cell) or value.comparison is None:
        return _cell_text(value, fmt)
    comparison = value.comparison
    text = fmt.escape(_figure(comparison.mean, comparison.std))
    if value.underline:
        text = fmt.styles["underline"](text)
    if value.bold:
        text = fmt.styles["bold"](text)
    mark = VERDICT_MARKS[comparison.verdict]
    if mark:
        text += f' <span class="verdict-{comparison.verdict}">{mark}</span>'
    paper_figure = _figure(comparison.paper_mean, comparison.paper_std)
    return (f'{text} <small>n={comparison.n}</small><br><small style="color:#666">paper '
            f"{fmt.escape(paper_figure)}</small>")


def _caption(table: pd.DataFrame, fmt: _Format) -> str:
    """Caption, legend of the marks and scales, as one escaped paragraph."""
    attrs = table.attrs
    sentences = [attrs.get("caption", "")]
    for style, meaning in attrs.get("legend", ()):
        if fmt.compact and meaning.startswith("In parentheses"):
            meaning = _COMPACT_LEGEND
        sentences.append(f"{fmt.style_names[style]}: {meaning}." if style else f"{meaning}.")
    if attrs.get("scales") is not None:
        sentences.append(f"Runs at scale: {attrs['scales']}.")
    return fmt.escape(" ".join(sentence for sentence in sentences if sentence))


def _header_levels(table: pd.DataFrame) -> list[list[str]]:
    """Column labels per header row; levels with one value are dropped (kept if alone)."""
    columns = table.columns
    levels = [[str(value) for value in columns.get_level_values(i)] for i in range(columns.nlevels)]
    varying = [level for level in levels if len(set(level)) > 1]
    return varying or levels[-1:]


def _spans(level: list[str]) -> list[tuple[str, int]]:
    """Runs of equal adjacent labels: ``[("MNIST", 2), ("USPS", 2)]``."""
    spans: list[tuple[str, int]] = []
    for value in level:
        if spans and spans[-1][0] == value:
            spans[-1] = (value, spans[-1][1] + 1)
        else:
            spans.append((value, 1))
    return spans


def _body(table: pd.DataFrame, fmt: _Format) -> list[tuple[str, str, list[str]]]:
    """Rows as (kind, text, cells): ("heading", heading, []) or ("row", label, cells)."""
    rows: list[tuple[str, str, list[str]]] = []
    current = None
    for (heading, label), values in zip(
        table.index, table.itertuples(index=False, name=None), strict=True
    ):
        if heading != current and heading:
            rows.append(("heading", fmt.escape(heading), []))
        current = heading
        rows.append(
            ("row", _format_label(str(label), fmt),
             [(_compact_cell if fmt.compact else _cell_text)(value, fmt) for value in values])
        )
    return rows


def _markdown(table: pd.DataFrame, fmt: _Format) -> str:
    header = [" ".join(parts) for parts in zip(*_header_levels(table), strict=True)]
    width = len(header)
    lines = [
        f"**{fmt.escape(table.attrs.get('title', ''))}**",
        "",
        "| "
        + " | ".join([fmt.escape(table.index.names[-1] or "")] + [fmt.escape(h) for h in header])
        + " |",
        "|:--" + "|:-:" * width + "|",
    ]
    for kind, text, cells in _body(table, fmt):
        row = [text, *cells] if kind == "row" else [f"*{text}*", *[""] * width]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines + ["", _caption(table, fmt), ""])


def _span_attribute(name: str, span: int) -> str:
    return f' {name}="{span}"' if span > 1 else ""


def _html(table: pd.DataFrame, fmt: _Format) -> str:
    levels = _header_levels(table)
    width = len(levels[0])
    title = fmt.escape(table.attrs.get("title", ""))
    lines = ["<table>", f"<caption><b>{title}</b>. {_caption(table, fmt)}</caption>", "<thead>"]
    for number, level in enumerate(levels):
        stub_name = fmt.escape(table.index.names[-1] or "")
        stub = (
            f"<th{_span_attribute('rowspan', len(levels))}>{stub_name}</th>" if number == 0 else ""
        )
        spans = "".join(
            f"<th{_span_attribute('colspan', span)}>{fmt.escape(value)}</th>"
            for value, span in _spans(level)
        )
        lines.append(f"<tr>{stub}{spans}</tr>")
    lines += ["</thead>", "<tbody>"]
    for kind, text, cells in _body(table, fmt):
        if kind == "heading":
            lines.append(f'<tr><td colspan="{width + 1}"><i>{text}</i></td></tr>')
        else:
            lines.append(
                "<tr>" + "".join(f"<td>{value}</td>" for value in [text, *cells]) + "</tr>"
            )
    return "\n".join(lines + ["</tbody>", "</table>", ""])


def _latex(table: pd.DataFrame, fmt: _Format) -> str:
    levels = _header_levels(table)
    width = len(levels[0])
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        f"\\caption{{{fmt.escape(table.attrs.get('title', ''))}. {_caption(table, fmt)}}}",
        f"\\begin{{tabular}}{{@{{}}l{'c' * width}@{{}}}}",
        r"\toprule",
    ]
    for number, level in enumerate(levels):
        stub = fmt.escape(table.index.names[-1] or "") if number == 0 else ""
        spans = [
            value if span == 1 else f"\\multicolumn{{{span}}}{{c}}{{{value}}}"
            for value, span in ((fmt.escape(v), s) for v, s in _spans(level))
        ]
        lines.append(" & ".join([stub, *spans]) + r" \\")
        if number < len(levels) - 1:
            lines.append(rf"\cmidrule(l){{2-{width + 1}}}")
    lines.append(r"\midrule")
    for kind, text, cells in _body(table, fmt):
        if kind == "heading":
            if lines[-1] != r"\midrule":
                lines.append(r"\midrule")
            lines += [rf"\multicolumn{{{width + 1}}}{{c}}{{{text}}} \\", r"\midrule"]
        else:
            lines.append(" & ".join([text, *cells]) + r" \\")
    return "\n".join(lines + [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""])


_WRITERS: Mapping[str, Callable[[pd.DataFrame, _Format], str]] = {
    "markdown": _markdown,
    "html": _html,
    "html-compact": _html,
    "latex": _latex,
}


def render(table: pd.DataFrame | str, fmt: str = "markdown", **build_options: Any) -> str:
    """Write a table as Markdown, HTML or LaTeX.

    Parameters
    ----------
    table : pandas.DataFrame or str
        A table from :func:`build` (any DataFrame with a two-level row index
        ``(group, label)`` renders; non-:class:`Cell` values are written with
        ``str``), or a table name, built with ``build_options``.
    fmt : str
        ``"markdown"``, ``"html"``, ``"html-compact"`` (a result cell shows our
        figure with a ▲ / ▼ verdict mark and the paper's figure below it) or
        ``"latex"`` (booktabs; the LaTeX needs ``\\usepackage{booktabs}``).
    **build_options
        ``records``, ``vs_paper``, ``missing_reason`` of :func:`build` when
        ``table`` is a name.

    Returns
    -------
    str
        The title, the table and a caption with the legend of the marks and
        the scale(s) of the runs.
    """
    if fmt not in _FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    if isinstance(table, str):
        table = build(table, **build_options)
    elif build_options:
        raise ValueError("build options are only accepted with a table name")
    if table.index.nlevels != 2:
        raise ValueError(
            "render expects rows indexed by (group, label), as built by dkm.tables.build"
        )
    return _WRITERS[fmt](table, _FORMATS[fmt])


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
        ``p_within_rounding`` (:func:`dkm.stats.p_value_within_rounding`: the p
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
