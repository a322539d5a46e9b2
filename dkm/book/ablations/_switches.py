"""The switches the studies turn, as subclasses of the paper's models.

The paper's Deep k-Means (:mod:`dkm.methods.dkm`) and Yang et al.'s DCN
(:mod:`dkm.methods.dcn`) hold no switch of a study. Each model here extends
one of them with the configuration fields its studies change; a field is
recorded with a run only when it differs from its default
(:data:`dkm.methods.config.RECORDED_WHEN_SET`), so a run at the defaults has the
record of the paper's model, and a study's variant has the record of the
protocol's method with its switches beside. The book declares their
estimators to the protocol's registry (:data:`dkm.book.declarations.MODELS`): a
configuration that asks for their fields is of their class
(:func:`dkm.methods.config.with_overrides`), and their estimator trains it
(:meth:`dkm.protocol.registry.Method.make_estimator`).

* :class:`DKMAblationConfig`: the hard assignment (α → ∞), weight decay, and α
  rescaled as the embedding shrinks (studies ``alpha``, ``weight-decay``,
  ``alpha-rescaling``).
* :class:`DCNAblationConfig`: the DKM authors' four departures from Yang et al.
  (:data:`dkm.book.ablations.AUTHORS_DCN`, study ``dcn-authors``) and the walk from DCN to Deep
  k-Means with a hard assignment (:data:`dkm.book.ablations.TOWARDS_DKM`, study ``towards-dkm``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Sequence

import numpy as np
import tensorflow as tf
from sklearn.utils._param_validation import StrOptions

from dkm.autoencoder import Autoencoder
from dkm.book.ablations._studies import AUTHORS_DCN
from dkm.losses import squared_euclidean
from dkm.methods.common import MethodResult
from dkm.methods.config import RECORDED_WHEN_SET
from dkm.methods.dcn import DCN, DCN_INITIAL_COUNT, DCN_VARIANTS, DCNConfig, DCNObjective
from dkm.methods.dkm import DeepKMeans, DKMConfig, DKMObjective, initial_centers
from dkm.methods.parameters import NON_NEGATIVE, POSITIVE
from dkm.training import embed

#: The clustering term: the paper's soft assignment, or its hard limit.
Assignment = Literal["soft", "hard"]
ASSIGNMENTS: tuple[str, ...] = ("soft", "hard")
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


def mean_embedding_norm(autoencoder: Autoencoder, data: tf.Tensor) -> np.ndarray:
    """Each replica's mean embedding norm ``mean_i ‖h(x_i)‖`` over ``data``, ``(S,)``."""
    return np.linalg.norm(embed(autoencoder, data), axis=-1).mean(axis=1)


# ---------------------------------------------------------------------------------------------
# Deep k-Means: the hard assignment, weight decay, α rescaling


