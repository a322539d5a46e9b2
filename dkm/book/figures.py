"""Figures drawn from records: the ones the book shows, for a reader's own runs too.

Each function takes records, or a frame made of them (:func:`dkm.protocol.results.records_to_dataframe`,
:func:`dkm.book.tables.comparisons`), and returns a :class:`matplotlib.figure.Figure`; it
computes nothing that :mod:`dkm.book.analysis` or :mod:`dkm.book.tables` does not already,
and shows nothing (call ``plt.show()`` or ``fig.savefig``).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import ticker
import pandas as pd
from matplotlib.figure import Figure

from dkm.book.analysis import STANDINGS, distinct_cells, paper_tradeoff, search_curves
from dkm.book.tables import typeset
from dkm.protocol import paper
from dkm.protocol.experiments import TRADEOFF_GRID

__all__ = ["panel_grid", "line_search_figure", "against_paper", "against_paper_by_dataset",
           "rerun_figure", "STANDING_COLOURS", "method_scores_figure", "embedding_figure",
           "cluster_shares_figure", "training_curves"]

#: The colour of a result cell by how it stands against the paper's figure
#: (:data:`dkm.book.analysis.STANDINGS`): consistent with it, above it, below it.
STANDING_COLOURS: Mapping[str, str] = {"consistent": "tab:blue", "above": "tab:green",
                                       "below": "tab:red"}
#: Markers of the datasets in :func:`against_paper`: each named dataset keeps one in every
#: figure, in the order of :func:`dkm.data.available_datasets`; other datasets take the rest.
_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")


def dataset_markers(datasets: Iterable[str]) -> dict[str, str]:
    """The marker of each dataset (an id or a reader's label, as the cells name it): the same
    for a named dataset in every figure of the book; the others in order of appearance."""
    from dkm.data import available_datasets, dataset_label

    named = {}
    for marker, name in zip(_MARKERS, available_datasets()):
        named[name] = named[dataset_label(name)] = marker
    spare = iter(m for m in _MARKERS if m not in named.values())
    return {dataset: named.get(dataset) or next(spare) for dataset in dict.fromkeys(datasets)}


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


#: Font sizes (points) of :func:`line_search_figure`: at two panels a row, a page's width shows
#: its smallest text (the ticks) at about 10 pixels.
LINE_SEARCH_FONTS: Mapping[str, float] = MappingProxyType(
    {"title": 13, "panel": 12, "label": 12, "ticks": 11, "legend": 11})


def line_search_figure(frame: pd.DataFrame, records: Iterable[Mapping[str, Any]], reference: str,
                       title: str, max_columns: int = 2) -> Figure:
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
        Panels per row (two by default: a page's width keeps the text of two legible; the
        sizes are :data:`LINE_SEARCH_FONTS`).
    """
    from dkm.book.tables import selected_tradeoffs

    fonts = LINE_SEARCH_FONTS

    summary = search_curves(frame)
    chosen = selected_tradeoffs(records).set_index("method")["selected"]
    shown = [m for m in dict.fromkeys(frame["method"]) if m in chosen.index]
    if not shown:
        raise ValueError("no method of the records has a trade-off to plot")
    fig, axes = panel_grid(len(shown), width=4.6, height=3.4, max_columns=max_columns,
                           margins=(0.8, 1.0), sharex=True, sharey=True)
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
        ax.set(xscale="log", xlim=(min(TRADEOFF_GRID) / 2, max(TRADEOFF_GRID) * 2))
        ax.set_xlabel(symbol, fontsize=fonts["label"])
        ax.set_title(f"{typeset(paper.METHOD_LABELS[method], 'latex')}: ACC against {symbol}",
                     fontsize=fonts["panel"])
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.tick_params(labelsize=fonts["ticks"])
        ax.grid(True, ls="--", color="0.85")
    for ax in axes[:, 0]:
        ax.set_ylabel("ACC (%)", fontsize=fonts["label"])
    legend: dict[str, Any] = {}
    for ax in axes.flat[:len(shown)]:
        legend.update(zip(*reversed(ax.get_legend_handles_labels())))
    fig.suptitle(title, fontsize=fonts["title"])
    fig.tight_layout(rect=(0, 0.8 / fig.get_size_inches()[1], 1, 1))  # 0.8 in: the legend
    fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=2,
               fontsize=fonts["legend"], frameon=False)
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


