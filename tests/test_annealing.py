"""Tests of dkm.annealing: the paper's schedules, custom ones, scaling, errors."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dkm.annealing import Schedule, constant, paper_annealing


# --- the DKM^a schedule ------------------------------------------------------

@pytest.mark.parametrize("n, expected", [
    (1, 0.1), (2, 0.4232), (3, 0.7516), (4, 1.0780), (5, 1.4087),
    (10, 3.242), (20, 8.374), (40, 28.13),
])
def test_paper_values(n: int, expected: float) -> None:
    assert paper_annealing().alphas[n - 1] == pytest.approx(expected, rel=1e-3)


def test_paper_matches_recursion_written_out() -> None:
    alphas = [0.1]
    for i in range(1, 40):
        alphas.append(2 ** (1 / math.log(i + 1) ** 2) * alphas[-1])
    assert paper_annealing().alphas == pytest.approx(alphas, rel=1e-11)  # 12 digits kept


def test_paper_schedule_is_the_same_on_every_machine() -> None:
    # NumPy's log and pow may differ in the last bit between CPUs: records of two machines held
    # alpha_4 = 1.0779711601958948 and 1.077971160195895. Both round to the schedule's value,
    # and to the same float32, the precision training uses.
    for machine in (1.0779711601958948, 1.077971160195895):
        assert float(f"{machine:.12g}") == paper_annealing().alphas[3]
        assert np.float32(machine) == np.float32(paper_annealing().alphas[3])
    assert all(float(f"{a:.12g}") == a for a in paper_annealing().alphas)


def test_paper_shape_and_epochs() -> None:
    schedule = paper_annealing()
    assert len(schedule) == 40
    assert schedule.epochs_per_alpha == 5
    assert schedule.total_epochs == 200
    per_epoch = schedule.per_epoch()
    assert per_epoch.shape == (200,) and per_epoch.dtype == np.float64
    np.testing.assert_array_equal(per_epoch[:5], np.full(5, 0.1))
    np.testing.assert_array_equal(per_epoch[::5], np.array(schedule.alphas))


def test_paper_increasing_with_shrinking_ratios() -> None:
    alphas = np.array(paper_annealing().alphas)
    assert np.all(np.diff(alphas) > 0)
    assert np.all(np.diff(alphas[1:] / alphas[:-1]) < 0)


def test_paper_parameters() -> None:
    schedule = paper_annealing(n_terms=3, alpha_1=1.0, epochs_per_alpha=2)
    assert schedule.alphas == pytest.approx((1.0, 4.232, 7.516), rel=1e-3)
    assert schedule.total_epochs == 6
    assert paper_annealing(n_terms=1).alphas == (0.1,)


# --- constant and custom ------------------------------------------------------

def test_constant_default_is_dkm_p() -> None:
    schedule = constant()
    np.testing.assert_array_equal(schedule.per_epoch(), np.full(100, 1000.0))
    assert schedule.total_epochs == 100
    assert len(schedule) == 1 and list(schedule) == [1000.0]


def test_constant_parameters() -> None:
    np.testing.assert_array_equal(constant(2.5, 7).per_epoch(), np.full(7, 2.5))


def test_custom_keeps_order_and_repeats() -> None:
    schedule = Schedule(np.array([3, 1, 2]), epochs_per_alpha=2)
    assert schedule.alphas == (3.0, 1.0, 2.0)
    assert all(type(alpha) is float for alpha in schedule)
    np.testing.assert_array_equal(schedule.per_epoch(), [3, 3, 1, 1, 2, 2])
    assert schedule.total_epochs == 6 and len(schedule) == 3


def test_custom_accepts_generators_and_zero() -> None:
    schedule = Schedule(float(a) for a in range(3))
    assert schedule.alphas == (0.0, 1.0, 2.0)
    assert schedule.epochs_per_alpha == 1


def test_schedule_is_immutable_and_hashable() -> None:
    schedule = Schedule([1.0, 2.0], 3)
    assert isinstance(schedule.alphas, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        schedule.epochs_per_alpha = 1  # type: ignore[misc]
    assert schedule == Schedule([1, 2], 3)
    assert hash(schedule) == hash(Schedule([1, 2], 3))


# --- scaling ---------------------------------------------------------------------

@pytest.mark.parametrize("factor, epochs_per_alpha", [
    (1.0, 5), (0.4, 2), (0.5, 2), (0.1, 1), (0.01, 1), (2.0, 10),
])
def test_scale_paper(factor: float, epochs_per_alpha: int) -> None:
    schedule = paper_annealing()
    scaled = schedule.scale(factor)
    assert scaled.alphas == schedule.alphas
    assert scaled.epochs_per_alpha == epochs_per_alpha
    assert scaled.total_epochs == 40 * epochs_per_alpha
    assert schedule.epochs_per_alpha == 5


@pytest.mark.parametrize("factor, epochs", [(0.1, 10), (0.25, 25), (0.001, 1)])
def test_scale_constant(factor: float, epochs: int) -> None:
    scaled = constant().scale(factor)
    np.testing.assert_array_equal(scaled.per_epoch(), np.full(epochs, 1000.0))


# --- validation ------------------------------------------------------------------

@pytest.mark.parametrize("alphas, message", [
    ([], r"alphas is empty"),
    ([1.0, -0.1], r"alphas\[1\] must be a finite number >= 0, got -0.1"),
    ([np.nan], r"alphas\[0\] must be a finite number >= 0"),
    ([1.0, np.inf], r"alphas\[1\] must be a finite number >= 0"),
    (["1.0"], r"alphas\[0\] must be a finite number >= 0"),
    ([True], r"alphas\[0\] must be a finite number >= 0"),
    (1.0, r"alphas must be a 1-D sequence"),
    ("abc", r"alphas must be a 1-D sequence"),
])
def test_bad_alphas(alphas, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Schedule(alphas)
    with pytest.raises(ValueError, match=message):
        Schedule(alphas)


@pytest.mark.parametrize("epochs", [0, -1, 2.0, 1.5, True, "5", None])
def test_bad_epochs(epochs) -> None:
    with pytest.raises(ValueError, match=r"epochs_per_alpha must be a positive integer"):
        Schedule([1.0], epochs)
    with pytest.raises(ValueError, match=r"epochs_per_alpha must be a positive integer"):
        paper_annealing(epochs_per_alpha=epochs)
    with pytest.raises(ValueError, match=r"epochs must be a positive integer"):
        constant(1.0, epochs)


def test_numpy_integers_are_accepted() -> None:
    assert Schedule([1.0], np.int64(4)).epochs_per_alpha == 4
    assert constant(np.float32(2.0), np.int32(3)).total_epochs == 3


@pytest.mark.parametrize("kwargs, message", [
    ({"n_terms": 0}, r"n_terms must be a positive integer"),
    ({"alpha_1": -1.0}, r"alpha_1 must be a finite number >= 0"),
    ({"alpha_1": math.inf}, r"alpha_1 must be a finite number >= 0"),
])
def test_bad_paper_arguments(kwargs, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        paper_annealing(**kwargs)


@pytest.mark.parametrize("alpha", [-1.0, math.nan, math.inf, None])
def test_bad_constant_alpha(alpha) -> None:
    with pytest.raises(ValueError, match=r"alpha must be a finite number >= 0"):
        constant(alpha)


@pytest.mark.parametrize("factor", [0, -0.5, math.nan, math.inf, "0.5", True])
def test_bad_scale_factor(factor) -> None:
    with pytest.raises(ValueError, match=r"factor must be a finite number > 0"):
        paper_annealing().scale(factor)


def test_critical_alpha_is_a_quarter_of_the_inverse_largest_variance() -> None:
    from dkm.annealing import critical_alpha

    rng = np.random.default_rng(0)
    points = rng.normal(size=(2000, 2)) * [2.0, 1.0]
    variance = np.cov(points.T, bias=True)
    assert critical_alpha(points) == pytest.approx(1 / (4 * np.linalg.eigvalsh(variance).max()))
    assert critical_alpha(points / 10) == pytest.approx(100 * critical_alpha(points))
    assert critical_alpha(points[:, :1]) == pytest.approx(1 / (4 * points[:, 0].var()))
    with pytest.raises(ValueError, match="expected points"):
        critical_alpha(points[:1])


def test_merged_representatives_split_only_above_the_critical_alpha() -> None:
    # Two representatives at the mean of 1-D points, moved apart by ±δ: the clustering term
    # rises (merged is stable) below α_c and falls (they separate) above it.
    from dkm.annealing import critical_alpha
    from dkm.losses import dkm_clustering_term

    points = np.random.default_rng(1).normal(size=(4000, 1))
    alpha_c = critical_alpha(points)

    def clustering(alpha, delta):
        mean = points.mean()
        representatives = np.array([[[mean + delta], [mean - delta]]])
        distances = (points[None, :, None, 0] - representatives[:, None, :, 0]) ** 2
        return float(np.mean(dkm_clustering_term(distances, alpha)))

    for factor, stable in ((0.8, True), (1.2, False)):
        change = clustering(factor * alpha_c, 0.05) - clustering(factor * alpha_c, 0.0)
        assert (change > 0) == stable
