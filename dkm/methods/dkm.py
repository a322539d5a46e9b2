"""Deep k-Means: DKM^a (annealing), DKM^p (pretraining) and DKM^pa (both)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, Sequence

import numpy as np
import tensorflow as tf

from dkm.annealing import Schedule, constant, paper_annealing
from dkm.autoencoder import Autoencoder
from dkm.losses import dkm_clustering_term, get_distance, reconstruction_error
from dkm.methods.common import (
    LoopConfig, MethodResult, kmeans_per_replica, nearest_center, run_epochs, scale_epochs,
)
from dkm.methods.config import RECORDED_WHEN_SET
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
