"""Figures drawn from records: the ones the book shows, for a reader's own runs too.

Each function takes records (or their :func:`dkm.protocol.results.records_to_dataframe`)
and returns a :class:`matplotlib.figure.Figure`; it computes nothing that
:mod:`dkm.book.analysis` or :mod:`dkm.book.tables` does not already, and shows nothing
(call ``plt.show()`` or ``fig.savefig``).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dkm.book.analysis import paper_tradeoff, search_curves
from dkm.protocol import paper
from dkm.protocol.experiments import TRADEOFF_GRID

__all__ = ["panel_grid", "line_search_figure", "rerun_figure"]


def panel_grid(count: int, *, width: float, height: float, max_columns: int = 2,
               margins: tuple[float, float] = (0.0, 0.0), **subplots: Any) -> tuple[Figure, np.ndarray]:
    """A figure of ``count`` panels, at most ``max_columns`` a row.

    A page fits two or three panels a row before their labels shrink past
    reading; the cells of the last row that no panel fills are hidden.

    Parameters
    ----------
    count : int
        Number of panels (>= 1).
    width, height : float
        Size of one panel, in inches.
    max_columns : int
        Panels per row.
    margins : tuple of float
        Inches added to the figure's width and height (room for a suptitle or
        a legend below).
    **subplots
        Passed to :func:`matplotlib.pyplot.subplots` (``sharex``, ``sharey``).

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : numpy.ndarray
        The ``(rows, columns)`` axes; ``axes.flat[:count]`` are the panels.

    Raises
    ------
    ValueError
        When ``count`` or ``max_columns`` is below 1.
    """
    if count < 1 or max_columns < 1:
        raise ValueError(f"a grid needs at least one panel and one column, got count={count}, "
                         f"max_columns={max_columns}")
    columns = min(max_columns, count)
    rows = math.ceil(count / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(width * columns + margins[0],
                                                     height * rows + margins[1]),
                             squeeze=False, **subplots)
    for ax in axes.flat[count:]:
        ax.set_visible(False)
    return fig, axes


def line_search_figure(frame: pd.DataFrame, records: Iterable[Mapping[str, Any]], reference: str,
                       title: str, max_columns: int = 3) -> Figure:
    """Validation and test ACC along the λ/γ grid, one panel per method.

    Each panel shows the mean over the seeds with a band of ± one standard
    deviation and each seed's own curve as a thin line, on a log axis; a solid
    vertical line marks the value the validation part selects
    (:func:`dkm.book.tables.selected_tradeoffs`), a dashed one the paper's value for
    ``reference``.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`dkm.protocol.results.records_to_dataframe` of the search's records.
    records : iterable of dict
        The same records.
    reference : str
        The paper's dataset whose published value is drawn.
    title : str
        The figure's title.
    max_columns : int
        Panels per row.
    """
    from dkm.book.tables import selected_tradeoffs, typeset

    summary = search_curves(frame)
    chosen = selected_tradeoffs(records).set_index("method")["selected"]
    shown = [m for m in dict.fromkeys(frame["method"]) if m in chosen.index]
    if not shown:
        raise ValueError("no method of the records has a trade-off to plot")
    fig, axes = panel_grid(len(shown), width=4.4, height=3.3, max_columns=max_columns,
                           margins=(0.8, 0.7), sharex=True, sharey=True)
    nrows = axes.shape[0]
    for ax, method in zip(axes.flat, shown):
        part = summary.loc[method]
        values = part.index.to_numpy()
        runs = frame[frame["method"] == method]
        for metric, colour, label in (("val_acc", "tab:blue", "validation (10 %)"),
                                      ("test_acc", "tab:orange", "test (90 %)")):
            mean = 100 * part[metric]["mean"].to_numpy()
            std = 100 * part[metric]["std"].fillna(0).to_numpy()
            ax.plot(values, mean, "o-", ms=4, color=colour, label=f"{label}, mean")
            ax.fill_between(values, mean - std, mean + std, color=colour, alpha=0.15, lw=0)
            for _, seed_runs in runs.sort_values("tradeoff").groupby("seed"):
                ax.plot(seed_runs["tradeoff"], 100 * seed_runs[metric], color=colour,
                        lw=0.7, alpha=0.5)
        ax.axvline(chosen[method], color="black", lw=1.3, label="chosen on validation")
        theirs = paper_tradeoff(method, reference)
        if not math.isnan(theirs):
            ax.axvline(theirs, color="tab:red", ls="--", lw=1.3,
                       label=f"paper ({paper.dataset_label(reference)})")
        symbol = paper.TRADEOFF_SYMBOLS[paper.tradeoff_name(method)]
        ax.set(xscale="log", xlabel=symbol, xlim=(min(TRADEOFF_GRID) / 2, max(TRADEOFF_GRID) * 2),
               title=f"{typeset(paper.METHOD_LABELS[method], 'latex')}: ACC against {symbol}")
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.grid(True, ls="--", color="0.85")
    for ax in axes[:, 0]:
        ax.set_ylabel("ACC (%)")
    legend: dict[str, Any] = {}
    for ax in axes.flat[:len(shown)]:
        legend.update(zip(*reversed(ax.get_legend_handles_labels())))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.1 / nrows, 1, 1))
    fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=4, fontsize=8,
               frameon=False)
    return fig


def rerun_figure(moves: pd.DataFrame) -> Figure:
    """How far each rerun of a record moved, beside its method's spread over the seeds.

    One row per configuration name; on it a dot per rerun at its test score minus its
    record's, over a grey bar of ± one standard deviation of the method's seeds. A dot is
    open where the rerun was written on its record's day, filled where later; a ring marks
    a rerun made with the record's own code.

    Parameters
    ----------
    moves : pandas.DataFrame
        :func:`dkm.book.analysis.reruns`'s table (``difference``, ``same_day``,
        ``own_code``) with two more columns: ``run``, the row's label (Matplotlib's
        mathtext allowed; the reruns of several seeds share a row), and ``spread``, the
        standard deviation of that method's scores over its seeds on that dataset, in the
        difference's units.

    Returns
    -------
    matplotlib.figure.Figure
    """
    rows = list(dict.fromkeys(moves["run"]))
    fig, ax = plt.subplots(figsize=(8.0, 0.42 * len(rows) + 1.3))
    for y, run in enumerate(rows):
        mine = moves[moves["run"] == run]
        spread = float(mine["spread"].iloc[0])
        ax.barh(y, 2 * spread, left=-spread, height=0.6, color="0.88", zorder=0)
        offsets = np.linspace(-0.18, 0.18, len(mine)) if len(mine) > 1 else np.zeros(1)
        for offset, row in zip(offsets, mine.itertuples()):
            ax.scatter(row.difference, y + offset, s=28, zorder=2, color="C0",
                       facecolors="white" if row.same_day else "C0")
            if row.own_code:
                ax.scatter(row.difference, y + offset, s=110, zorder=1, facecolors="none",
                           edgecolors="C3", linewidths=1.2)
    ax.axvline(0, color="0.4", linewidth=0.8)
    ax.set_yticks(range(len(rows)), rows)
    ax.invert_yaxis()
    ax.set_xlabel("rerun − record, test ACC (points)")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
