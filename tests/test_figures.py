"""dkm.book.figures: the layout of the book's multi-panel figures."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from dkm.book.figures import panel_grid  # noqa: E402


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