class DKMAblationObjective(DKMObjective):
    """:class:`dkm.methods.dkm.DKMObjective` with the studies' three switches.

    Parameters
    ----------
    representatives, lam, distance, schedule
        As for :class:`dkm.methods.dkm.DKMObjective`.
    assignment : {"soft", "hard"}
        ``"soft"``: the paper's ``Σ_k f G_k(α)``. ``"hard"``: its limit
        ``α → ∞``, ``min_k f(h, r_k)``, whose gradient reaches only the nearest
        representative (α is then ignored).
    weight_decay : float
        Coefficient ``μ`` of an L2 penalty ``μ Σ_l ‖W_l‖²`` on the network's
        kernels (biases excluded), added to every sample's loss.
    autoencoder : Autoencoder, optional
        The network whose kernels the penalty reads and whose embedding the
        rescaling measures; needed with ``weight_decay > 0`` or ``data``.
    data : tf.Tensor, optional
        With it, α is rescaled before each epoch after the first by
        ``(n₀ / n)²``: ``n₀`` each replica's mean embedding norm on ``data`` when
        training starts, ``n`` the one after the previous epoch.
    """

    def __init__(
        self,
        representatives: np.ndarray,
        lam: float | Sequence[float],
        distance: str = "euclidean",
        schedule: Any = None,
        assignment: Assignment = "soft",
        weight_decay: float = 0.0,
        autoencoder: Autoencoder | None = None,
        data: tf.Tensor | None = None,
    ) -> None:
        _check_choice("assignment", assignment, ASSIGNMENTS)
        if (weight_decay or data is not None) and autoencoder is None:
            raise ValueError("weight_decay > 0 and the α rescaling need the autoencoder")
        super().__init__(representatives, lam, distance, schedule)
        self.assignment = assignment
        self.weight_decay = float(weight_decay)
        self.autoencoder = autoencoder
        self.data = data
        self.start_norm = None if data is None else mean_embedding_norm(autoencoder, data)

    def alpha_factor(self, epoch: int) -> np.ndarray | float:
        if self.start_norm is None or not epoch:
            return 1.0
        return (self.start_norm / mean_embedding_norm(self.autoencoder, self.data)) ** 2

    def clustering(self, distances: tf.Tensor) -> tf.Tensor:
        if self.assignment == "hard":
            return tf.reduce_min(distances, axis=-1)
        return super().clustering(distances)

    def per_sample_loss(self, x, x_hat, h, indices):
        loss, terms = super().per_sample_loss(x, x_hat, h, indices)
        if self.weight_decay:
            kernels = [w for w in self.autoencoder.params if w.shape.rank == 3]  # (S, in, out)
            penalty = tf.add_n([tf.reduce_sum(tf.square(w), axis=[1, 2]) for w in kernels])
            loss += self.weight_decay * penalty[:, None]
        return loss, terms


@dataclass(frozen=True)
class DKMAblationConfig(DKMConfig):
    """A Deep k-Means variant with the studies' switches (:class:`DKMAblationObjective`).

    Attributes
    ----------
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
    """

    assignment: Assignment = field(default="soft", metadata=RECORDED_WHEN_SET)
    weight_decay: float = field(default=0.0, metadata=RECORDED_WHEN_SET)
    alpha_rescaling: bool = field(default=False, metadata=RECORDED_WHEN_SET)

    def __post_init__(self) -> None:
        _check_choice("assignment", self.assignment, ASSIGNMENTS)
        if not self.weight_decay >= 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay!r}")
        if self.alpha_rescaling and self.assignment == "hard":
            raise ValueError("alpha_rescaling rescales the soft assignment's α, which the hard "
                             "assignment ignores: use assignment='soft' or drop alpha_rescaling")

    def objective(self, autoencoder: Autoencoder, data: tf.Tensor, n_clusters: int,
                  seeds: Sequence[int]) -> DKMAblationObjective:
        _, representatives = initial_centers(autoencoder, data, n_clusters, seeds,
                                             bool(self.pretrain_epochs), self.kmeans_restarts)
        return DKMAblationObjective(representatives, self.lam, self.distance, self.schedule,
                                    self.assignment, self.weight_decay, autoencoder,
                                    data if self.alpha_rescaling else None)


@dataclass(kw_only=True, eq=False, repr=False)
class DeepKMeansAblation(DeepKMeans):
    """:class:`dkm.DeepKMeans` with the studies' switches ``assignment``, ``weight_decay``
    and ``alpha_rescaling`` (:class:`DKMAblationConfig`); the other parameters are
    :class:`dkm.DeepKMeans`'s."""

    assignment: str = "soft"
    weight_decay: float = 0.0
    alpha_rescaling: bool = False

    _parameter_constraints: ClassVar[dict] = {
        **DeepKMeans._parameter_constraints,
        "assignment": [StrOptions(set(ASSIGNMENTS))],
        "weight_decay": [NON_NEGATIVE],
        "alpha_rescaling": ["boolean"],
    }
    _config_class = DKMAblationConfig


# ---------------------------------------------------------------------------------------------
# DCN: the DKM authors' departures from Yang et al., and the walk towards Deep k-Means


