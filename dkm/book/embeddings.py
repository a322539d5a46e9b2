"""The geometry of an embedding: its size, its spread and how well it separates classes.

The paper's figure of learned representations asks how far training distorts
the embedding, and its *shrinking phenomenon* whether the clustering term is
lowered by making the embedding small. :func:`embedding_geometry` measures
both on the embeddings of the points, ``H`` (one row per point):

``mean norm``
    the mean of ``‖h(x)‖``: the size of the embedding, which a translation changes.
``spread``
    the root mean squared distance of the points to their mean (the square
    root of the embedding's total variance): what the clustering term can
    shrink, since the representatives follow the embeddings wherever they are.
``silhouette``
    with true classes ``y``, the silhouette score of those classes in the
    embedding itself: 1 for perfect separation, 0 for classes that overlap.
    A ratio of distances, it changes neither with a scaling nor with a
    translation of the embedding.

:func:`tsne_projection` draws an embedding in the plane as the paper's figure
does, with t-SNE. No TensorFlow is needed.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from sklearn.manifold import TSNE
from sklearn.metrics import silhouette_score
from threadpoolctl import threadpool_limits

__all__ = ["TSNE_SETTINGS", "embedding_geometry", "tsne_projection"]

#: The t-SNE of the book's figures (the paper names none): scikit-learn's
#: Barnes-Hut t-SNE in two dimensions, perplexity 30, started from the PCA.
TSNE_SETTINGS: dict[str, object] = {"n_components": 2, "perplexity": 30.0, "init": "pca"}


def embedding_geometry(H: ArrayLike, y: ArrayLike | None = None) -> dict[str, float]:
    """The mean norm and spread of an embedding, and the silhouette of the true classes in it.

    Parameters
    ----------
    H : array-like of shape (n_points, p)
        The embedding of each point (computed in float64).
    y : array-like of shape (n_points,), optional
        The true classes; without them there is no silhouette.

    Returns
    -------
    dict of str to float
        ``"mean norm"`` and ``"spread"`` (see the module's documentation), and
        ``"silhouette"`` when ``y`` is given.

    Raises
    ------
    ValueError
        When ``H`` is not a non-empty 2-D array, or (from scikit-learn) when
        ``y`` does not give between 2 and ``n_points - 1`` classes for its points.

    Examples
    --------
    >>> embedding_geometry([[3.0, 4.0], [-3.0, -4.0]])
    {'mean norm': 5.0, 'spread': 5.0}
    """
    H = np.asarray(H, dtype=np.float64)
    if H.ndim != 2 or H.shape[0] == 0:
        raise ValueError(f"H must be a non-empty (n_points, p) array, got shape {H.shape}")
    geometry = {
        "mean norm": float(np.linalg.norm(H, axis=1).mean()),
        "spread": float(np.sqrt(np.sum((H - H.mean(axis=0)) ** 2, axis=1).mean())),
    }
    if y is not None:
        geometry["silhouette"] = float(silhouette_score(H, np.asarray(y)))
    return geometry


def tsne_projection(H: ArrayLike, random_state: int = 0) -> np.ndarray:
    """The t-SNE projection of an embedding to the plane (:data:`TSNE_SETTINGS`).

    It runs on one OpenMP thread: Barnes-Hut t-SNE's threads slow it down
    ten-fold on a busy two-core machine, and one thread gives the same
    projection whatever the machine's core count.

    Parameters
    ----------
    H : array-like of shape (n_points, p)
        The embedding of each point.
    random_state : int, default 0
        The seed of t-SNE's optimisation.

    Returns
    -------
    numpy.ndarray of shape (n_points, 2)
        The points' coordinates in the plane.
    """
    with threadpool_limits(1, user_api="openmp"):
        return TSNE(**TSNE_SETTINGS, random_state=random_state).fit_transform(np.asarray(H))
