"""The validation / test split of the paper's protocol.

Models are trained on the whole dataset; the labels of a random 10 % of the
samples (the validation part) choose the hyperparameters and the other 90 %
(the test part) give the reported figures.

* :func:`validation_test_split` draws a seeded split of ``0..n-1``.
* :func:`read_indices` and :func:`read_split` read index lists from text
  files (one 0-based integer per line; LF or CRLF line endings).
* :func:`authors_split` reads the authors' lists from
  ``<data_home>/dkm_splits/<name>/{validation,test}``.

Caveat: the authors' MNIST lists index the rows of the defunct
``fetch_mldata("MNIST original")``, whose order is not the train-then-test
order of :func:`dkm.data.load`; applied to it, they still form a random
10 % / 90 % partition, but not the authors' one. The USPS and 20 Newsgroups
lists index the same rows as :func:`dkm.data.load`. The RCV1 lists index rows
of ``fetch_rcv1(subset="all")``; see :func:`authors_rcv1_rows`.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np

from dkm.data import PAPER_STATISTICS, RCV1_N_DOCUMENTS, get_data_home

__all__ = [
    "Split",
    "authors_rcv1_rows",
    "authors_split",
    "read_indices",
    "read_split",
    "validation_test_split",
]

_SPLITS_DIRECTORY = "dkm_splits"


@dataclasses.dataclass(frozen=True, eq=False)
class Split:
    """Disjoint validation and test indices of one dataset.

    Parameters
    ----------
    validation, test : numpy.ndarray
        1-D arrays of distinct, non-negative integer indices; no index may
        appear in both.

    Raises
    ------
    ValueError
        When an array is not 1-D integer, holds a negative index or a
        duplicate, or the two parts overlap.
    """

    validation: np.ndarray
    test: np.ndarray

    def __post_init__(self) -> None:
        for part in ("validation", "test"):
            _check_indices(getattr(self, part), part)
        shared = np.intersect1d(self.validation, self.test)
        if shared.size:
            raise ValueError(
                f"validation and test share indices ({shared.size}, e.g. {shared[0]}): "
                "the two parts must be disjoint"
            )

    @property
    def n_samples(self) -> int:
        """Number of indices in both parts together."""
        return int(self.validation.size + self.test.size)


def _check_indices(indices: object, part: str) -> None:
    """Raise unless ``indices`` is a 1-D array of distinct non-negative integers."""
    if not isinstance(indices, np.ndarray) or indices.ndim != 1:
        raise ValueError(f"{part} must be a 1-D numpy array, got {type(indices).__name__}")
    if not np.issubdtype(indices.dtype, np.integer):
        raise ValueError(f"{part} must hold integer indices, got dtype {indices.dtype}")
    if indices.size and indices.min() < 0:
        raise ValueError(f"{part} holds the negative index {indices.min()}")
    values, counts = np.unique(indices, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"{part} holds the index {values[counts > 1][0]} more than once")


def validation_test_split(
    n_samples: int, validation_fraction: float = 0.1, seed: int = 0
) -> Split:
    """A seeded random split of ``0..n_samples-1`` into validation and test.

    Parameters
    ----------
    n_samples : int
        Number of samples, at least 2.
    validation_fraction : float, default 0.1
        Fraction in the validation part, strictly between 0 and 1. The count
        is rounded half up and kept between 1 and ``n_samples - 1``.
    seed : int, default 0
        Seed of the random permutation; the same seed gives the same split.

    Returns
    -------
    Split
        Sorted index arrays that together cover ``0..n_samples-1`` once.

    Raises
    ------
    ValueError
        For fewer than 2 samples or a fraction outside ``(0, 1)``.
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    if not 0 < validation_fraction < 1:
        raise ValueError(
            f"validation_fraction must lie strictly between 0 and 1, got {validation_fraction}"
        )
    n_validation = int(np.floor(validation_fraction * n_samples + 0.5))
    n_validation = min(max(n_validation, 1), n_samples - 1)
    order = np.random.default_rng(seed).permutation(n_samples)
    return Split(
        validation=np.sort(order[:n_validation]),
        test=np.sort(order[n_validation:]),
    )


