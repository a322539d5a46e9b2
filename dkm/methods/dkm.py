"""Deep k-Means: DKM^a (annealing), DKM^p (pretraining) and DKM^pa (both)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Sequence

import numpy as np
import tensorflow as tf
from sklearn.utils._param_validation import StrOptions

from dkm.annealing import Schedule, constant, paper_annealing
from dkm.autoencoder import PAPER_HIDDEN_SIZES, Autoencoder
from dkm.losses import DISTANCES, dkm_clustering_term, get_distance, reconstruction_error
from dkm.methods.common import (
    LoopConfig, MethodResult, kmeans_per_replica, nearest_center, run_epochs, scale_epochs,
)
from dkm.methods.config import RECORDED_WHEN_SET
from dkm.methods.estimator import (NON_NEGATIVE, POSITIVE_INT, DeepClusteringEstimator,
                                   check_pretraining)
from dkm.methods.pretraining import PAPER_PRETRAIN_EPOCHS, Pretrained, initial_network
from dkm.training import BatchSampler, embed

#: The clustering term: the paper's soft assignment, or its hard limit.
Assignment = Literal["soft", "hard"]
ASSIGNMENTS: tuple[str, ...] = ("soft", "hard")


def _check_assignment(value: str) -> None:
    if value not in ASSIGNMENTS:
        raise ValueError(f"assignment must be one of {ASSIGNMENTS}; got {value!r}")


class DKMObjective:
    """``g(x, A(x)) + λ Σ_k f(h(x), r_k) G_k(h(x), α)`` with trainable representatives.

    Parameters
    ----------
    representatives : numpy.ndarray
        Initial representatives ``(S, K, p)``.
    lam : float or sequence of float
        The trade-off λ, one value or one per replica (a λ grid in one run).
    distance : {"euclidean", "cosine"}
        The clustering distance ``f``; ``g`` is always the squared Euclidean error.
    assignment : {"soft", "hard"}
        ``"soft"``: the paper's ``Σ_k f G_k(α)``. ``"hard"``: its limit
        ``α → ∞``, ``min_k f(h, r_k)``, whose gradient reaches only the nearest
        representative (α is then ignored).
    weight_decay : float
        Coefficient ``μ`` of an L2 penalty ``μ Σ_l ‖W_l‖²`` on the network's
        kernels (biases excluded), added to every sample's loss.
    autoencoder : Autoencoder, optional
        The network whose kernels the penalty reads; needed when
        ``weight_decay > 0``.

    Attributes
    ----------
    alpha : tf.Variable
        The inverse temperature α, one value per replica ``(S, 1, 1)``, set by
        :meth:`set_alpha` before each epoch (1 until then).
    """

    term_names = ("clustering", "reconstruction")
    replicated = ("representatives", "lam", "alpha")
    counters = ()

    def __init__(
        self,
        representatives: np.ndarray,
        lam: float | Sequence[float],
        distance: str = "euclidean",
        assignment: Assignment = "soft",
        weight_decay: float = 0.0,
        autoencoder: Autoencoder | None = None,
    ) -> None:
        _check_assignment(assignment)
        if weight_decay and autoencoder is None:
            raise ValueError("weight_decay > 0 needs the autoencoder whose kernels it penalises")
        n_replicas = representatives.shape[0]
        self.assignment = assignment
        self.weight_decay = float(weight_decay)
        self.autoencoder = autoencoder
        self.representatives = tf.Variable(representatives.astype(np.float32), name="representatives")
        self.lam = tf.constant(np.broadcast_to(np.asarray(lam, np.float32), (n_replicas,))[:, None])
        self.distance = get_distance(distance)
        # one α per replica, (S, 1, 1): equal across replicas unless rescaled per replica
        self.alpha = tf.Variable(np.ones((n_replicas, 1, 1), np.float32), trainable=False,
                                 name="alpha")
        self.variables = [self.representatives]

    def set_alpha(self, alpha: float | Sequence[float] | np.ndarray) -> None:
        """Set α: one value for every replica, or one per replica ``(S,)``."""
        self.alpha.assign(np.broadcast_to(np.asarray(alpha, np.float32).reshape(-1, 1, 1),
                                          self.alpha.shape))

    def per_sample_loss(self, x, x_hat, h, indices):
        rec = reconstruction_error(x, x_hat)
        distances = self.distance(h, self.representatives)
        if self.assignment == "hard":
            clustering = tf.reduce_min(distances, axis=-1)
        else:
            clustering = dkm_clustering_term(distances, self.alpha)
        loss = rec + self.lam * clustering
        if self.weight_decay:
            kernels = [w for w in self.autoencoder.params if w.shape.rank == 3]  # (S, in, out)
            penalty = tf.add_n([tf.reduce_sum(tf.square(w), axis=[1, 2]) for w in kernels])
            loss += self.weight_decay * penalty[:, None]
        return loss, {"clustering": clustering, "reconstruction": rec}

    def after_step(self, x, indices) -> None:
        return None


@dataclass(frozen=True)
class DKMConfig:
    """One Deep k-Means variant.

    Attributes
    ----------
    lam : float or tuple of float
        Trade-off λ between reconstruction and clustering (per replica allowed).
    schedule : Schedule
        The α of every fine-tuning epoch.
    pretrain_epochs : int
        0 for no pretraining: representatives then start from U(-1, 1);
        otherwise they start from k-means++ on the pretrained embeddings.
    distance : {"euclidean", "cosine"}
        The clustering distance ``f``.
    kmeans_restarts : int
        Restarts of the k-means++ initialisation after pretraining.
    carry_optimizer_state : bool
        Continue pretraining's Adam moments in fine-tuning (authors' code).
    assignment : {"soft", "hard"}
        The paper's soft assignment, or its ``α → ∞`` limit ``min_k f``.
    weight_decay : float
        L2 penalty on the network's kernels during fine-tuning (0: none, as
        in the paper's runs).
    alpha_rescaling : bool
        Multiply each replica's α, before each fine-tuning epoch, by
        ``(n₀ / n)²``: ``n₀`` the mean norm of its embedding when fine-tuning
        starts, ``n`` the one after the previous epoch. The squared distances
        shrink as ``n²`` with the embedding, so the product of α and them, and
        hence the hardness of the soft assignment, stays as it was at the start.
        Not in the paper; needs the soft assignment.

    The last three fields are recorded with a run only when they differ from
    their defaults (:data:`dkm.methods.config.RECORDED_WHEN_SET`).
    """

    lam: float | tuple[float, ...] = 1.0
    schedule: Schedule = field(default_factory=lambda: constant(1000.0, 100))
    pretrain_epochs: int = PAPER_PRETRAIN_EPOCHS
    distance: str = "euclidean"
    kmeans_restarts: int = 10
    carry_optimizer_state: bool = True
    assignment: Assignment = field(default="soft", metadata=RECORDED_WHEN_SET)
    weight_decay: float = field(default=0.0, metadata=RECORDED_WHEN_SET)
    alpha_rescaling: bool = field(default=False, metadata=RECORDED_WHEN_SET)

    def __post_init__(self) -> None:
        _check_assignment(self.assignment)
        if not self.weight_decay >= 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay!r}")
        if self.alpha_rescaling and self.assignment == "hard":
            raise ValueError("alpha_rescaling rescales the soft assignment's α, which the hard "
                             "assignment ignores: use assignment='soft' or drop alpha_rescaling")

    def scaled(self, factor: float) -> "DKMConfig":
        """The same variant with every epoch count multiplied by ``factor``."""
        return replace(self, schedule=self.schedule.scale(factor),
                       pretrain_epochs=scale_epochs(self.pretrain_epochs, factor))


#: The paper's variants by suffix (``"a"``: DKM^a; the method ids are in
#: :mod:`dkm.protocol.registry`); λ is dataset-specific (see :mod:`dkm.protocol.paper`), this one
#: is the default elsewhere.
DKM_VARIANTS: dict[str, DKMConfig] = {
    "a": DKMConfig(lam=0.1, schedule=paper_annealing(), pretrain_epochs=0),
    "p": DKMConfig(lam=1.0, schedule=constant(1000.0, 100)),
    "pa": DKMConfig(lam=1.0, schedule=paper_annealing()),
}


def uniform_representatives(
    seeds: Sequence[int], n_clusters: int, embedding_dim: int
) -> np.ndarray:
    """Representatives drawn from U(-1, 1), seeded per replica, ``(S, K, p)``."""
    return np.stack([
        np.random.default_rng([int(seed), 0x2E95]).uniform(-1.0, 1.0, (n_clusters, embedding_dim))
        for seed in seeds
    ]).astype(np.float32)


def mean_embedding_norm(autoencoder: Autoencoder, data: tf.Tensor) -> np.ndarray:
    """Each replica's mean embedding norm ``mean_i ‖h(x_i)‖`` over ``data``, ``(S,)``."""
    return np.linalg.norm(embed(autoencoder, data), axis=-1).mean(axis=1)


