"""What every method shares: its configuration of the loop and its result."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import tensorflow as tf
from sklearn.cluster import KMeans

from sklearn.utils._param_validation import StrOptions

from dkm.autoencoder import PAPER_HIDDEN_SIZES, PRODUCTS, Architecture, Autoencoder, Products
from dkm.checkpoints import RunCheckpoints
from dkm.methods.parameters import POSITIVE, POSITIVE_INT, parameter
from dkm.replicas import Layout, make_trainer
from dkm.training import (
    DEFAULT_SAMPLER, SAMPLERS, Adam, Objective, SamplerKind, Trainer, float32_products, xla_pays,
)

@dataclass(frozen=True)
class LoopConfig:
    """Settings of the shared minibatch loop (the paper's values by default).

    Each setting declared with :func:`dkm.methods.parameters.parameter` is a parameter of
    every deep estimator too (:func:`dkm.methods.parameters.loop_parameters`): its entry
    here is its one declaration. ``layout`` (how seeds trained together run, by device when
    None: :func:`dkm.replicas.default_layout`) and ``checkpoints`` (where the phases save
    their state and resume from, :class:`dkm.checkpoints.RunCheckpoints`; none by default)
    are the protocol's. ``jit_compile``, ``layout``, ``progress`` and ``checkpoints`` change
    how the loop runs, not what it computes; ``precision`` changes what it computes.
    """

    batch_size: int = parameter(256, [POSITIVE_INT], "int, default=256", convert=int,
                                recorded=True)
    learning_rate: float = parameter(
        1e-3, [POSITIVE], """float, default=1e-3
        Adam's learning rate (β = 0.9, 0.999; ε = 1e-8).""", convert=float, recorded=True)
    sampler: SamplerKind = parameter(
        DEFAULT_SAMPLER, [StrOptions(set(SAMPLERS))],
        """{"permutation", "independent", "sequential"}, default="permutation"
        Minibatch order: a permutation per epoch, the authors' independent
        draws of each batch, or the data's stored order as in IDEC's Keras
        code (see :class:`dkm.training.BatchSampler`).""", recorded=True)
    hidden_sizes: tuple[int, ...] = parameter(
        PAPER_HIDDEN_SIZES, ["array-like"], """tuple of int, default=(500, 500, 2000)
        Encoder hidden layers; the decoder mirrors them.""", convert=tuple, recorded=True)
    jit_compile: bool = parameter(
        True, ["boolean"], """bool, default=True
        Compile training epochs with XLA (where it pays for the precision:
        :func:`dkm.training.xla_pays`).""", convert=bool)
    precision: Products = parameter(
        "float32", [StrOptions(set(PRODUCTS))], """{"float32", "bfloat16"}, default="float32"
        Precision of the network's matrix products, in training and in
        ``transform`` and ``predict``; weights, Adam's state and the
        clustering stay float32 (:class:`dkm.autoencoder.Autoencoder`).
        bfloat16 gives other numbers, and is faster only where the hardware
        multiplies bfloat16 natively (CPUs with ``avx512_bf16`` or AMX).""")
    layout: Layout | None = None
    progress: bool = parameter(True, ["boolean"], """bool, default=True
        Show progress bars.""", convert=bool, identity=False)
    checkpoints: RunCheckpoints | None = field(default=None, compare=False)

    def architecture(self, input_dim: int, embedding_dim: int) -> Architecture:
        return Architecture(input_dim, embedding_dim, tuple(self.hidden_sizes))

    def autoencoder(self, architecture: Architecture, seeds: Sequence[int],
                    weights: list[np.ndarray] | None = None) -> Autoencoder:
        """A network of ``architecture`` whose products run in these settings' precision."""
        return Autoencoder(architecture, seeds, weights, self.precision)

    def trainer(
        self, autoencoder: Autoencoder, objective: Objective, data: tf.Tensor, optimizer: Adam
    ) -> Trainer:
        """A :class:`dkm.training.Trainer` that runs as these settings say: of one network
        (a fit), the trainer itself; of several seeds' networks, in :attr:`layout`
        (:func:`dkm.replicas.make_trainer`)."""
        jit_compile = self.jit_compile and xla_pays(autoencoder.products)
        if autoencoder.n_replicas == 1:
            return Trainer(autoencoder, objective, data, optimizer, jit_compile)
        return make_trainer(autoencoder, objective, data, optimizer, jit_compile, self.layout)


@dataclass
class MethodResult:
    """What every method returns, one row per replica (seed).

    Attributes
    ----------
    labels : numpy.ndarray
        Cluster of every point, ``(S, N)``.
    embeddings : numpy.ndarray or None
        Final embedding of every point, ``(S, N, p)``; ``None`` for KM.
    centers : numpy.ndarray
        Cluster centres in the space where the clustering happens, ``(S, K, p)``.
    history : dict
        Per-epoch curves, each ``(S, n_epochs)``: ``"loss"``, the method's
        named terms and ``"embedding_norm"`` (mean ‖h(x)‖ over the epoch's
        minibatches); pretraining curves are prefixed with ``"pretrain_"``.
    weights : list of numpy.ndarray or None
        Final autoencoder weights (replica axis first).
    """

    labels: np.ndarray
    embeddings: np.ndarray | None
    centers: np.ndarray
    history: dict[str, np.ndarray] = field(default_factory=dict)
    weights: list[np.ndarray] | None = None


def kmeans_per_replica(
    points: np.ndarray, n_clusters: int, seeds: Sequence[int], n_init: int = 10
) -> tuple[np.ndarray, np.ndarray]:
    """k-means++ with ``n_init`` restarts on each replica's points.

    Parameters
    ----------
    points : numpy.ndarray
        ``(S, N, p)`` points, one set per replica.

    Returns
    -------
    labels, centers : numpy.ndarray
        ``(S, N)`` and ``(S, K, p)``.
    """
    labels, centers = [], []
    for replica_points, seed in zip(points, seeds):
        km = KMeans(n_clusters, init="k-means++", n_init=n_init, random_state=int(seed))
        labels.append(km.fit_predict(replica_points.astype(np.float64)))
        centers.append(km.cluster_centers_.astype(np.float32))
    return np.stack(labels), np.stack(centers)


def nearest_center(
    embeddings: np.ndarray, centers: np.ndarray, distance: Callable[[tf.Tensor, tf.Tensor], tf.Tensor]
) -> np.ndarray:
    """``argmin_k f(h, r_k)`` for ``(S, N, p)`` embeddings and ``(S, K, p)`` centres."""
    labels = []
    for start in range(0, embeddings.shape[1], 16384):
        with float32_products():
            d = distance(tf.constant(embeddings[:, start:start + 16384]), tf.constant(centers))
        labels.append(tf.argmin(d, axis=-1, output_type=tf.int32).numpy())
    return np.concatenate(labels, axis=1).astype(np.int64)


def scale_epochs(epochs: int, factor: float) -> int:
    """``epochs × factor`` rounded, at least 1; 0 (a phase that is off) stays 0."""
    return max(1, round(epochs * factor)) if epochs else 0


def kmeans_on_embedding(
    result: MethodResult, n_clusters: int, seeds: Sequence[int], n_init: int = 10
) -> np.ndarray:
    """k-means++ on a result's final embedding, ``(S, N)`` labels.

    The supplement's "k-Means-friendliness" table: how well plain k-means
    clusters the representation a deep method learned.

    Parameters
    ----------
    result : MethodResult
        A deep method's result (its ``embeddings`` must not be None).
    n_clusters : int
        Number of clusters ``K``.
    seeds : sequence of int
        One seed per replica, for k-means++.
    n_init : int
        Restarts of k-means++.
    """
    if result.embeddings is None:
        raise ValueError("this result has no embedding (KM clusters the raw data)")
    labels, _ = kmeans_per_replica(result.embeddings, n_clusters, seeds, n_init)
    return labels
