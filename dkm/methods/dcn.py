"""Deep Clustering Network (Yang, Fu, Sidiropoulos and Hong, ICML 2017): DCN^p and DCN^np.

DCN minimises ``g(x, A(x)) + (λ/2) ‖h(x) − r_{s(x)}‖²`` with a *hard*
assignment ``s(x)`` of every point, by alternating optimisation on each
minibatch:

1. a gradient step on the network with the assignments and the centroids
   fixed (the centroids are not trained by the optimiser);
2. the batch is embedded again by the updated network and every sample is
   reassigned to its nearest centroid (all of them against the centroids of
   before this step, as in Yang et al.'s ``batch_km``);
3. each centroid moves as in a sequential pass over its new members with the
   step ``1 / count_k`` (counts start at 100, as in DCN's code):
   ``r_k ← r_k − (1 / count_k)(r_k − h)``. With that step the pass is a running
   mean, so it is computed in closed form, in the graph:
   ``r_k ← (count_k r_k + Σ_{i∈k} h_i) / (count_k + m_k)``, ``count_k += m_k``.

The DKM authors' TensorFlow re-implementation (their public code,
``MaziarMF/deep-k-means``), which produced the paper's DCN figures, departs from
this in four ways: only the last sample of each batch is reassigned and moves its
centroid; Adam also trains the centroids; the clustering term is ``λ ‖h(x) − r‖²``,
without the half; and the labels it reports are the assignments stored after the
last batch, not those of a forward pass after training. Those departures, and the
steps that lead from DCN to Deep k-Means, are variants of this objective declared
beside their study, in :mod:`dkm.book.ablations`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar, Sequence

import numpy as np
import tensorflow as tf

from dkm.autoencoder import Autoencoder
from dkm.losses import reconstruction_error, squared_euclidean
from dkm.methods.common import scale_epochs
from dkm.methods.dkm import initial_centers
from dkm.methods.config import RunIdentity
from dkm.methods.estimator import (BASELINE_CONSTRAINTS, DeepClusteringEstimator,
                                   or_variants, variant_epochs)
from dkm.methods.parameters import NON_NEGATIVE
from dkm.methods.pretraining import PAPER_PRETRAIN_EPOCHS
from dkm.methods.template import ClusteringObjective

#: Initial value of the per-cluster counts in DCN's code.
DCN_INITIAL_COUNT = 100.0
def running_mean_update(
    centroids: tf.Tensor, counts: tf.Tensor, h: tf.Tensor, assignments: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor]:
    """DCN's sequential centroid updates for a batch, in closed form.

    A sequential pass over the batch with ``count_k += 1`` then
    ``r_k ← r_k − (1 / count_k)(r_k − h_i)`` for every sample ``i`` assigned to
    ``k`` is a running mean started at ``r_k`` with weight ``count_k``.

    Parameters
    ----------
    centroids : tf.Tensor
        ``(S, K, p)`` centroids before the batch.
    counts : tf.Tensor
        ``(S, K)`` float counts before the batch.
    h : tf.Tensor
        ``(S, B, p)`` embeddings of the batch.
    assignments : tf.Tensor
        ``(S, B)`` int cluster of each sample of the batch.

    Returns
    -------
    centroids, counts : tf.Tensor
        The values after the whole batch.
    """
    members = tf.one_hot(assignments, tf.shape(centroids)[1], dtype=h.dtype)  # (S, B, K)
    new_counts = counts + tf.reduce_sum(members, axis=1)
    sums = tf.matmul(members, h, transpose_a=True)  # (S, K, p)
    new_centroids = (counts[..., None] * centroids + sums) / new_counts[..., None]
    return new_centroids, new_counts


class DCNObjective(ClusteringObjective):
    """``g(x, A(x)) + (λ/2) ‖h(x) − r_{s(x)}‖²`` with DCN's non-gradient updates.

    Parameters
    ----------
    autoencoder : Autoencoder
        The network being trained (to embed the batch again after its step).
    centroids : numpy.ndarray
        Initial centroids ``(S, K, p)``.
    assignments : numpy.ndarray
        Initial cluster of every point ``(S, N)``.
    lam : float or sequence of float
        The trade-off λ, one value or one per replica.
    initial_count : float
        Starting value of every cluster's count.

    Subclasses change the method through :attr:`clustering_weight`,
    :attr:`train_centroids`, :meth:`clustering` and :meth:`updated_samples`.
    """

    term_names = ("clustering", "reconstruction")
    replicated = ("centroids", "assignments", "counts", "lam")
    counters = ()
    distance = staticmethod(squared_euclidean)
    #: Weight of ``λ ‖h − r‖²`` in the loss: Yang et al.'s ``λ/2``.
    clustering_weight: float = 0.5
    #: Whether Adam also moves the centroids along the loss's gradient.
    train_centroids: bool = False

    def __init__(
        self,
        autoencoder: Autoencoder,
        centroids: np.ndarray,
        assignments: np.ndarray,
        lam: float | Sequence[float],
        initial_count: float = DCN_INITIAL_COUNT,
    ) -> None:
        n_replicas, n_clusters, _ = centroids.shape
        self.autoencoder = autoencoder
        self.centroids = tf.Variable(centroids.astype(np.float32), trainable=self.train_centroids,
                                     name="centroids")
        self.assignments = tf.Variable(assignments.astype(np.int32), trainable=False, name="s")
        self.counts = tf.Variable(
            tf.fill([n_replicas, n_clusters], float(initial_count)), trainable=False, name="counts"
        )
        self.lam = tf.constant(np.broadcast_to(np.asarray(lam, np.float32), (n_replicas,))[:, None])
        self.variables: list[tf.Variable] = [self.centroids] if self.train_centroids else []

    @property
    def centers(self) -> tf.Variable:
        return self.centroids

    def clustering(self, h: tf.Tensor, indices: tf.Tensor) -> tf.Tensor:
        """``‖h − r_{s(x)}‖²``: each sample against the centroid of its stored assignment."""
        assigned = tf.gather(self.assignments, indices, batch_dims=1)
        r = tf.gather(self.centroids, assigned, batch_dims=1)
        return tf.reduce_sum(tf.square(h - r), axis=-1)

    def per_sample_loss(self, x, x_hat, h, indices):
        clustering = self.clustering(h, indices)
        rec = reconstruction_error(x, x_hat)
        weighted = self.clustering_weight * self.lam * clustering
        return rec + weighted, {"clustering": clustering, "reconstruction": rec}

    def updated_samples(self, x: tf.Tensor, indices: tf.Tensor
                        ) -> tuple[tf.Tensor, tf.Tensor] | None:
        """The samples reassigned after the step, and which move their centroid: the batch."""
        return x, indices

    def after_step(self, x, indices) -> None:
        samples = self.updated_samples(x, indices)
        if samples is None:
            return
        x, indices = samples
        h = self.autoencoder.encode(x)
        nearest = tf.argmin(squared_euclidean(h, self.centroids), axis=-1, output_type=tf.int32)
        replica = tf.broadcast_to(tf.range(tf.shape(indices)[0])[:, None], tf.shape(indices))
        self.assignments.scatter_nd_update(tf.stack([replica, indices], axis=-1), nearest)
        centroids, counts = running_mean_update(self.centroids, self.counts, h, nearest)
        self.centroids.assign(centroids)
        self.counts.assign(counts)


@dataclass(frozen=True)
class DCNConfig:
    """One DCN variant.

    Attributes
    ----------
    lam : float or tuple of float
        Trade-off λ of the clustering term ``(λ/2) ‖h − r‖²`` (per replica allowed).
    epochs : int
        Training epochs after pretraining (DCN^p: 50) or from scratch (DCN^np: 200).
    pretrain_epochs : int
        0 for DCN^np; otherwise the network is pretrained and the centroids
        and assignments come from k-means++ on the pretrained embeddings.
    kmeans_restarts : int
        Restarts of that k-means++.
    initial_count : float
        Starting value of the per-cluster counts (DCN's code: 100).
    carry_optimizer_state : bool
        Continue pretraining's Adam moments (one Adam instance served both
        phases in the DKM authors' DCN code).
    """

    lam: float | tuple[float, ...] = 1.0
    epochs: int = 50
    pretrain_epochs: int = PAPER_PRETRAIN_EPOCHS
    kmeans_restarts: int = 10
    initial_count: float = DCN_INITIAL_COUNT
    carry_optimizer_state: bool = True

    #: What a run's record holds of it (:func:`dkm.methods.config.identity_params`).
    IDENTITY: ClassVar[RunIdentity] = RunIdentity(
        1, ("epochs", "pretrain_epochs", "kmeans_restarts", "initial_count",
            "carry_optimizer_state"), renamed={"lam": "lambda"}, fixed={"distance": "euclidean"})
    phase = "DCN"

    @property
    def n_epochs(self) -> int:
        return self.epochs

    def scaled(self, factor: float) -> "DCNConfig":
        """The same variant with every epoch count multiplied by ``factor``."""
        return replace(self, epochs=scale_epochs(self.epochs, factor),
                       pretrain_epochs=scale_epochs(self.pretrain_epochs, factor))

    def starting_point(self, autoencoder: Autoencoder, data: tf.Tensor, n_clusters: int,
                       seeds: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The assignments ``(S, N)`` and centroids ``(S, K, p)`` training starts from.

        DCN^p: those of k-means++ on the pretrained embeddings. DCN^np, as the
        DKM authors' code: centroids drawn from U(-1, 1) (the same draws as
        DKM^a's representatives for the same seed, so that every model without
        pretraining starts alike) and uniformly random assignments; the first
        epoch's pulls are then towards random centroids, and every point is
        reassigned to its nearest centroid as soon as it is seen.
        """
        assignments, centroids = initial_centers(autoencoder, data, n_clusters, seeds,
                                                 bool(self.pretrain_epochs), self.kmeans_restarts)
        if assignments is None:
            assignments = random_assignments(seeds, n_clusters, int(data.shape[0]))
        return assignments, centroids

    def objective(self, autoencoder: Autoencoder, data: tf.Tensor, n_clusters: int,
                  seeds: Sequence[int]) -> DCNObjective:
        """The objective, started at :meth:`starting_point`."""
        assignments, centroids = self.starting_point(autoencoder, data, n_clusters, seeds)
        return DCNObjective(autoencoder, centroids, assignments, self.lam, self.initial_count)


#: The paper's variants by suffix (``"np"``: DCN^np; the method ids are in
#: :mod:`dkm.protocol.registry`). λ is dataset-specific (see :mod:`dkm.protocol.paper`), this
#: one is the default elsewhere.
DCN_VARIANTS: dict[str, DCNConfig] = {
    "np": DCNConfig(lam=0.1, epochs=200, pretrain_epochs=0),
    "p": DCNConfig(lam=0.1, epochs=50),
}


def random_assignments(seeds: Sequence[int], n_clusters: int, n_samples: int) -> np.ndarray:
    """A uniformly random cluster for every point, seeded per replica, ``(S, N)``."""
    return np.stack([
        np.random.default_rng([int(seed), 0xDC4]).integers(0, n_clusters, n_samples)
        for seed in seeds
    ])


@dataclass(kw_only=True, eq=False, repr=False)
class DCN(DeepClusteringEstimator):
    """Deep Clustering Network (Yang, Fu, Sidiropoulos and Hong, 2017).

    Alternates, on each minibatch, a gradient step on the autoencoder for
    ``g(x, A(x)) + (λ/2) ‖h(x) − r_{s(x)}‖²`` with the hard assignments ``s``
    and centroids ``r`` fixed, the reassignment of the batch to the nearest
    centroids and running-mean centroid moves (see :mod:`dkm.methods.dcn`).

    Parameters
    ----------
    n_clusters : int, default=10
        Number of clusters ``K`` (>= 1); also the embedding size unless
        ``embedding_dim`` is given.
    variant : {"p", "np"}, default="p"
        ``"p"`` (DCN^p): pretrain, then start from k-means++ on the embedding
        (10 restarts). ``"np"`` (DCN^np): a random network, centroids from
        U(-1, 1) and random assignments, as in the DKM authors' code.
    lam : float, optional
        Trade-off λ; by default the variant's (``DCN_VARIANTS[variant].lam``), the
        protocol's on a dataset the paper did not run. The paper's values depend on
        the dataset (``dkm.protocol.paper``).
    epochs : int, optional
        Training epochs after pretraining; by default the paper's 50 (``"p"``)
        or 200 (``"np"``).
    pretrain_epochs : int, default=50
        Pretraining epochs of variant ``"p"``.
    {loop_parameters}

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from dkm import DCN
    >>> X, y = load_digits(return_X_y=True)
    >>> model = DCN(n_clusters=10, lam=0.1, pretrain_epochs=5, epochs=5,
    ...             random_state=0, progress=False).fit(X / 16)
    >>> model.labels_.shape
    (1797,)
    """

    lam: float | None = None
    epochs: int | None = None

    _parameter_constraints: ClassVar[dict] = {**BASELINE_CONSTRAINTS,
                                              "lam": [NON_NEGATIVE, None]}
    _config_class = DCNConfig

    def _variant_fields(self) -> dict[str, Any]:
        return {**variant_epochs(DCN_VARIANTS, self.variant, self.epochs, self.pretrain_epochs),
                "lam": or_variants(DCN_VARIANTS, self.variant, "lam", self.lam)}
