"""The one fit of the deep methods: data → network → objective → epochs → result.

A deep method is a configuration and an objective. The configuration (a frozen
dataclass, one per method) says how many epochs train, what its phase is called
in progress bars and checkpoints, and builds the objective from the network
that pretraining (or a fresh initialisation) gives; the objective starts its
centres, defines the loss of a minibatch, and may act before each epoch (DKM's
α), stop training early (IDEC's rule) and say what the result is.
:func:`fit_deep_method` runs that plan for every seed at once; the methods'
estimators (:mod:`dkm.methods.estimator`) call it.
"""
from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence

import numpy as np
import tensorflow as tf

from dkm.autoencoder import Autoencoder
from dkm.methods.common import LoopConfig, MethodResult, nearest_center
from dkm.methods.pretraining import Pretrained, initial_network
from dkm.training import BatchSampler, Objective, data_tensor, embed, run_epochs


class DeepMethodConfig(Protocol):
    """What :func:`fit_deep_method` asks of a method's configuration.

    The protocol also calls its ``for_dataset(dataset, n_samples)`` where it has one: the
    configuration to train on that dataset (IDEC's target-update interval,
    :meth:`dkm.methods.idec.IDECConfig.for_dataset`).
    """

    #: Epochs of pretraining (0: none).
    pretrain_epochs: int
    #: Continue pretraining's Adam moments in training.
    carry_optimizer_state: bool
    #: Name of the training phase (progress bars, checkpoints).
    phase: str

    @property
    def n_epochs(self) -> int:
        """Most training epochs after pretraining."""

    def objective(self, autoencoder: Autoencoder, data: tf.Tensor, n_clusters: int,
                  seeds: Sequence[int]) -> "ClusteringObjective":
        """The objective of these replicas, its centres started."""


class ClusteringObjective:
    """What a deep method's objective adds to :class:`dkm.training.Objective`: the hooks of
    :func:`fit_deep_method`, with the defaults most methods keep.

    Subclasses define ``term_names``, ``replicated``, ``counters``, ``variables``,
    ``per_sample_loss`` and ``after_step`` (:class:`dkm.training.Objective`), and
    :attr:`centers` and :attr:`distance`, which the default :meth:`result` reads.
    """

    #: The clustering distance of the final labels.
    distance: Callable[[tf.Tensor, tf.Tensor], tf.Tensor]
    #: The cluster centres ``(S, K, p)``.
    centers: tf.Variable

    def before_epoch(self, epoch: int) -> dict[str, np.ndarray] | None:
        """Runs before epoch ``epoch``; the ``(S,)`` values it returns join the history."""
        return None

    def stopped(self) -> bool:
        """Whether every replica has stopped (asked after each epoch)."""
        return False

    def result(self, autoencoder: Autoencoder, data: tf.Tensor,
               history: dict[str, np.ndarray]) -> MethodResult:
        """Labels from a fresh forward pass after training: each point's nearest centre."""
        embeddings = embed(autoencoder, data)
        centers = self.centers.numpy()
        return MethodResult(
            labels=nearest_center(embeddings, centers, self.distance),
            embeddings=embeddings,
            centers=centers,
            history=history,
            weights=autoencoder.get_weights(),
        )


def fit_deep_method(
    X: np.ndarray,
    n_clusters: int,
    seeds: Sequence[int],
    config: Any,
    loop: LoopConfig = LoopConfig(),
    pretrained: Pretrained | None = None,
    embedding_dim: int | None = None,
) -> MethodResult:
    """Train the deep method of ``config`` on ``X`` for every seed in ``seeds`` (one replica each).

    Parameters
    ----------
    X : numpy.ndarray
        ``(N, d)`` float32 data, validated by the caller.
    n_clusters : int
        Number of clusters ``K``.
    seeds : sequence of int
        One seed per replica: network initialisation, centres and minibatch order.
    config : DeepMethodConfig
        The method and its variant (``DKMConfig``, ``DCNConfig``, ``IDECConfig``, ...).
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
        What the objective's :meth:`ClusteringObjective.result` makes of the
        trained network, with the pretraining's and the training's curves.
    """
    data = data_tensor(X)
    architecture = loop.architecture(X.shape[1], embedding_dim or n_clusters)
    autoencoder, optimizer, history = initial_network(
        data, architecture, seeds, loop, config.pretrain_epochs, pretrained,
        config.carry_optimizer_state,
    )
    objective: Objective = config.objective(autoencoder, data, n_clusters, seeds)
    trainer = loop.trainer(autoencoder, objective, data, optimizer)
    sampler = BatchSampler(X.shape[0], loop.batch_size, seeds, "finetune", loop.sampler)
    history.update(run_epochs(trainer, sampler, config.n_epochs,
                              before_epoch=objective.before_epoch, stop_when=objective.stopped,
                              description=config.phase, progress=loop.progress,
                              checkpoints=loop.checkpoints))
    return objective.result(autoencoder, data, history)