def initial_centers(
    autoencoder, data: tf.Tensor, n_clusters: int, seeds: Sequence[int],
    pretrained: bool, kmeans_restarts: int,
) -> tuple[np.ndarray | None, np.ndarray]:
    """Where the centres start: k-means++ on the pretrained embedding, else U(-1, 1).

    Returns the k-means labels ``(S, N)`` (``None`` without pretraining) and
    the centres ``(S, K, p)``.
    """
    if pretrained:
        return kmeans_per_replica(embed(autoencoder, data), n_clusters, seeds, kmeans_restarts)
    return None, uniform_representatives(seeds, n_clusters, autoencoder.architecture.embedding_dim)


def fit_dkm(
    X: np.ndarray,
    n_clusters: int,
    seeds: Sequence[int],
    config: DKMConfig = DKMConfig(),
    loop: LoopConfig = LoopConfig(),
    pretrained: Pretrained | None = None,
    embedding_dim: int | None = None,
) -> MethodResult:
    """Train Deep k-Means on ``X`` for every seed in ``seeds`` (one replica each).

    Parameters
    ----------
    X : numpy.ndarray
        ``(N, d)`` float32 data, validated by the caller.
    n_clusters : int
        Number of clusters ``K``.
    seeds : sequence of int
        One seed per replica: network initialisation, representatives and
        minibatch order.
    config : DKMConfig
        The variant (see :data:`DKM_VARIANTS`).
    loop : LoopConfig
        Settings of the shared training loop.
    pretrained : Pretrained, optional
        A pretraining to start from (shared between methods); computed here
        when ``config.pretrain_epochs > 0`` and none is given.
    embedding_dim : int, optional
        Size of the embedding; the paper uses ``n_clusters``.

    Returns
    -------
    MethodResult
        Labels from a fresh forward pass after training (``argmin_k f(h, r_k)``).
    """
    data = tf.constant(X, tf.float32)
    architecture = loop.architecture(X.shape[1], embedding_dim or n_clusters)
    autoencoder, optimizer, history = initial_network(
        data, architecture, seeds, loop, config.pretrain_epochs, pretrained,
        config.carry_optimizer_state,
    )
    _, representatives = initial_centers(autoencoder, data, n_clusters, seeds,
                                         bool(config.pretrain_epochs), config.kmeans_restarts)

    objective = DKMObjective(representatives, config.lam, config.distance, config.assignment,
                             config.weight_decay, autoencoder)
    trainer = loop.trainer(autoencoder, objective, data, optimizer)
    sampler = BatchSampler(X.shape[0], loop.batch_size, seeds, "finetune", loop.sampler)
    alphas = config.schedule.per_epoch()
    start_norm = mean_embedding_norm(autoencoder, data) if config.alpha_rescaling else None

    def set_alpha(epoch: int) -> dict[str, np.ndarray]:
        factor = (start_norm / mean_embedding_norm(autoencoder, data)) ** 2 if (
            config.alpha_rescaling and epoch) else 1.0
        alpha = np.empty(len(seeds))  # each replica's α this epoch
        alpha[:] = alphas[epoch] * factor
        objective.set_alpha(alpha)
        return {"alpha": alpha}

    history.update(run_epochs(trainer, sampler, len(alphas), before_epoch=set_alpha,
                              description="deep k-means", progress=loop.progress,
                              checkpoints=loop.checkpoints))

    embeddings = embed(autoencoder, data)
    centers = objective.representatives.numpy()
    return MethodResult(
        labels=nearest_center(embeddings, centers, objective.distance),
        embeddings=embeddings,
        centers=centers,
        history=history,
        weights=autoencoder.get_weights(),
    )