def read_indices(path: str | os.PathLike[str], n_samples: int | None = None) -> np.ndarray:
    """Read a list of indices: one non-negative integer per line.

    Blank lines are skipped; LF and CRLF line endings are both accepted.

    Parameters
    ----------
    path : str or path-like
        The text file.
    n_samples : int, optional
        When given, every index must be below it.

    Returns
    -------
    numpy.ndarray
        The indices, int64, in file order.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        For an empty file, a line that is not a non-negative integer, an
        index out of range, or a repeated index.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="ascii").splitlines()
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not a plain ASCII list of indices ({err})") from err
    tokens = [line.strip() for line in lines]
    for number, token in enumerate(tokens, start=1):
        if token and not token.isdigit():
            raise ValueError(
                f"{path}, line {number}: {token!r} is not a non-negative integer; "
                "expected one integer (a 0-based index) per line"
            )
    indices = np.array([int(token) for token in tokens if token], dtype=np.int64)
    if indices.size == 0:
        raise ValueError(f"{path}: the file holds no index")
    if n_samples is not None and indices.max() >= n_samples:
        raise ValueError(
            f"{path}: the index {indices.max()} is outside [0, {n_samples}), "
            f"the range of 0-based indices of {n_samples} samples"
        )
    try:
        _check_indices(indices, "the list")
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err
    return indices


def read_split(directory: str | os.PathLike[str], n_samples: int | None = None) -> Split:
    """Read the files ``validation`` and ``test`` of ``directory`` as a :class:`Split`.

    Parameters
    ----------
    directory : str or path-like
        Directory holding the two index files.
    n_samples : int, optional
        When given, every index must be below it.

    Returns
    -------
    Split
        The indices in file order.

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`read_indices`, and when the two lists overlap.
    """
    directory = Path(directory)
    validation = read_indices(directory / "validation", n_samples)
    test = read_indices(directory / "test", n_samples)
    try:
        return Split(validation=validation, test=test)
    except ValueError as err:
        raise ValueError(f"{directory}: {err}") from err


def authors_split(name: str, data_home: str | os.PathLike[str] | None = None) -> Split:
    """The authors' validation / test split of a dataset of the paper.

    Parameters
    ----------
    name : {"mnist", "usps", "20news", "rcv1"}
        The dataset.
    data_home : str or path-like, optional
        Data directory (see :func:`dkm.data.get_data_home`); the lists are read
        from its ``dkm_splits/<name>`` folder.

    Returns
    -------
    Split
        Indices into the rows of ``dkm.data.load(name)``. For ``rcv1`` they
        refer to the dataset built with ``rcv1_rows=authors_rcv1_rows()``:
        its first rows are the authors' test documents, then come the
        validation documents.

    Raises
    ------
    ValueError
        For an unknown name, or lists that are malformed or do not cover
        each of the dataset's rows exactly once.
    FileNotFoundError
        When the lists are absent.
    """
    if name not in PAPER_STATISTICS:
        raise ValueError(
            f"no authors' split for {name!r}: they exist for {', '.join(PAPER_STATISTICS)}"
        )
    if name == "rcv1":
        rcv1 = _authors_files("rcv1", data_home, RCV1_N_DOCUMENTS)
        n_test = rcv1.test.size
        return Split(
            validation=np.arange(n_test, rcv1.n_samples, dtype=np.int64),
            test=np.arange(n_test, dtype=np.int64),
        )
    n_samples = PAPER_STATISTICS[name]["samples"]
    split = _authors_files(name, data_home, n_samples)
    if split.n_samples != n_samples:
        raise ValueError(
            f"the authors' lists for {name} hold {split.n_samples} indices, expected each of "
            f"the {n_samples} rows exactly once"
        )
    return split


def authors_rcv1_rows(data_home: str | os.PathLike[str] | None = None) -> np.ndarray:
    """Rows of ``fetch_rcv1(subset="all")`` in the authors' RCV1 subset.

    The authors' test rows come first, then their validation rows, as in their
    code; pass the result as ``dkm.data.load("rcv1", rcv1_rows=...)``.

    Parameters
    ----------
    data_home : str or path-like, optional
        Data directory holding ``dkm_splits/rcv1``.

    Returns
    -------
    numpy.ndarray
        10,000 distinct row indices, int64.
    """
    split = _authors_files("rcv1", data_home, RCV1_N_DOCUMENTS)
    return np.concatenate([split.test, split.validation])


def _authors_files(name: str, data_home: str | os.PathLike[str] | None, n_samples: int) -> Split:
    """Read ``<data_home>/dkm_splits/<name>``, indices below ``n_samples``."""
    return read_split(get_data_home(data_home) / _SPLITS_DIRECTORY / name, n_samples)
