"""Clustering metrics of the paper: ACC, NMI and ARI.

All three compare a reference labelling ``y_true`` (the classes) with a
predicted labelling ``y_pred`` (the clusters) and return a fraction in
``[0, 1]`` (ARI can be slightly negative for worse-than-chance clusterings);
multiply by 100 to get the percentages of the paper's tables.

Labels
------
Labels are integers with arbitrary values: they need not be ``0..K-1`` nor
contiguous, and the two labellings need not have the same number of distinct
values. Arrays of whole-valued floats (``1.0``, ``2.0``, ...) are accepted too.
NaN, infinities, fractional floats, strings and other objects are rejected with
a ``ValueError``, so that a wrong column or a missing prediction is caught early
instead of being counted as a label of its own.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

__all__ = ["acc", "nmi", "ari", "evaluate", "AVERAGE_METHODS"]

#: Normalisations of NMI understood by :func:`nmi`.
AVERAGE_METHODS = ("geometric", "arithmetic", "min", "max")


def _check_one(labels: ArrayLike, name: str) -> np.ndarray:
    """Return ``labels`` as a 1-D array of integer-like values or raise."""
    array = np.asarray(labels)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {array.shape}")
    if array.dtype == np.bool_ or np.issubdtype(array.dtype, np.integer):
        return array
    if not np.issubdtype(array.dtype, np.floating):
        raise ValueError(f"{name} must hold integer labels, got dtype {array.dtype}")
    if np.isnan(array).any():
        raise ValueError(f"{name} contains NaN")
    bad = ~np.isfinite(array) | (array != np.round(array))
    if bad.any():
        raise ValueError(
            f"{name} must hold integer labels, found the value {array[bad][0]!r}"
        )
    return array


def _check_labels(y_true: ArrayLike, y_pred: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validate a pair of labellings: 1-D, integer-like, same non-zero length."""
    true = _check_one(y_true, "y_true")
    pred = _check_one(y_pred, "y_pred")
    if true.shape[0] != pred.shape[0]:
        raise ValueError(
            "y_true and y_pred must have the same length, "
            f"got {true.shape[0]} and {pred.shape[0]}"
        )
    if true.shape[0] == 0:
        raise ValueError("y_true and y_pred are empty: need at least one label")
    return true, pred


def _contingency(true: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Counts ``n[i, j]`` of samples in class ``i`` and cluster ``j``."""
    classes, true_idx = np.unique(true, return_inverse=True)
    clusters, pred_idx = np.unique(pred, return_inverse=True)
    flat = true_idx * clusters.size + pred_idx
    counts = np.bincount(flat, minlength=classes.size * clusters.size)
    return counts.reshape(classes.size, clusters.size)


def acc(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Clustering accuracy under the best one-to-one map of clusters to classes.

    The map is found with the Hungarian algorithm on the contingency table
    (maximising the number of matched samples). When the numbers of clusters
    and classes differ, only ``min(#clusters, #classes)`` pairs are matched;
    the samples of unmatched clusters count as errors.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Reference classes, integer labels.
    y_pred : array-like of shape (n_samples,)
        Predicted clusters, integer labels.

    Returns
    -------
    float
        Fraction of samples whose cluster is mapped to their class, in [0, 1].

    Raises
    ------
    ValueError
        If the labellings are not 1-D integer labels of the same non-zero length.
    """
    table = _contingency(*_check_labels(y_true, y_pred))
    rows, cols = linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum() / table.sum())


def nmi(y_true: ArrayLike, y_pred: ArrayLike, average_method: str = "geometric") -> float:
    """Normalised mutual information between classes and clusters.

    ``NMI = I(C; S) / mean(H(C), H(S))``, scikit-learn's
    :func:`~sklearn.metrics.normalized_mutual_info_score` behind this module's
    checks of the labels. The default, ``"geometric"``, is the paper's
    ``I / sqrt(H(C) H(S))``; scikit-learn's own default is ``"arithmetic"``.
    If both labellings consist of a single group the NMI is 1; if only one of
    them does, it is 0. Rounding errors are clipped so that the result stays
    in [0, 1].

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Reference classes, integer labels.
    y_pred : array-like of shape (n_samples,)
        Predicted clusters, integer labels.
    average_method : {"geometric", "arithmetic", "min", "max"}, default="geometric"
        Mean of the two entropies in the denominator.

    Returns
    -------
    float
        NMI in [0, 1].

    Raises
    ------
    ValueError
        If ``average_method`` is unknown, or the labellings are not 1-D
        integer labels of the same non-zero length.
    """
    if average_method not in AVERAGE_METHODS:
        raise ValueError(
            f"average_method must be one of {AVERAGE_METHODS}, got {average_method!r}"
        )
    true, pred = _check_labels(y_true, y_pred)
    score = normalized_mutual_info_score(true, pred, average_method=average_method)
    return float(np.clip(score, 0.0, 1.0))


def ari(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Adjusted Rand index (Hubert and Arabie, 1985).

    The Rand index over pairs of samples, corrected for chance: 1 for
    identical partitions (whatever the label values), about 0 for random
    ones, and negative below chance; scikit-learn's
    :func:`~sklearn.metrics.adjusted_rand_score` behind this module's checks
    of the labels. When the two partitions are identical and the index is
    undefined (a single group on both sides, all singletons on both sides, or
    a single sample) it is 1.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Reference classes, integer labels.
    y_pred : array-like of shape (n_samples,)
        Predicted clusters, integer labels.

    Returns
    -------
    float
        ARI, at most 1 (reached by identical partitions); near 0 at chance.

    Raises
    ------
    ValueError
        If the labellings are not 1-D integer labels of the same non-zero length.
    """
    return float(adjusted_rand_score(*_check_labels(y_true, y_pred)))


def evaluate(
    y_true: ArrayLike, y_pred: ArrayLike, *, average_method: str = "geometric"
) -> dict[str, float]:
    """ACC, NMI and ARI of a clustering in one call.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Reference classes, integer labels.
    y_pred : array-like of shape (n_samples,)
        Predicted clusters, integer labels.
    average_method : {"geometric", "arithmetic", "min", "max"}, default="geometric"
        Normalisation of NMI, see :func:`nmi`.

    Returns
    -------
    dict of str to float
        ``{"acc": ..., "nmi": ..., "ari": ...}``, fractions (not percent).

    Raises
    ------
    ValueError
        As :func:`acc`, :func:`nmi` and :func:`ari`.
    """
    return {
        "acc": acc(y_true, y_pred),
        "nmi": nmi(y_true, y_pred, average_method),
        "ari": ari(y_true, y_pred),
    }
