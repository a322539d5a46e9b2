"""The :class:`Dataset` container, the checks of what it holds, :func:`from_arrays`, and
:func:`feature_scale_advice`.

Every loader of :mod:`dkm.data` returns a :class:`Dataset`; its fields are
checked when it is built. :func:`from_arrays` builds one from in-memory arrays
and maps labels of any type to ``0..C-1``.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Hashable

import numpy as np
from numpy.typing import ArrayLike


@dataclasses.dataclass(frozen=True, eq=False)
class Dataset:
    """A dataset ready for clustering.

    Parameters
    ----------
    X : numpy.ndarray
        Features, float32 of shape ``(n_samples, n_features)``, all finite.
        Stored C-contiguous on a 64-byte boundary, so that training reads them
        without a copy (:func:`aligned_float32`): an array that is not so
        stored is copied once here.
    y : numpy.ndarray or None
        Integer class labels ``0..C-1`` of shape ``(n_samples,)``, or ``None``
        for unlabelled data.
    n_clusters : int
        Number of clusters to find, between 1 and ``n_samples``.
    name : str
        Short name, e.g. ``"mnist"`` or the stem of a user file.
    description : str
        One line on the content and preprocessing.
    class_names : tuple or None
        Original class of each label value: ``class_names[y[i]]`` is the class
        of sample ``i``. ``None`` when unknown or unlabelled.

    Raises
    ------
    ValueError
        When a field has the wrong type, shape or values.
    """

    X: np.ndarray
    y: np.ndarray | None
    n_clusters: int
    name: str
    description: str = ""
    class_names: tuple[Hashable, ...] | None = None

    def __post_init__(self) -> None:
        _check_features(self.X)
        object.__setattr__(self, "X", aligned_float32(self.X))
        _check_n_clusters(self.n_clusters, self.X.shape[0])
        if self.y is not None:
            _check_label_codes(self.y, self.X.shape[0], self.class_names)
        elif self.class_names is not None:
            raise ValueError("class_names is given but y is None: pass the labels too")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")

    @property
    def n_samples(self) -> int:
        """Number of samples (rows of ``X``)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of features (columns of ``X``)."""
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int | None:
        """Number of distinct labels in ``y``, or ``None`` when unlabelled."""
        return None if self.y is None else int(np.unique(self.y).size)


def _check_features(X: object) -> None:
    """Raise unless ``X`` is a non-empty, finite, 2-D float32 array."""
    if not isinstance(X, np.ndarray):
        raise ValueError(f"X must be a numpy array, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(
            f"X must be 2-D (samples x features), got shape {X.shape}; "
            "reshape it, e.g. X.reshape(len(X), -1)"
        )
    if X.dtype != np.float32:
        raise ValueError(f"X must be float32, got {X.dtype}; convert with X.astype(np.float32)")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X is empty (shape {X.shape}): need at least one sample and one feature")
    bad = ~np.isfinite(X)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise ValueError(
            f"X contains {int(bad.sum())} NaN or infinite values (missing entries, or "
            f"numbers too large for float32; the first at row {row}, column {column}, "
            "counting from 0); remove or impute them"
        )


def aligned_float32(values: np.ndarray) -> np.ndarray:
    """``values`` as a C-contiguous float32 array that starts on a 64-byte boundary.

    ``values`` itself when it is one; otherwise a copy, converted to float32 in
    the same pass. TensorFlow takes such an array as a tensor without copying
    it (:func:`dkm.training.data_tensor`); an array NumPy allocates starts only
    on a 16-byte one.
    """
    if values.dtype == np.float32 and values.flags.c_contiguous and values.ctypes.data % 64 == 0:
        return values
    nbytes = values.size * np.dtype(np.float32).itemsize
    buffer = np.empty(nbytes + 64, np.uint8)
    start = -buffer.ctypes.data % 64
    aligned = buffer[start:start + nbytes].view(np.float32).reshape(values.shape)
    aligned[...] = values
    return aligned


def _check_n_clusters(n_clusters: object, n_samples: int) -> None:
    """Raise unless ``n_clusters`` is an integer in ``[1, n_samples]``."""
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)):
        raise ValueError(f"n_clusters must be an integer, got {n_clusters!r}")
    if not 1 <= n_clusters <= n_samples:
        raise ValueError(
            f"n_clusters must be between 1 and the number of samples ({n_samples}), "
            f"got {n_clusters}"
        )


def _check_label_codes(
    y: object, n_samples: int, class_names: tuple[Hashable, ...] | None
) -> None:
    """Raise unless ``y`` holds one label in ``0..C-1`` per sample."""
    if not isinstance(y, np.ndarray) or y.ndim != 1:
        raise ValueError(f"y must be a 1-D numpy array, got {type(y).__name__} {np.shape(y)}")
    if not np.issubdtype(y.dtype, np.integer):
        raise ValueError(
            f"y must hold integer labels 0..C-1, got dtype {y.dtype}; "
            "use from_arrays() to map labels of any type to integers"
        )
    if y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0]} labels but X has {n_samples} samples")
    if y.min() < 0:
        raise ValueError(f"y must hold labels 0..C-1, found {y.min()}")
    if class_names is not None and y.max() >= len(class_names):
        raise ValueError(
            f"y has the label {y.max()} but class_names has only {len(class_names)} entries"
        )


def from_arrays(
    X: ArrayLike,
    y: ArrayLike | None = None,
    *,
    n_clusters: int | None = None,
    name: str = "data",
    description: str = "",
) -> Dataset:
    """Build a :class:`Dataset` from in-memory arrays.

    Parameters
    ----------
    X : array_like
        Numeric features of shape ``(n_samples, n_features)``; converted to
        float32.
    y : array_like, optional
        One label per sample, of any sortable type (integers, strings, ...).
        Labels are mapped to ``0..C-1`` in sorted order and the original
        values are kept in ``class_names``.
    n_clusters : int, optional
        Number of clusters. Required when ``y`` is ``None``; otherwise it
        defaults to the number of distinct labels.
    name, description : str
        Stored in the dataset.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        For non-numeric, non-finite or wrongly shaped features, missing
        labels, or a missing ``n_clusters`` on unlabelled data.
    """
    features = _as_float32(np.asarray(X))
    if y is None:
        if n_clusters is None:
            raise ValueError(
                "the data has no labels: pass n_clusters (the number of clusters to find)"
            )
        return Dataset(features, None, n_clusters, name, description)
    codes, class_names = _encode_labels(np.asarray(y))
    if n_clusters is None:
        n_clusters = len(class_names)
    return Dataset(features, codes, n_clusters, name, description, class_names)


def _as_float32(array: np.ndarray) -> np.ndarray:
    """Convert numeric features to float32; refuse strings, objects, dates."""
    if array.dtype.kind not in "biuf":
        raise ValueError(
            f"the features must be numbers, got an array of dtype {array.dtype}; "
            "remove the non-numeric columns or encode them as numbers"
        )
    return array.astype(np.float32, copy=False)


def _encode_labels(labels: np.ndarray) -> tuple[np.ndarray, tuple[Hashable, ...]]:
    """Map labels of any sortable type to ``0..C-1``; return codes and classes."""
    if labels.ndim != 1:
        raise ValueError(
            f"the labels must be 1-D, got shape {labels.shape}; flatten them with ravel()"
        )
    if labels.size == 0:
        raise ValueError("the labels are empty")
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise ValueError("the labels contain NaN or infinite values: every sample needs a label")
    if labels.dtype.kind not in "biufUSO":
        raise ValueError(
            f"labels of dtype {labels.dtype} are not supported: use integers or strings"
        )
    try:
        classes, codes = np.unique(labels, return_inverse=True)
    except TypeError as err:
        raise ValueError(f"the labels cannot be sorted (mixed types?): {err}") from err
    return codes.astype(np.int64), tuple(classes.tolist())


def _labelled(X: np.ndarray, labels: np.ndarray, name: str, description: str) -> Dataset:
    """A dataset whose clusters are its classes."""
    codes, class_names = _encode_labels(labels)
    return Dataset(X, codes, len(class_names), name, description, class_names)


def _refuse_options(target: str, options: dict[str, object]) -> None:
    """Raise if any of ``options`` was given (is not ``None``)."""
    given = [key for key, value in options.items() if value is not None]
    if given:
        raise ValueError(f"{', '.join(given)} cannot be used with {target}: leave it out")


#: How far from 1 the largest absolute feature value may be before
#: :func:`feature_scale_advice` speaks: a factor of 100 either way.
UNIT_SCALE_FACTOR = 100.0


def feature_scale_advice(data: Dataset | ArrayLike) -> str | None:
    """A line of advice where the features are far from unit scale, else None.

    The paper's data are near unit scale (pixels in [0, 1] or [-1, 1], tf-idf weights),
    and so are the networks' initialisation and learning rate: on features a hundred times
    larger or smaller (scikit-learn's wine reaches 1,680), k-means on the raw features and on
    an embedding give one partition whatever the seed, and the deep methods learn little.

    Parameters
    ----------
    data : Dataset or array-like of shape (n_samples, n_features)

    Returns
    -------
    str or None
        What the largest absolute value is and how to rescale; None where it lies within
        :data:`UNIT_SCALE_FACTOR` of 1 (or every feature is 0).
    """
    X = data.X if isinstance(data, Dataset) else np.asarray(data, dtype=np.float64)
    largest = float(np.max(np.abs(X))) if X.size else 0.0
    if largest == 0.0 or 1 / UNIT_SCALE_FACTOR <= largest <= UNIT_SCALE_FACTOR:
        return None
    name = f"{data.name}: " if isinstance(data, Dataset) else ""
    return (f"{name}the features reach {largest:.3g} in absolute value, far from the unit scale "
            "the methods expect (the paper's data lie in [-1, 1]); rescale them first, e.g. "
            "with sklearn.preprocessing.MinMaxScaler or StandardScaler, and save the file again")