def _standing(cells: pd.DataFrame) -> pd.Series:
    return cells["verdict"].map(STANDINGS)


def _standing_legend(fig: Figure, extra: Mapping[str, Any] | None = None, **legend: Any) -> None:
    """A figure legend of the standings' colours, after ``extra`` (label -> handle)."""
    handles = dict(extra or {})
    for standing, colour in STANDING_COLOURS.items():
        handles[f"ours, {standing}" if standing == "consistent" else f"ours, {standing} the paper's"
                ] = plt.Line2D([], [], color=colour, marker="o", ls="", ms=5)
    fig.legend(handles.values(), handles.keys(), frameon=False, fontsize=9, **legend)


def against_paper(cells: pd.DataFrame, metrics: tuple[str, ...] = ("ACC", "NMI"),
                  label_beyond: float = 10.0) -> Figure:
    """Our result cells against the paper's: one point per model, dataset and metric.

    One panel per metric, the paper's mean on the horizontal axis and ours on the vertical,
    each with ± one standard deviation (the paper's over its runs, ours over the seeds);
    points on the diagonal agree. The colour says how ours stands against the paper's figure
    (:data:`STANDING_COLOURS`, by Welch's test as the tables mark it), the marker which
    dataset it is; a point further than ``label_beyond`` points from the diagonal is named.

    Parameters
    ----------
    cells : pandas.DataFrame
        Rows of :func:`dkm.book.tables.comparisons`; a cell several tables show is drawn
        once (:func:`dkm.book.analysis.distinct_cells`).
    metrics : tuple of str
        The metrics to draw, one panel each, in the cells' spelling (``"ACC"``).
    label_beyond : float
        Points (percent) from the diagonal beyond which a cell's model is named.
    """
    if cells.empty:
        raise ValueError("no result cell to draw")
    cells = distinct_cells(cells)
    markers = dataset_markers(cells["dataset"])
    fig, axes = panel_grid(len(metrics), width=4.2, height=4.2, max_columns=len(metrics),
                           margins=(0.0, 0.8))
    for ax, metric in zip(axes.flat, metrics):
        part = cells[cells["metric"] == metric]
        low = min(part["paper_mean"].min(), part["ours_mean"].min(), 100.0) - 5
        ax.plot([low, 100], [low, 100], color="0.6", lw=1, ls="--", zorder=0)
        for (dataset, standing), group in part.groupby([part["dataset"], _standing(part)],
                                                       sort=False):
            ax.errorbar(group["paper_mean"], group["ours_mean"], xerr=group["paper_std"],
                        yerr=group["ours_std"].fillna(0), fmt=markers[dataset], ms=5, lw=0.8,
                        capsize=1.5, color=STANDING_COLOURS[standing], alpha=0.85)
        named: list[tuple[float, float]] = []
        far = part[(part["ours_mean"] - part["paper_mean"]).abs() > label_beyond]
        for row in far.sort_values("ours_mean", ascending=False).itertuples():
            # a name one line lower for each named point close by, so that names do not overlap
            below = sum(abs(row.paper_mean - x) < 10 and abs(row.ours_mean - y) < 5
                        for x, y in named)
            named.append((row.paper_mean, row.ours_mean))
            ax.annotate(f"{typeset(row.model, 'latex')}, {row.dataset}",
                        (row.paper_mean, row.ours_mean), xytext=(4, -9 - 10 * below),
                        textcoords="offset points", fontsize=8)
        ax.set(xlim=(low, 100), ylim=(low, 100), aspect="equal", title=f"test {metric} (%)",
               xlabel="the paper's", ylabel="ours")
        ax.grid(True, ls=":", color="0.85")
    datasets_legend = {dataset: plt.Line2D([], [], color="0.3", marker=marker, ls="", ms=5)
                       for dataset, marker in markers.items()}
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    _standing_legend(fig, datasets_legend, loc="lower center", ncol=4)
    return fig


