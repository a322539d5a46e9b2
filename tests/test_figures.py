"""dkm.book.figures: the layout of the book's multi-panel figures."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from dkm.book.figures import panel_grid  # noqa: E402
from dkm.book.tables import typeset  # noqa: E402


@pytest.mark.parametrize("count, shape", [(1, (1, 1)), (2, (1, 2)), (3, (2, 2)), (4, (2, 2)),
                                          (5, (3, 2))])
def test_panel_grid_puts_at_most_two_panels_a_row_and_hides_the_empty_cells(count, shape):
    fig, axes = panel_grid(count, width=5.0, height=3.5, margins=(0.5, 0.25))
    assert axes.shape == shape
    assert [ax.get_visible() for ax in axes.flat] == [True] * count + [False] * (
        shape[0] * shape[1] - count)
    assert tuple(fig.get_size_inches()) == pytest.approx(
        (5.0 * shape[1] + 0.5, 3.5 * shape[0] + 0.25))
    plt.close(fig)


def test_panel_grid_passes_its_options_to_subplots_and_refuses_an_empty_grid():
    fig, axes = panel_grid(3, width=4.0, height=3.0, max_columns=3, sharey=True)
    assert axes.shape == (1, 3)
    assert axes[0, 1].get_shared_y_axes().joined(axes[0, 0], axes[0, 1])
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one panel"):
        panel_grid(0, width=4.0, height=3.0)
    with pytest.raises(ValueError, match="max_columns=0"):
        panel_grid(2, width=4.0, height=3.0, max_columns=0)


def test_rerun_figure_draws_a_row_per_configuration_with_its_spread_and_each_rerun():
    import pandas as pd

    from dkm.book.figures import rerun_figure

    moves = pd.DataFrame({"run": ["DKM$^{p}$, USPS"] * 2 + ["AE-KM, MNIST"],
                          "difference": [0.0, -1.5, 0.3], "spread": [1.2, 1.2, 2.0],
                          "same_day": [True, False, False], "own_code": [False, True, False]})
    fig = rerun_figure(moves)
    ax = fig.axes[0]
    assert [label.get_text() for label in ax.get_yticklabels()] == ["DKM$^{p}$, USPS",
                                                                     "AE-KM, MNIST"]
    bars = [(patch.get_x(), patch.get_width()) for patch in ax.patches]
    assert bars == [(-1.2, 2.4), (-2.0, 4.0)]  # ± one standard deviation of the seeds
    dots = [c for c in ax.collections if len(c.get_offsets())]
    assert len(dots) == 4  # three reruns, one of them ringed: made with its record's own code
    plt.close(fig)


def _cells(rows):
    """Rows of dkm.book.tables.comparisons: (dataset, model, metric, ours, paper, verdict)."""
    import pandas as pd

    return pd.DataFrame([{"table": "table1", "dataset": d, "model": m, "metric": metric,
                          "ours_mean": ours, "ours_std": 1.0, "paper_mean": theirs,
                          "paper_std": 0.5, "verdict": verdict}
                         for d, m, metric, ours, theirs, verdict in rows])


CELLS = [("MNIST", "DKM^p", "ACC", 84.0, 84.0, "consistent"),
         ("MNIST", "DCN^np", "ACC", 57.0, 35.0, "better"),
         ("USPS", "DKM^p", "ACC", 70.0, 75.0, "worse"),
         ("USPS", "DKM^p", "NMI", 70.0, 70.0, "consistent"),
         ("USPS", "DKM^p", "NMI", 70.0, 70.0, "consistent"),   # the same cell in a second table
         ("USPS", "DKM^p_ee", "NMI", 70.0, 70.0, "consistent")]   # ... and under another label


def test_against_paper_draws_each_cell_once_coloured_by_its_standing_and_names_the_far_ones():
    from matplotlib.colors import to_hex

    from dkm.book.figures import STANDING_COLOURS, against_paper

    fig = against_paper(_cells(CELLS))
    acc, nmi = fig.axes[:2]
    points = [line for line in acc.get_lines() if line.get_marker() in ("o", "s")]
    assert len(points) == 3 and sum(len(line.get_xdata()) for line in points) == 3
    assert {to_hex(line.get_color()) for line in points} == {
        to_hex(STANDING_COLOURS[s]) for s in ("consistent", "above", "below")}
    assert [text.get_text() for text in acc.texts] == [f"{typeset('DCN^np', 'latex')}, MNIST"]
    assert sum(len(line.get_xdata()) for line in nmi.get_lines() if line.get_marker() == "s") == 1
    legend = [text.get_text() for text in fig.legends[0].get_texts()]
    assert legend[:2] == ["MNIST", "USPS"] and "ours, below the paper's" in legend
    plt.close(fig)


def test_against_paper_by_dataset_has_a_panel_per_metric_and_dataset_with_the_papers_figure():
    from dkm.book.figures import against_paper, against_paper_by_dataset

    fig = against_paper_by_dataset(_cells(CELLS[:-1]), title="Table 1")
    axes = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in axes] == ["MNIST, ACC", "USPS, ACC", "MNIST, NMI", "USPS, NMI"]
    mnist_acc = axes[0]
    paper = [line for line in mnist_acc.get_lines() if line.get_marker() == "d"][0]
    assert sorted(paper.get_xdata()) == [35.0, 84.0]
    assert [tick.get_text() for tick in mnist_acc.get_yticklabels()] == [
        typeset("DKM^p", "latex"), typeset("DCN^np", "latex")]
    assert fig._suptitle.get_text() == "Table 1"
    plt.close(fig)
    with pytest.raises(ValueError, match="no result cell"):
        against_paper_by_dataset(_cells(CELLS).iloc[:0])
    with pytest.raises(ValueError, match="no result cell"):
        against_paper(_cells(CELLS).iloc[:0])


def test_the_scores_figure_has_a_panel_per_metric_and_a_row_per_model():
    import pandas as pd

    from dkm.book.figures import method_scores_figure

    scores = pd.DataFrame(
        [("KM", "km", metric, 50.0, 1.0, 3, 47.0, 53.0) for metric in ("acc", "nmi")]
        + [("DKM^p + KM", "dkm-p", metric, 70.0, float("nan"), 1, float("nan"), float("nan"))
           for metric in ("acc", "nmi")],
        columns=["model", "method", "metric", "mean", "std", "n", "low", "high"])
    fig = method_scores_figure(scores, "mine")
    acc, nmi = fig.axes
    assert [ax.get_title() for ax in fig.axes] == ["test ACC (%)", "test NMI (%)"]
    assert [t.get_text() for t in acc.get_yticklabels()] == ["KM", typeset("DKM^p + KM", "latex")]
    assert len(acc.lines) == 3          # KM's interval and mean, DKM^p + KM's mean alone
    plt.close(fig)
    with pytest.raises(ValueError, match="no score"):
        method_scores_figure(scores.iloc[:0])


def test_the_embedding_the_shares_and_the_losses_figures():
    import numpy as np
    import pandas as pd

    from dkm.book.figures import cluster_shares_figure, embedding_figure, training_curves

    points = np.random.default_rng(0).normal(size=(30, 2))
    fig = embedding_figure(points, {"classes": np.arange(30) % 3, "clusters": np.zeros(30)})
    assert [ax.get_title() for ax in fig.axes] == ["classes", "clusters"]
    plt.close(fig)
    shares = pd.DataFrame([[60.0, 40.0], [50.0, 50.0]], index=["true classes", "DKM^p"],
                          columns=[1, 2])
    fig = cluster_shares_figure(shares)
    assert len(fig.axes[0].lines) == 3  # two models and the equal sizes
    plt.close(fig)
    history = {"pretrain_loss": np.array([[3.0, 2.0]]), "loss": np.array([[1.0, 0.5, 0.4]])}
    fig = training_curves({"KM": {}, "DKM^p": history, "AE-KM": {"pretrain_loss": history[
        "pretrain_loss"]}})
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == [typeset("DKM^p", "latex"), "AE-KM"]
    assert visible[0].lines[-1].get_xdata().tolist() == [3, 4, 5]   # after the pretraining
    plt.close(fig)
    with pytest.raises(ValueError, match="no loss curve"):
        training_curves({"KM": {}})


def test_a_dataset_keeps_its_marker_in_every_figure():
    from dkm.book.figures import dataset_markers

    front = dataset_markers(["MNIST", "USPS", "20NEWS"])
    results = dataset_markers(["USPS (sharp file)", "MNIST", "USPS", "20NEWS", "my-data"])
    assert {name: results[name] for name in front} == front
    assert len(set(results.values())) == len(results)  # one meaning per marker
    assert dataset_markers(["usps"]) == {"usps": front["USPS"]}  # ids as labels


def test_a_six_method_line_search_has_two_panels_a_row_and_legible_text():
    """Six panels three a row drew the text at about 6 pixels on a page: two a row, and the
    sizes of LINE_SEARCH_FONTS."""
    from dkm.book.figures import LINE_SEARCH_FONTS, line_search_figure
    from dkm.protocol import paper
    from dkm.protocol.paper import TRADEOFF_GRID
    from dkm.protocol.results import new_record, records_to_dataframe

    def scores(acc: float) -> dict[str, float]:
        return {"acc": acc, "nmi": acc - 0.05, "ari": acc - 0.1}

    methods = ["dkm-a", "dkm-p", "dcn-np", "dcn-p", "idec-np", "idec-p"]  # USPS's search
    records = [
        new_record("usps", method, seed, {paper.tradeoff_name(method): value, "scale": 1.0},
                   metrics={"validation": scores(0.5 + 0.01 * i), "test": scores(0.5)},
                   wall_time_s=1.0)
        for method in methods for seed in paper.PAPER_SEEDS[:2]
        for i, value in enumerate(TRADEOFF_GRID)
    ]
    fig = line_search_figure(records_to_dataframe(records), records, "usps", "USPS")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 6
    assert len({round(ax.get_position().x0, 2) for ax in panels}) == 2  # two columns
    for ax in panels:
        assert ax.title.get_fontsize() == LINE_SEARCH_FONTS["panel"]
        assert ax.xaxis.label.get_fontsize() == LINE_SEARCH_FONTS["label"]
        assert min(label.get_fontsize() for label in ax.get_xticklabels()) \
            >= LINE_SEARCH_FONTS["ticks"] >= 11
    assert fig.legends[0].get_texts()[0].get_fontsize() == LINE_SEARCH_FONTS["legend"]
    plt.close(fig)
