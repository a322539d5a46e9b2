"""Schedules of the inverse temperature alpha used to train Deep k-Means.

A :class:`Schedule` is a sequence of alpha values, each held for the same
number of epochs. The paper uses two:

* DKM^a, :func:`paper_annealing`: 40 increasing values from 0.1, 5 epochs
  each (200 epochs), without pretraining;
* DKM^p, :func:`constant`: alpha = 1000 for 100 epochs after pretraining.

:class:`Schedule` holds any user-given sequence, and :meth:`Schedule.scale`
shortens a schedule for quick runs. :func:`critical_alpha` gives, for an
embedding, the α below which the clustering term keeps every representative
merged at the embedding's mean.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

__all__ = ["Schedule", "paper_annealing", "constant", "critical_alpha"]


def _check_epochs(value: int, name: str) -> int:
    """Return ``value`` as an int if it is a positive integer, else raise."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _is_real(value: object) -> bool:
    """Whether ``value`` is a finite real number (not a bool)."""
    return not isinstance(value, bool) and isinstance(value, Real) and math.isfinite(value)


def _check_alpha(value: float, name: str) -> float:
    """Return ``value`` as a float if it is a finite number >= 0, else raise."""
    if not _is_real(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Schedule:
    """An immutable sequence of alpha values, each held for some epochs.

    Parameters
    ----------
    alphas : sequence of float
        The alpha values in training order; finite, >= 0, at least one.
        Stored as a tuple of floats.
    epochs_per_alpha : int, default=1
        Number of epochs trained at each value; a positive integer.

    Raises
    ------
    ValueError
        If ``alphas`` is empty, not a 1-D sequence of numbers, or holds a
        negative, infinite or NaN value; or if ``epochs_per_alpha`` is not a
        positive integer.

    Notes
    -----
    ``len(schedule)`` and iteration are over the alpha *steps* (the entries of
    ``alphas``), not over epochs; :meth:`per_epoch` gives one alpha per epoch.
    """

    alphas: tuple[float, ...]
    epochs_per_alpha: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.alphas, (str, bytes)) or not isinstance(self.alphas, Iterable):
            raise ValueError(f"alphas must be a 1-D sequence of numbers, got {self.alphas!r}")
        alphas = tuple(_check_alpha(a, f"alphas[{i}]") for i, a in enumerate(self.alphas))
        if not alphas:
            raise ValueError("alphas is empty: a schedule needs at least one alpha value")
        object.__setattr__(self, "alphas", alphas)
        object.__setattr__(
            self, "epochs_per_alpha", _check_epochs(self.epochs_per_alpha, "epochs_per_alpha")
        )

    @property
    def total_epochs(self) -> int:
        """Number of training epochs: ``len(alphas) * epochs_per_alpha``."""
        return len(self.alphas) * self.epochs_per_alpha

    def __len__(self) -> int:
        return len(self.alphas)

    def __iter__(self) -> Iterator[float]:
        return iter(self.alphas)

    def per_epoch(self) -> np.ndarray:
        """One alpha per epoch, each value repeated ``epochs_per_alpha`` times.

        Returns
        -------
        numpy.ndarray of shape (total_epochs,)
            The alpha of every epoch, as float64.
        """
        return np.repeat(np.asarray(self.alphas, dtype=np.float64), self.epochs_per_alpha)

    def scale(self, factor: float) -> Schedule:
        """The same alpha values with fewer (or more) epochs, for quick runs.

        Every alpha value is kept; the epochs per value become
        ``max(1, round(epochs_per_alpha * factor))`` (Python's ``round``:
        nearest integer, ties to even). For a :func:`constant` schedule, which
        holds one value for all its epochs, this is
        ``max(1, round(epochs * factor))`` epochs in total.

        Parameters
        ----------
        factor : float
            Finite and > 0; below 1 shortens the schedule.

        Returns
        -------
        Schedule
            A new schedule; ``self`` is unchanged.

        Raises
        ------
        ValueError
            If ``factor`` is not a finite number > 0.
        """
        if not _is_real(factor) or factor <= 0:
            raise ValueError(f"factor must be a finite number > 0, got {factor!r}")
        epochs = max(1, round(self.epochs_per_alpha * float(factor)))
        return Schedule(self.alphas, epochs)


def _paper_multipliers(n_terms: int) -> np.ndarray:
    """The factors ``2 ** (1 / ln(i + 1) ** 2)`` for ``i = 1 .. n_terms - 1``."""
    steps = np.arange(1, n_terms, dtype=np.float64)
    return 2.0 ** (1.0 / np.log(steps + 1.0) ** 2)