def against_paper_by_dataset(cells: pd.DataFrame, title: str | None = None) -> Figure:
    """Each dataset's models with ours and the paper's figure side by side, one panel per
    metric and dataset.

    In each panel a model's row holds our mean ± one standard deviation over the seeds (a
    dot, coloured by how it stands against the paper's figure, :data:`STANDING_COLOURS`)
    and, just above it, the paper's mean ± its standard deviation (a black diamond).

    Parameters
    ----------
    cells : pandas.DataFrame
        Rows of :func:`dkm.book.tables.comparisons`, of one table or several (a cell two
        tables show is drawn once); the models keep their order of first appearance.
    title : str, optional
        The figure's title.
    """
    if cells.empty:
        raise ValueError("no result cell to draw")
    cells = cells.drop_duplicates(["dataset", "model", "metric"])
    metrics = list(dict.fromkeys(cells["metric"]))
    datasets = list(dict.fromkeys(cells["dataset"]))
    models = list(dict.fromkeys(cells["model"]))
    rows = {model: len(models) - 1 - i for i, model in enumerate(models)}
    fig, axes = plt.subplots(len(metrics), len(datasets), squeeze=False, sharey=True,
                             figsize=(2.5 * len(datasets) + 1.2,
                                      (0.3 * len(models) + 0.9) * len(metrics) + 0.8))
    for row_axes, metric in zip(axes, metrics):
        for ax, dataset in zip(row_axes, datasets):
            part = cells[(cells["metric"] == metric) & (cells["dataset"] == dataset)]
            y = part["model"].map(rows).to_numpy(dtype=float)
            ax.errorbar(part["paper_mean"], y + 0.18, xerr=part["paper_std"], fmt="d", ms=4,
                        color="black", lw=0.8, capsize=1.5)
            for standing, colour in STANDING_COLOURS.items():
                mine = (_standing(part) == standing).to_numpy()
                ax.errorbar(part["ours_mean"][mine], y[mine] - 0.18,
                            xerr=part["ours_std"][mine].fillna(0), fmt="o", ms=4, lw=0.8,
                            capsize=1.5, color=colour)
            ax.set_title(f"{dataset}, {metric}", fontsize=10)
            ax.set_xlabel("%", fontsize=9)
            ax.tick_params(labelsize=9)
            ax.grid(axis="x", ls=":", color="0.8")
    for ax in axes[:, 0]:
        ax.set_yticks(list(rows.values()), [typeset(model, "latex") for model in rows])
        ax.set_ylim(-0.6, len(models) - 0.4)
    if title:
        fig.suptitle(title, fontsize=10)
    legend_room = 0.5 / fig.get_size_inches()[1]
    fig.tight_layout(rect=(0, legend_room, 1, 1))
    paper_handle = plt.Line2D([], [], color="black", marker="d", ls="", ms=5)
    _standing_legend(fig, {"the paper's": paper_handle}, loc="lower center", ncol=4)
    return fig