class DCNAblationObjective(DCNObjective):
    """:class:`dkm.methods.dcn.DCNObjective` with the studies' switches.

    Parameters
    ----------
    autoencoder, centroids, assignments, lam, initial_count
        As for :class:`dkm.methods.dcn.DCNObjective`.
    update : {"batch", "last-sample", "none"}
        ``"batch"``: every sample of the batch is reassigned and moves its
        centroid (Yang et al.). ``"last-sample"``: only the batch's last
        sample does (the DKM authors' code). ``"none"``: no update after the
        step (the centroids then move only if Adam trains them).
    train_centroids : bool
        Whether Adam also moves the centroids along the loss's gradient (the
        DKM authors' code), on top of the running-mean updates.
    clustering_weight : float
        Weight of ``λ ‖h − r‖²`` in the loss: 0.5 (Yang et al.) or 1.0 (the DKM
        authors' code).
    pull : {"stored", "nearest"}
        The centroid of each sample's clustering term: its stored assignment
        (DCN), or its nearest centroid at this step, ``min_k ‖h − r_k‖²``
        (Deep k-Means' α → ∞ limit).
    labels : {"nearest", "stored"}
        The result's labels: each point's nearest centroid after a fresh
        forward pass, or the assignments stored after the last batch.
    """

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
        labels: LabelSource = "nearest",
    ) -> None:
        _check_choice("update", update, UPDATE_RULES)
        _check_choice("pull", pull, PULL_RULES)
        _check_choice("labels", labels, LABEL_SOURCES)
        self.update = update
        self.train_centroids = bool(train_centroids)
        self.clustering_weight = float(clustering_weight)
        self.pull = pull
        self.labels = labels
        super().__init__(autoencoder, centroids, assignments, lam, initial_count)

    def clustering(self, h: tf.Tensor, indices: tf.Tensor) -> tf.Tensor:
        if self.pull == "nearest":
            return tf.reduce_min(squared_euclidean(h, self.centroids), axis=-1)
        return super().clustering(h, indices)

    def updated_samples(self, x, indices):
        if self.update == "none":
            return None
        if self.update == "last-sample":
            return x[:, -1:], indices[:, -1:]
        return x, indices

    def result(self, autoencoder: Autoencoder, data: tf.Tensor,
               history: dict[str, np.ndarray]) -> MethodResult:
        result = super().result(autoencoder, data, history)
        if self.labels == "stored":
            result.labels = self.assignments.numpy()
        return result


@dataclass(frozen=True)
class DCNAblationConfig(DCNConfig):
    """A DCN variant with the studies' switches (:class:`DCNAblationObjective`).

    Attributes
    ----------
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
    """

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

    def objective(self, autoencoder: Autoencoder, data: tf.Tensor, n_clusters: int,
                  seeds: Sequence[int]) -> DCNAblationObjective:
        assignments, centroids = self.starting_point(autoencoder, data, n_clusters, seeds)
        return DCNAblationObjective(autoencoder, centroids, assignments, self.lam,
                                    self.initial_count, self.update, self.train_centroids,
                                    self.clustering_weight, self.pull, self.labels)


@dataclass(kw_only=True, eq=False, repr=False)
class DCNAblation(DCN):
    """:class:`dkm.DCN` with the studies' switches ``update``, ``pull``,
    ``train_centroids``, ``clustering_weight`` and ``labels`` (:class:`DCNAblationConfig`);
    the other parameters are :class:`dkm.DCN`'s."""

    update: str = "batch"
    pull: str = "stored"
    train_centroids: bool = False
    clustering_weight: float = 0.5
    labels: str = "nearest"

    _parameter_constraints: ClassVar[dict] = {
        **DCN._parameter_constraints,
        "update": [StrOptions(set(UPDATE_RULES))],
        "pull": [StrOptions(set(PULL_RULES))],
        "train_centroids": ["boolean"],
        "clustering_weight": [POSITIVE],
        "labels": [StrOptions(set(LABEL_SOURCES))],
    }
    _config_class = DCNAblationConfig


#: DCN^np and DCN^p as the DKM authors' code ran them, by suffix (the methods
#: ``dcn-np-authors`` and ``dcn-p-authors``).
AUTHORS_DCN_VARIANTS: dict[str, DCNAblationConfig] = {
    name: DCNAblationConfig(**vars(config), **AUTHORS_DCN)
    for name, config in DCN_VARIANTS.items()
}
