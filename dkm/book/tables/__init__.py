"""The tables of the paper and its supplement, rebuilt from run records.

:func:`build` turns run records (:mod:`dkm.protocol.results`) into a table with the
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
``methods``    every method in the records, the paper's or not, on every dataset
``datasets``   supplement: the datasets' statistics
============== ==========================================================

:func:`line_search_table` writes a line search's choices
(:func:`dkm.book.analysis.search_summary`) as a table for a reader.

From a record to a cell
-----------------------
One path, in :mod:`dkm.book.tables.cells`: records (:mod:`dkm.protocol.results`) become a
flat frame, one row per run (:func:`~dkm.book.tables.cells.records_frame`); a cell's
selection takes its method, dataset and distance and, of a line search, the validation-optimal
trade-off (:func:`~dkm.book.tables.cells.selected_runs`, :func:`selected_tradeoff`); a
:class:`Cell` summarizes the selected runs; :func:`build` lays the cells out as the spec of
:mod:`dkm.book.tables.spec` says, and :mod:`dkm.book.tables.render` writes the table.

The DataFrame
-------------
Rows are indexed by ``(group heading, row label)`` (heading ``""`` when the
paper has none; labels as the paper writes them, ``"DKM^p"``), columns by
``(dataset, metric)`` for the result tables and by dataset for the other two.
Every cell is a :class:`Cell`: its text, its marks, its runs (in percent)
and, with ``vs_paper=True``, its :class:`~dkm.book.stats.Comparison` with the
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
of records, and the ``tradeoff`` table reports it, saying how far a search
that has not run the whole grid on each of its seeds has got. The mean and the sample
standard deviation are shown as ``75.7±1.3`` like the paper, with
``(n=3)`` added when a cell has a number of runs other than the paper's 10.
A cell without records reads "not run", or the caller's reason.

Marks
-----
Marks follow :func:`dkm.book.stats.significance_marks`. The result tables mark
bold the cells not significantly different from the best method with
pretraining and underline those not significantly different from the best
one without; the cosine and friendliness tables mark bold the cells not
significantly different from the best row. Markdown has no underline: there,
bold is ``**75.7±1.3**`` and the paper's underline is written as emphasis,
``_75.7±1.3_`` (both: ``**_75.7±1.3_**``), and the legend under the table
says so. LaTeX uses ``\\textbf`` / ``\\underline`` and HTML ``<b>`` / ``<u>``.
The paper's figure beside a cell (``vs_paper=True``) carries the paper's marks, computed
by the same rule from the paper's figures of its column
(:func:`dkm.book.stats.marks_from_figures`, :attr:`Cell.paper_marks`); the compact HTML
shows them on the paper's row.

Side by side with the paper
---------------------------
With ``vs_paper=True`` each result cell reads
``72.1±1.0 (paper 72.9±0.8, consistent)``: the reproduced figure (with its
marks), the paper's and the verdict of :func:`dkm.book.stats.compare_with_paper`
(``consistent``, ``better`` or ``worse``).
"""
from __future__ import annotations

# Three modules along the path: spec (what a table holds), cells (record -> frame ->
# selection -> cell -> table), render (for a reader); every public name is re-exported here.
from dkm.book.tables.cells import (
    PAPER_RUNS,
    RESULT_TABLES,
    SELECTED_TRADEOFF_COLUMNS,
    Cell,
    build,
    comparisons,
    disagreements,
    selected_tradeoff,
    selected_tradeoffs,
)
from dkm.book.tables.render import (
    FORMATS,
    VERDICT_MARKS,
    line_search_table,
    one_line,
    cpu_label,
    power_of_ten,
    render,
    typeset,
)
from dkm.book.tables.spec import TABLES, Mark, RowGroup, TableSpec

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
    "power_of_ten",
    "VERDICT_MARKS",
    "comparisons",
    "disagreements",
    "line_search_table",
    "one_line", "cpu_label",
]