def paper_annealing(
    n_terms: int = 40, alpha_1: float = 0.1, epochs_per_alpha: int = 5
) -> Schedule:
    """The annealing schedule of DKM^a.

    The paper defines ``alpha_{n+1} = 2 ** (1 / log(n) ** 2) * alpha_n`` with
    ``alpha_1 = 0.1`` and uses its first 40 terms, 5 epochs each. Taken
    literally the first step (n = 1) divides by ``log(1) ** 2 = 0``. The
    authors' code shifts the index by one: step ``i`` (``i = 1 .. 39``)
    multiplies by ``2 ** (1 / ln(i + 1) ** 2)``, so the first step uses
    ``ln 2``. That is what is implemented here, with the natural logarithm,
    giving 0.1, 0.4232, 0.7516, 1.0780, 1.4087, ..., alpha_10 = 3.242,
    alpha_20 = 8.374, alpha_40 = 28.13.

    The paper writes ``log`` without a base; the base changes the values a lot.
    With the same index shift, ``log10`` gives a first factor of
    ``2 ** (1 / log10(2) ** 2) = 2 ** 11.03``, so alpha_2 = 209.9 and
    alpha_40 = 9.7e11; ``log2`` gives a first factor of exactly 2, so
    alpha_2 = 0.2 and alpha_40 = 1.502.

    Parameters
    ----------
    n_terms : int, default=40
        Number of alpha values; a positive integer.
    alpha_1 : float, default=0.1
        First value; finite and >= 0.
    epochs_per_alpha : int, default=5
        Epochs trained at each value; a positive integer.

    Returns
    -------
    Schedule
        ``n_terms`` increasing values (constant if ``alpha_1`` is 0),
        ``n_terms * epochs_per_alpha`` epochs in all (200 by default).

    Raises
    ------
    ValueError
        If an argument is outside the ranges above.
    """
    n_terms = _check_epochs(n_terms, "n_terms")
    alpha_1 = _check_alpha(alpha_1, "alpha_1")
    factors = np.concatenate(([1.0], _paper_multipliers(n_terms)))
    return Schedule(tuple(_machine_independent(alpha_1 * np.cumprod(factors))), epochs_per_alpha)


def _machine_independent(values: np.ndarray) -> list[float]:
    """``values`` rounded to 12 significant digits.

    NumPy's vectorised ``log`` and ``pow`` may differ in the last bit from one
    CPU to another; rounded, the schedule recorded with a run (and hashed to
    identify it) is the same on every machine. Training uses α in float32,
    which 12 digits determine.
    """
    return [float(f"{value:.12g}") for value in values]


def constant(alpha: float = 1000.0, epochs: int = 100) -> Schedule:
    """A single alpha held for ``epochs`` epochs, as in DKM^p.

    The paper fine-tunes DKM^p for 100 epochs at alpha = 1000 (the authors'
    code lists 20 copies of 1000 with 5 epochs each, the same per-epoch
    values). The schedule has one step: ``len`` is 1 and
    ``epochs_per_alpha == total_epochs == epochs``.

    Parameters
    ----------
    alpha : float, default=1000.0
        The inverse temperature; finite and >= 0.
    epochs : int, default=100
        Number of epochs; a positive integer.

    Returns
    -------
    Schedule
        One alpha value held for ``epochs`` epochs.

    Raises
    ------
    ValueError
        If ``alpha`` is not finite and >= 0, or ``epochs`` is not a positive
        integer.
    """
    return Schedule((_check_alpha(alpha, "alpha"),), _check_epochs(epochs, "epochs"))


def critical_alpha(embedding: np.ndarray) -> float:
    """The α below which merged representatives are a stable minimum of the clustering term.

    With the embedding ``H`` held fixed and every representative at its mean,
    the clustering term ``(1/N) Σ_x Σ_k f(h, r_k) G_k(h, α)`` (squared Euclidean
    ``f``) has, to second order in the representatives' offsets, the curvature
    ``I − 4 α Σ``, ``Σ`` the embedding's covariance: the merged configuration is
    stable while ``α < α_c = 1 / (4 λ_max(Σ))`` (the book's chapter on annealing).

    Parameters
    ----------
    embedding : numpy.ndarray
        Points ``(N, p)``, ``N >= 2``.

    Returns
    -------
    float
        ``α_c``; it grows as the embedding shrinks (as the inverse of its variance).
    """
    embedding = np.asarray(embedding, dtype=np.float64)
    if embedding.ndim != 2 or embedding.shape[0] < 2:
        raise ValueError(f"expected points (N, p) with N >= 2, got shape {embedding.shape}")
    covariance = np.atleast_2d(np.cov(embedding.T, bias=True))
    return float(1 / (4 * np.linalg.eigvalsh(covariance).max()))
