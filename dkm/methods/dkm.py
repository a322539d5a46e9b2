"""Deep k-Means: DKM^a (annealing), DKM^p (pretraining) and DKM^pa (both)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Sequence

import numpy as np
import tensorflow as tf
from sklearn.utils._param_validation import StrOptions

from dkm.annealing import Schedule, constant, paper_annealing
from dkm.autoencoder import Autoencoder
from dkm.losses import DISTANCES, dkm_clustering_term, get_distance, reconstruction_error
from dkm.methods.common import kmeans_per_replica, scale_epochs
from dkm.methods.config import RunIdentity
from dkm.methods.estimator import DeepClusteringEstimator, check_pretraining, or_variants
from dkm.methods.parameters import NON_NEGATIVE
from dkm.methods.pretraining import PAPER_PRETRAIN_EPOCHS
from dkm.methods.template import ClusteringObjective
from dkm.training import embed

class DKMObjective(ClusteringObjective):
    """``g(x, A(x)) + λ Σ_k f(h(x), r_k) G_k(h(x), α)`` with trainable representatives.

    Parameters
    ----------
    representatives : numpy.ndarray
        Initial representatives ``(S, K, p)``.
    lam : float or sequence of float
        The trade-off λ, one value or one per replica (a λ grid in one run).
    distance : {"euclidean", "cosine"}
        The clustering distance ``f``; ``g`` is always the squared Euclidean error.
    schedule : Schedule, optional
        The α of every epoch, set by :meth:`before_epoch`; without one, α stays
        as :meth:`set_alpha` last set it.

    Attributes
    ----------
    alpha : tf.Variable
        The inverse temperature α, one value per replica ``(S, 1, 1)`` (1 until set).
    """

    term_names = ("clustering", "reconstruction")
    replicated = ("representatives", "lam", "alpha")
    counters = ()

    def __init__(
        self,
        representatives: np.ndarray,
        lam: float | Sequence[float],
        distance: str = "euclidean",
        schedule: Schedule | None = None,
    ) -> None:
        n_replicas = representatives.shape[0]
        self.representatives = tf.Variable(representatives.astype(np.float32), name="representatives")
        self.lam = tf.constant(np.broadcast_to(np.asarray(lam, np.float32), (n_replicas,))[:, None])
        self.distance = get_distance(distance)
        self.alphas = None if schedule is None else schedule.per_epoch()
        # one α per replica, (S, 1, 1): equal across replicas unless set per replica
        self.alpha = tf.Variable(np.ones((n_replicas, 1, 1), np.float32), trainable=False,
                                 name="alpha")
        self.variables = [self.representatives]

    @property
    def centers(self) -> tf.Variable:
        return self.representatives

    def set_alpha(self, alpha: float | Sequence[float] | np.ndarray) -> None:
        """Set α: one value for every replica, or one per replica ``(S,)``."""
        self.alpha.assign(np.broadcast_to(np.asarray(alpha, np.float32).reshape(-1, 1, 1),
                                          self.alpha.shape))

    def alpha_factor(self, epoch: int) -> np.ndarray | float:
        """What multiplies the schedule's α of ``epoch`` (1: the paper's α)."""
        return 1.0

    def before_epoch(self, epoch: int) -> dict[str, np.ndarray] | None:
        """Set α to the schedule's value of ``epoch``; α joins the history."""
        if self.alphas is None:
            return None
        alpha = np.empty(int(self.alpha.shape[0]))  # each replica's α this epoch
        alpha[:] = self.alphas[epoch] * self.alpha_factor(epoch)
        self.set_alpha(alpha)
        return {"alpha": alpha}

    def clustering(self, distances: tf.Tensor) -> tf.Tensor:
        """The clustering term of each sample from its distances ``(S, B, K)``: ``Σ_k f G_k(α)``."""
        return dkm_clustering_term(distances, self.alpha)

    def per_sample_loss(self, x, x_hat, h, indices):
        rec = reconstruction_error(x, x_hat)
        clustering = self.clustering(self.distance(h, self.representatives))
        loss = rec + self.lam * clustering
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
    """

    lam: float | tuple[float, ...] = 1.0
    schedule: Schedule = field(default_factory=lambda: constant(1000.0, 100))
    pretrain_epochs: int = PAPER_PRETRAIN_EPOCHS
    distance: str = "euclidean"
    kmeans_restarts: int = 10
    carry_optimizer_state: bool = True

    #: What a run's record holds of it (:func:`dkm.methods.config.identity_params`).
    IDENTITY: ClassVar[RunIdentity] = RunIdentity(
        1, ("schedule", "pretrain_epochs", "distance", "kmeans_restarts",
            "carry_optimizer_state"), renamed={"lam": "lambda"})
    phase = "deep k-means"

    @property
    def n_epochs(self) -> int:
        return len(self.schedule.per_epoch())

    def scaled(self, factor: float) -> "DKMConfig":
        """The same variant with every epoch count multiplied by ``factor``."""
        return replace(self, schedule=self.schedule.scale(factor),
                       pretrain_epochs=scale_epochs(self.pretrain_epochs, factor))

    def objective(self, autoencoder: Autoencoder, data: tf.Tensor, n_clusters: int,
                  seeds: Sequence[int]) -> DKMObjective:
        """The objective, its representatives started by :func:`initial_centers`."""
        _, representatives = initial_centers(autoencoder, data, n_clusters, seeds,
                                             bool(self.pretrain_epochs), self.kmeans_restarts)
        return DKMObjective(representatives, self.lam, self.distance, self.schedule)


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


@dataclass(kw_only=True, eq=False, repr=False)
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
        representatives by k-means++ (10 restarts), then fine-tune for 100
        epochs at the constant α = 1000.
        ``"a"`` (DKM^a): no pretraining, representatives from U(-1, 1), the
        paper's 40-step annealing of α (5 epochs each).
        ``"pa"`` (DKM^pa): pretraining followed by the annealing.
    lam : float, optional
        Trade-off λ between reconstruction and clustering: by default the variant's,
        ``DKM_VARIANTS[variant].lam``; the paper's depend on the dataset (``dkm.protocol.paper``).
    distance : {"euclidean", "cosine"}, default="euclidean"
        Clustering distance ``f`` (squared Euclidean or cosine distance).
    schedule : Schedule or sequence of float, optional
        The α of every fine-tuning epoch (a sequence: one epoch per α), in
        place of the variant's: ``dkm.annealing.constant(500.0, 20)`` fine-tunes
        for 20 epochs at α = 500.
    pretrain_epochs : int, default=50
        Pretraining epochs of variants ``"p"`` and ``"pa"``.
    {loop_parameters}

    Notes
    -----
    A fit computes in its process's arithmetic: by default the CPU's own kernels, so the
    same ``random_state`` gives the same model on the same machine only.
    :func:`dkm.reproducibility.use_reproducible_arithmetic`, called before TensorFlow is
    imported, chooses for the whole process the arithmetic meant to give the same bits on
    any x86-64 CPU with AVX2, as ``python -m dkm run`` does unless ``--native`` is given.
    A fit itself leaves the process as it finds it: its epochs run with TensorFlow's TF32
    off, restored after each.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from dkm import DeepKMeans
    >>> from dkm.annealing import constant
    >>> X, y = load_digits(return_X_y=True)
    >>> model = DeepKMeans(n_clusters=10, pretrain_epochs=5, schedule=constant(1000.0, 5),
    ...                    random_state=0, progress=False).fit(X / 16)
    >>> model.labels_.shape
    (1797,)
    """

    lam: float | None = None
    distance: str = "euclidean"
    schedule: Schedule | Sequence[float] | None = None

    _parameter_constraints: ClassVar[dict] = {
        **DeepClusteringEstimator._parameter_constraints,
        "variant": [StrOptions(set(DKM_VARIANTS))],
        "lam": [NON_NEGATIVE, None],
        "distance": [StrOptions(set(DISTANCES))],
        "schedule": [Schedule, "array-like", None],
    }
    _config_class = DKMConfig

    @property
    def _distance_name(self) -> str:  # type: ignore[override]
        return self.distance

    def _variant_fields(self) -> dict[str, Any]:
        schedule = self.schedule
        if schedule is None:
            schedule = DKM_VARIANTS[self.variant].schedule
        elif not isinstance(schedule, Schedule):
            schedule = Schedule(schedule)
        return {"schedule": schedule,
                "lam": or_variants(DKM_VARIANTS, self.variant, "lam", self.lam),
                "pretrain_epochs": check_pretraining(self.variant, self.pretrain_epochs)}
