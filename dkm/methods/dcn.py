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

The DKM authors' TensorFlow re-implementation, which produced the paper's DCN
figures, had two bugs: of the per-sample update ops it built in a Python
loop it kept and ran only the last, so only the *last* sample of each batch was
reassigned and moved its centroid; and the centroids were a trainable
variable, so Adam also moved them along the gradient of the loss. This implementation is the
method as Yang et al. describe it. The authors' code also weighted the
clustering term by λ rather than λ/2 (the general form of the DKM paper's
eq. (1)), so their λ corresponds to 2λ here, and it reported the stored
assignments ``s`` after the last batch rather than a fresh nearest-centroid
pass. Each of these four differences is a switch of :class:`DCNConfig`
(:data:`AUTHORS_DCN` sets all four), so that they can be studied one at a time.
Two more switches (``update="none"``, ``pull="nearest"``) lead from DCN to Deep
k-Means with a hard assignment, one difference at a time (:data:`TOWARDS_DKM`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Sequence

import numpy as np
import tensorflow as tf
from sklearn.utils._param_validation import StrOptions

from dkm.autoencoder import PAPER_HIDDEN_SIZES, Autoencoder
from dkm.losses import reconstruction_error, squared_euclidean
from dkm.methods.common import (
    LoopConfig,
    MethodResult,
    network_result,
    run_epochs,
    scale_epochs,
)
from dkm.methods.config import RECORDED_WHEN_SET
from dkm.methods.dkm import initial_centers
from dkm.methods.estimator import (BASELINE_CONSTRAINTS, NON_NEGATIVE, POSITIVE,
                                   DeepClusteringEstimator, variant_epochs)
from dkm.methods.pretraining import PAPER_PRETRAIN_EPOCHS, Pretrained, initial_network
from dkm.training import BatchSampler

#: Initial value of the per-cluster counts in DCN's code.
DCN_INITIAL_COUNT = 100.0
#: Which samples of a batch are reassigned and move their centroid after the step.
UpdateRule = Literal["batch", "last-sample", "none"]
UPDATE_RULES: tuple[str, ...] = ("batch", "last-sample", "none")
#: Which centroid the clustering term pulls each sample towards.
PullRule = Literal["stored", "nearest"]
PULL_RULES: tuple[str, ...] = ("stored", "nearest")
#: Where the final labels come from.
LabelSource = Literal["nearest", "stored"]
LABEL_SOURCES: tuple[str, ...] = ("nearest", "stored")


def _check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")


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


class DCNObjective:
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
    update : {"batch", "last-sample", "none"}
        ``"batch"``: every sample of the batch is reassigned and moves its
        centroid (Yang et al.). ``"last-sample"``: only the batch's last
        sample does (the DKM authors' code). ``"none"``: no update after the
        step (the centroids then move only if Adam trains them).
    pull : {"stored", "nearest"}
        The centroid of each sample's clustering term: its stored assignment
        (DCN), or its nearest centroid at this step, ``min_k ‖h − r_k‖²``
        (Deep k-Means' α → ∞ limit).
    train_centroids : bool
        Whether Adam also moves the centroids along the loss's gradient (the
        DKM authors' code), on top of the running-mean updates.
    clustering_weight : float
        Weight of ``λ ‖h − r‖²`` in the loss: 0.5 (Yang et al.) or 1.0 (the DKM
        authors' code).
    """

    term_names = ("clustering", "reconstruction")
    replicated = ("centroids", "assignments", "counts", "lam")
    counters = ()

    def __init__(
        self,
        autoencoder: Autoencoder,
        centroids: np.ndarray,
        assignments: np.ndarray,
        lam: float | Sequence[float],
        initial_count: float = DCN_INITIAL_COUNT,
        update: UpdateRule = "batch",
        train_centroids: bool = False,
        clustering_weight: float = 0.5,
        pull: PullRule = "stored",
    ) -> None:
        _check_choice("update", update, UPDATE_RULES)
        _check_choice("pull", pull, PULL_RULES)
        self.pull = pull
        n_replicas, n_clusters, _ = centroids.shape
        self.autoencoder = autoencoder
        self.update = update
        self.clustering_weight = float(clustering_weight)
        self.centroids = tf.Variable(centroids.astype(np.float32), trainable=train_centroids,
                                     name="centroids")
        self.assignments = tf.Variable(assignments.astype(np.int32), trainable=False, name="s")
        self.counts = tf.Variable(
            tf.fill([n_replicas, n_clusters], float(initial_count)), trainable=False, name="counts"
        )
        self.lam = tf.constant(np.broadcast_to(np.asarray(lam, np.float32), (n_replicas,))[:, None])
        self.variables: list[tf.Variable] = [self.centroids] if train_centroids else []

    def per_sample_loss(self, x, x_hat, h, indices):
        if self.pull == "nearest":
            clustering = tf.reduce_min(squared_euclidean(h, self.centroids), axis=-1)
        else:
            assigned = tf.gather(self.assignments, indices, batch_dims=1)
            r = tf.gather(self.centroids, assigned, batch_dims=1)
            clustering = tf.reduce_sum(tf.square(h - r), axis=-1)
        rec = reconstruction_error(x, x_hat)
        weighted = self.clustering_weight * self.lam * clustering
        return rec + weighted, {"clustering": clustering, "reconstruction": rec}

    def after_step(self, x, indices) -> None:
        if self.update == "none":
            return
        if self.update == "last-sample":
            x, indices = x[:, -1:], indices[:, -1:]
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
    update : {"batch", "last-sample", "none"}
        Which samples of each batch are reassigned and move their centroid
        after the step: all (Yang et al.), the last only (the DKM authors'
        code) or none.
    pull : {"stored", "nearest"}
        The centroid each sample's clustering term pulls it towards: its
        stored assignment (DCN) or its nearest one at this step (with
        ``update="none"``, ``train_centroids`` and ``clustering_weight=1`` this
        is Deep k-Means with a hard assignment).
    train_centroids : bool
        Adam also trains the centroids (the DKM authors' code).
    clustering_weight : float
        The clustering term is ``clustering_weight · λ ‖h − r‖²``: 0.5 in Yang
        et al.'s loss, 1.0 in the DKM authors' code.
    labels : {"nearest", "stored"}
        The final labels: each point's nearest centroid after a fresh forward
        pass, or the assignments ``s`` as stored after the last batch (what the
        DKM authors' code reported).

    The last five fields are recorded with a run only when they differ from
    their defaults (:data:`dkm.methods.config.RECORDED_WHEN_SET`).
    """

    lam: float | tuple[float, ...] = 1.0
    epochs: int = 50
    pretrain_epochs: int = PAPER_PRETRAIN_EPOCHS
    kmeans_restarts: int = 10
    initial_count: float = DCN_INITIAL_COUNT
    carry_optimizer_state: bool = True
    update: UpdateRule = field(default="batch", metadata=RECORDED_WHEN_SET)
    pull: PullRule = field(default="stored", metadata=RECORDED_WHEN_SET)
    train_centroids: bool = field(default=False, metadata=RECORDED_WHEN_SET)
    clustering_weight: float = field(default=0.5, metadata=RECORDED_WHEN_SET)
    labels: LabelSource = field(default="nearest", metadata=RECORDED_WHEN_SET)

    def __post_init__(self) -> None:
        _check_choice("update", self.update, UPDATE_RULES)
        _check_choice("pull", self.pull, PULL_RULES)
        _check_choice("labels", self.labels, LABEL_SOURCES)
        if not self.clustering_weight > 0:
            raise ValueError(f"clustering_weight must be > 0, got {self.clustering_weight!r}")

    def scaled(self, factor: float) -> "DCNConfig":
        """The same variant with every epoch count multiplied by ``factor``."""
        return replace(self, epochs=scale_epochs(self.epochs, factor),
                       pretrain_epochs=scale_epochs(self.pretrain_epochs, factor))


#: The four switches as the DKM authors' DCN code had them (apply with
#: ``dataclasses.replace(config, **AUTHORS_DCN)``).
AUTHORS_DCN: dict[str, object] = {
    "update": "last-sample", "train_centroids": True, "clustering_weight": 1.0, "labels": "stored",
}

#: The variants by suffix (``"np"``: DCN^np; the method ids are in
#: :mod:`dkm.protocol.registry`): the paper's two, and the same two as the DKM authors'
#: code ran them (``"np-authors"``, ``"p-authors"``). λ is dataset-specific
#: (see :mod:`dkm.protocol.paper`), this one is the default elsewhere.
DCN_VARIANTS: dict[str, DCNConfig] = {
    "np": DCNConfig(lam=0.1, epochs=200, pretrain_epochs=0),
    "p": DCNConfig(lam=0.1, epochs=50),
}
DCN_VARIANTS.update({f"{name}-authors": replace(config, **AUTHORS_DCN)
                     for name, config in list(DCN_VARIANTS.items())})

#: From DCN^p to Deep k-Means with a hard assignment, one difference at a time:
#: each step adds its switches to the previous ones. With DKM^p's λ and epochs
#: on top, the last step trains exactly DKM^p with ``assignment="hard"``.
TOWARDS_DKM: tuple[tuple[str, dict[str, object]], ...] = (
    ("clustering term λ‖h − r‖² (not λ/2)", {"clustering_weight": 1.0}),
    ("centroids by Adam, not by running means",
     {"clustering_weight": 1.0, "train_centroids": True, "update": "none"}),
    ("each sample pulled to its nearest centroid at every step",
     {"clustering_weight": 1.0, "train_centroids": True, "update": "none", "pull": "nearest"}),
)



def random_assignments(seeds: Sequence[int], n_clusters: int, n_samples: int) -> np.ndarray:
    """A uniformly random cluster for every point, seeded per replica, ``(S, N)``."""
    return np.stack([
        np.random.default_rng([int(seed), 0xDC4]).integers(0, n_clusters, n_samples)
        for seed in seeds
    ])


def fit_dcn(
    X: np.ndarray,
    n_clusters: int,
    seeds: Sequence[int],
    config: DCNConfig = DCNConfig(),
    loop: LoopConfig = LoopConfig(),
    pretrained: Pretrained | None = None,
    embedding_dim: int | None = None,
) -> MethodResult:
    """Train DCN on ``X`` for every seed in ``seeds`` (one replica each).

    DCN^p starts from the pretrained network, with the centroids and the
    assignments of k-means++ on its embeddings. DCN^np starts as the DKM
    authors' code did: a Glorot-initialised network, centroids drawn from
    U(-1, 1) (the same draws as DKM^a's representatives for the same seed, so
    that every model without pretraining starts alike) and uniformly random
    assignments. The first epoch's pulls are then towards random centroids;
    every point is reassigned to its nearest centroid as soon as it is seen.

    Parameters
    ----------
    X : numpy.ndarray
        ``(N, d)`` float32 data.
    n_clusters : int
        Number of clusters ``K``.
    seeds : sequence of int
        One seed per replica: initialisation and minibatch order.
    config : DCNConfig
        The variant (see :data:`DCN_VARIANTS`).
    loop : LoopConfig
        Settings of the shared training loop.
    pretrained : Pretrained, optional
        The shared pretraining; computed here when needed and None.
    embedding_dim : int, optional
        Size of the embedding; the paper uses ``n_clusters``.

    Returns
    -------
    MethodResult
        Labels from a fresh forward pass after training (nearest centroid),
        or the stored assignments when ``config.labels`` is ``"stored"``.
    """
    data = tf.constant(X, tf.float32)
    architecture = loop.architecture(X.shape[1], embedding_dim or n_clusters)
    autoencoder, optimizer, history = initial_network(
        data, architecture, seeds, loop, config.pretrain_epochs, pretrained,
        config.carry_optimizer_state,
    )
    assignments, centroids = initial_centers(autoencoder, data, n_clusters, seeds,
                                             bool(config.pretrain_epochs), config.kmeans_restarts)
    if assignments is None:
        assignments = random_assignments(seeds, n_clusters, X.shape[0])

    objective = DCNObjective(autoencoder, centroids, assignments, config.lam, config.initial_count,
                             config.update, config.train_centroids, config.clustering_weight,
                             config.pull)
    trainer = loop.trainer(autoencoder, objective, data, optimizer)
    sampler = BatchSampler(X.shape[0], loop.batch_size, seeds, "finetune", loop.sampler)
    history.update(run_epochs(trainer, sampler, config.epochs, description="DCN",
                              progress=loop.progress, checkpoints=loop.checkpoints))
    result = network_result(autoencoder, data, objective.centroids.numpy(), history)
    if config.labels == "stored":
        result.labels = objective.assignments.numpy()
    return result


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
        ``"p"`` (DCN^p): pretrain, then start from k-means++ on the embedding.
        ``"np"`` (DCN^np): a random network, centroids from U(-1, 1) and
        random assignments, as in the DKM authors' code.
    lam : float, default=1.0
        Trade-off λ; the paper's values depend on the dataset (``dkm.protocol.paper``).
    epochs : int, optional
        Training epochs after pretraining; by default the paper's 50 (``"p"``)
        or 200 (``"np"``).
    pretrain_epochs : int, default=50
        Pretraining epochs of variant ``"p"``.
    kmeans_restarts : int, default=10
        k-means++ restarts for the initial centroids of variant ``"p"``.
    initial_count : float, default=100.0
        Starting value of the per-cluster counts (DCN's code).
    carry_optimizer_state : bool, default=True
        Continue pretraining's Adam moments (one Adam served both phases in
        the DKM authors' DCN code).
    update : {"batch", "last-sample", "none"}, default="batch"
        Which samples of each batch are reassigned and move their centroid
        after the step: all (Yang et al.), the last only (the DKM authors'
        code) or none.
    pull : {"stored", "nearest"}, default="stored"
        The centroid each sample's clustering term pulls it towards: its
        stored assignment (DCN) or its nearest one at this step.
    train_centroids : bool, default=False
        Adam also trains the centroids (the DKM authors' code).
    clustering_weight : float, default=0.5
        The clustering term is ``clustering_weight · λ ‖h − r‖²``: 0.5 in Yang
        et al.'s loss, 1.0 in the DKM authors' code.
    labels : {"nearest", "stored"}, default="nearest"
        Where ``labels_`` come from: each point's nearest centroid after a
        fresh forward pass, or the assignments stored after the last batch
        (the DKM authors' code). :data:`dkm.methods.dcn.AUTHORS_DCN` sets the
        authors' four switches.
    hidden_sizes : tuple of int, default=(500, 500, 2000)
        Encoder hidden layers; the decoder mirrors them.
    embedding_dim : int, optional
        Embedding size; defaults to ``n_clusters`` as in the paper.
    batch_size : int, default=256
    learning_rate : float, default=1e-3
        Adam's learning rate.
    sampler : {"permutation", "independent", "sequential"}, default="permutation"
        Minibatch order (see :class:`dkm.training.BatchSampler`).
    layout : {"stacked", "sequential"}, optional
        How :meth:`fit_seeds` runs several replicas (by device when None:
        :func:`dkm.training.default_layout`); it does not change the result.
    pretrained : Pretrained, optional
        A pretraining to start from instead of computing one (variants with
        pretraining): :func:`dkm.methods.pretraining.load_or_pretrain` for the
        seed of ``random_state`` (or the seeds of :meth:`fit_seeds`), with
        ``pretrain_epochs`` epochs and the same loop settings, as KMeans takes
        an ``init`` array. The protocol shares one between its methods.
    random_state : int, RandomState or None, default=None
        Seed; the same int gives identical results, bit for bit.
    progress : bool, default=True
        Show progress bars.
    jit_compile : bool, default=True
        Compile training epochs with XLA.
    checkpoint_dir : str or path-like, optional
        Where :meth:`fit` saves its training state, every five minutes and at
        the end of each phase (:mod:`dkm.checkpoints`). Called again after an
        interruption, on the same data with the same parameters, ``fit``
        resumes from it and ends as if it had never stopped; the files are
        removed once it has finished. Needs an int ``random_state``.

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

    _parameter_constraints: dict = {
        **BASELINE_CONSTRAINTS,
        "lam": [NON_NEGATIVE],
        "initial_count": [POSITIVE],
        "update": [StrOptions(set(UPDATE_RULES))],
        "pull": [StrOptions(set(PULL_RULES))],
        "train_centroids": ["boolean"],
        "clustering_weight": [POSITIVE],
        "labels": [StrOptions(set(LABEL_SOURCES))],
    }
    _config_class = DCNConfig
    _fit_function = staticmethod(fit_dcn)

    def __init__(
        self,
        n_clusters: int = 10,
        *,
        variant: str = "p",
        lam: float = 1.0,
        epochs: int | None = None,
        pretrain_epochs: int = 50,
        kmeans_restarts: int = 10,
        initial_count: float = DCN_INITIAL_COUNT,
        carry_optimizer_state: bool = True,
        update: str = "batch",
        pull: str = "stored",
        train_centroids: bool = False,
        clustering_weight: float = 0.5,
        labels: str = "nearest",
        hidden_sizes: tuple[int, ...] = PAPER_HIDDEN_SIZES,
        embedding_dim: int | None = None,
        batch_size: int = 256,
        learning_rate: float = 1e-3,
        sampler: str = "permutation",
        layout: str | None = None,
        pretrained: Pretrained | None = None,
        random_state=None,
        progress: bool = True,
        jit_compile: bool = True,
        checkpoint_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.variant = variant
        self.lam = lam
        self.epochs = epochs
        self.pretrain_epochs = pretrain_epochs
        self.kmeans_restarts = kmeans_restarts
        self.initial_count = initial_count
        self.carry_optimizer_state = carry_optimizer_state
        self.update = update
        self.pull = pull
        self.train_centroids = train_centroids
        self.clustering_weight = clustering_weight
        self.labels = labels
        self.hidden_sizes = hidden_sizes
        self.embedding_dim = embedding_dim
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.sampler = sampler
        self.layout = layout
        self.pretrained = pretrained
        self.random_state = random_state
        self.progress = progress
        self.jit_compile = jit_compile
        self.checkpoint_dir = checkpoint_dir

    def _variant_fields(self) -> dict[str, Any]:
        return variant_epochs(DCN_VARIANTS, self.variant, self.epochs, self.pretrain_epochs)