class DeepKMeans(DeepClusteringEstimator):
    """Deep k-Means (Moradi Fard, Thonet and Gaussier, 2018).

    Jointly learns an autoencoder and k-Means representatives in its
    embedding space by minimising ``g(x, A(x)) + λ Σ_k f(h(x), r_k) G_k``
    where ``G_k`` is a softmax of inverse temperature α.

    Parameters
    ----------
    n_clusters : int, default=10
        Number of clusters ``K`` (>= 1); also the embedding size unless
        ``embedding_dim`` is given.
    variant : {"p", "a", "pa"}, default="p"
        ``"p"`` (DKM^p): pretrain the autoencoder, initialise the
        representatives by k-means++, then fine-tune at a constant α.
        ``"a"`` (DKM^a): no pretraining, representatives from U(-1, 1), the
        paper's 40-step annealing of α (5 epochs each).
        ``"pa"`` (DKM^pa): pretraining followed by the annealing.
    lam : float, default=1.0
        Trade-off λ between reconstruction and clustering. The paper's
        validation-optimal values depend on the dataset (see ``dkm.protocol.paper``).
    distance : {"euclidean", "cosine"}, default="euclidean"
        Clustering distance ``f`` (squared Euclidean or cosine distance).
    alpha : float, default=1000.0
        The constant inverse temperature of variant ``"p"``.
    finetune_epochs : int, default=100
        Fine-tuning epochs of variant ``"p"``.
    schedule : Schedule or sequence of float, optional
        Overrides the variant's α schedule (a sequence means one epoch per α).
    pretrain_epochs : int, default=50
        Pretraining epochs of variants ``"p"`` and ``"pa"``.
    kmeans_restarts : int, default=10
        k-means++ restarts for the representatives after pretraining.
    carry_optimizer_state : bool, default=True
        Continue pretraining's Adam moments in fine-tuning (the authors' code).
    assignment : {"soft", "hard"}, default="soft"
        The paper's soft assignment, or its ``α → ∞`` limit ``min_k f``.
    weight_decay : float, default=0.0
        L2 penalty on the network's kernels during fine-tuning.
    alpha_rescaling : bool, default=False
        Rescale α before each fine-tuning epoch by ``(n₀ / n)²``, the embedding's
        mean norm at the start over the current one, so that the assignment stays
        as hard as it started while the embedding shrinks (not in the paper; soft
        assignment only).
    hidden_sizes : tuple of int, default=(500, 500, 2000)
        Encoder hidden layers; the decoder mirrors them.
    embedding_dim : int, optional
        Embedding size; defaults to ``n_clusters`` as in the paper.
    batch_size : int, default=256
    learning_rate : float, default=1e-3
        Adam's learning rate (β = 0.9, 0.999; ε = 1e-8).
    sampler : {"permutation", "independent", "sequential"}, default="permutation"
        Minibatch order: a permutation per epoch, the authors' independent
        draws of each batch, or the data's stored order as in IDEC's Keras
        code (see :class:`dkm.training.BatchSampler`).
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
        Seed of the initialisation and the minibatch order. The same int on
        the same data and machine gives identical results, bit for bit.
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
    >>> from dkm import DeepKMeans
    >>> X, y = load_digits(return_X_y=True)
    >>> model = DeepKMeans(n_clusters=10, pretrain_epochs=5, finetune_epochs=5,
    ...                    random_state=0, progress=False).fit(X / 16)
    >>> model.labels_.shape
    (1797,)
    """

    _parameter_constraints: dict = {
        **DeepClusteringEstimator._parameter_constraints,
        "variant": [StrOptions({"p", "a", "pa"})],
        "lam": [NON_NEGATIVE],
        "distance": [StrOptions(set(DISTANCES))],
        "alpha": [NON_NEGATIVE],
        "finetune_epochs": [POSITIVE_INT],
        "schedule": [Schedule, "array-like", None],
        "assignment": [StrOptions(set(ASSIGNMENTS))],
        "weight_decay": [NON_NEGATIVE],
        "alpha_rescaling": ["boolean"],
    }
    _config_class = DKMConfig
    _fit_function = staticmethod(fit_dkm)

    def __init__(
        self,
        n_clusters: int = 10,
        *,
        variant: str = "p",
        lam: float = 1.0,
        distance: str = "euclidean",
        alpha: float = 1000.0,
        finetune_epochs: int = 100,
        schedule: Schedule | Sequence[float] | None = None,
        pretrain_epochs: int = 50,
        kmeans_restarts: int = 10,
        carry_optimizer_state: bool = True,
        assignment: str = "soft",
        weight_decay: float = 0.0,
        alpha_rescaling: bool = False,
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
        self.distance = distance
        self.alpha = alpha
        self.finetune_epochs = finetune_epochs
        self.schedule = schedule
        self.pretrain_epochs = pretrain_epochs
        self.kmeans_restarts = kmeans_restarts
        self.carry_optimizer_state = carry_optimizer_state
        self.assignment = assignment
        self.weight_decay = weight_decay
        self.alpha_rescaling = alpha_rescaling
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

    @property
    def _distance_name(self) -> str:  # type: ignore[override]
        return self.distance

    def _schedule(self) -> Schedule:
        if isinstance(self.schedule, Schedule):
            return self.schedule
        if self.schedule is not None:
            return Schedule(self.schedule)
        if self.variant == "p":
            return constant(self.alpha, self.finetune_epochs)
        return paper_annealing()

    def _variant_fields(self) -> dict[str, Any]:
        return {"schedule": self._schedule(),
                "pretrain_epochs": check_pretraining(self.variant, self.pretrain_epochs)}