def method_scores_figure(scores: pd.DataFrame, title: str | None = None) -> Figure:
    """Each model's test scores over the seeds, one panel per metric.

    A model's row holds its mean (a dot; hollow for k-means on a method's embedding, ``"+
    KM"``) and the interval of the mean (a bar); a single seed has no bar.

    Parameters
    ----------
    scores : pandas.DataFrame
        :func:`dkm.book.analysis.method_scores`.
    title : str, optional
        The figure's title.
    """
    if scores.empty:
        raise ValueError("no score to draw")
    metrics = list(dict.fromkeys(scores["metric"]))
    models = list(dict.fromkeys(scores["model"]))
    rows = {model: len(models) - 1 - i for i, model in enumerate(models)}
    fig, axes = plt.subplots(1, len(metrics), squeeze=False, sharey=True,
                             figsize=(3.2 * len(metrics) + 1.4, 0.34 * len(models) + 1.5))
    for ax, metric in zip(axes[0], metrics):
        part = scores[scores["metric"] == metric]
        for row in part.itertuples():
            y = rows[row.model]
            on_embedding = paper.parse_model_label(row.model).kmeans_on_embedding
            if not math.isnan(row.low):
                ax.plot([row.low, row.high], [y, y], color="tab:blue", lw=1.6, alpha=0.6)
            ax.plot(row.mean, y, "o", ms=5, color="tab:blue",
                    markerfacecolor="white" if on_embedding else "tab:blue")
        lowest = min(0.0, part["mean"].min() - 5)
        ax.set(xlim=(lowest, 100), title=f"test {metric.upper()} (%)")
        ax.tick_params(labelsize=8)
        ax.grid(axis="x", ls=":", color="0.8")
    axes[0, 0].set_yticks(list(rows.values()), [typeset(model, "latex") for model in rows])
    axes[0, 0].set_ylim(-0.6, len(models) - 0.4)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def embedding_figure(points: np.ndarray, colourings: Mapping[str, np.ndarray],
                     title: str | None = None) -> Figure:
    """Points of an embedding in the plane, one panel per way of colouring them.

    Parameters
    ----------
    points : numpy.ndarray of shape (n_points, 2)
        The points' coordinates (:func:`dkm.book.analysis.plane_view`).
    colourings : mapping
        Panel title -> a class or cluster per point (the true classes, a method's clusters).
    title : str, optional
        The figure's title.
    """
    if not colourings:
        raise ValueError("no colouring of the points to draw")
    fig, axes = panel_grid(len(colourings), width=4.2, height=4.2, max_columns=2)
    for ax, (name, groups) in zip(axes.flat, colourings.items()):
        codes = pd.factorize(np.asarray(groups), sort=True)[0]
        colours = plt.get_cmap("tab10" if codes.max() < 10 else "tab20")
        ax.scatter(points[:, 0], points[:, 1], c=codes % colours.N, cmap=colours,
                   vmin=0, vmax=colours.N - 1, s=6, alpha=0.8, linewidths=0)
        ax.set_title(name, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def cluster_shares_figure(shares: pd.DataFrame, title: str | None = None) -> Figure:
    """The share of the points each cluster holds, largest first, one line per model; the
    dashed line is clusters of equal size.

    Parameters
    ----------
    shares : pandas.DataFrame
        :func:`dkm.book.analysis.cluster_shares`.
    title : str, optional
        The figure's title.
    """
    if shares.empty:
        raise ValueError("no clusters to draw")
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    ranks = shares.columns.to_numpy()
    for model, row in shares.iterrows():
        ax.plot(ranks, row.to_numpy(), "o-", ms=4, lw=1.2, label=typeset(str(model), "latex"))
    ax.axhline(100 / len(ranks), color="0.5", ls="--", lw=1, label="equal sizes")
    ax.set(xlabel="cluster, by size", ylabel="share of the points (%)", xticks=ranks,
           ylim=(0, None))
    ax.grid(True, ls=":", color="0.85")
    ax.legend(fontsize=8, frameon=False, loc="upper right")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def training_curves(histories: Mapping[str, Mapping[str, np.ndarray]], replica: int = 0,
                    title: str | None = None) -> Figure:
    """Each model's loss per epoch: its pretraining's, where it has one, then its own.

    Parameters
    ----------
    histories : mapping
        Model -> its per-epoch curves (``MethodResult.history``: ``"loss"`` and, for a
        pretrained method, ``"pretrain_loss"``, each ``(replicas, epochs)``); a model with
        neither (KM) is left out.
    replica : int
        The replica (seed) whose curves are drawn.
    title : str, optional
        The figure's title.
    """
    shown = {model: curves for model, curves in histories.items()
             if {"loss", "pretrain_loss"} & set(curves)}
    if not shown:
        raise ValueError("no loss curve to draw")
    fig, axes = panel_grid(len(shown), width=3.6, height=2.8, max_columns=3)
    for ax, (model, curves) in zip(axes.flat, shown.items()):
        before, loss = (np.asarray(curves[name], dtype=float)[replica] if name in curves
                        else np.empty(0) for name in ("pretrain_loss", "loss"))
        if before.size:
            ax.plot(np.arange(1, before.size + 1), before, color="0.5", lw=1.2,
                    label="pretraining (reconstruction)")
        if before.size and loss.size:
            ax.axvline(before.size + 0.5, color="0.7", ls=":", lw=1)
        if loss.size:
            ax.plot(np.arange(before.size + 1, before.size + loss.size + 1), loss,
                    color="tab:blue", lw=1.4, label="the method's loss")
        ax.set(xlabel="epoch", yscale="log", title=typeset(model, "latex"))
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.grid(True, ls=":", color="0.85")
    for ax in axes[:, 0]:
        ax.set_ylabel("loss")
    legend: dict[str, Any] = {}
    for ax in axes.flat[:len(shown)]:
        legend.update(zip(*reversed(ax.get_legend_handles_labels())))
    if title:
        fig.suptitle(title, fontsize=10)
    rows = axes.shape[0]
    fig.tight_layout(rect=(0, 0.1 / rows, 1, 1))
    fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=2, fontsize=8,
               frameon=False)
    return fig
