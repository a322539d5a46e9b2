"""End-to-end autoencoder pretraining, shared by every pretrained method."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import tensorflow as tf

from dkm.autoencoder import Architecture, Autoencoder
from dkm.methods.common import LoopConfig, run_epochs
from dkm.training import Adam, BatchSampler, Reconstruction, Trainer

PAPER_PRETRAIN_EPOCHS = 50


@dataclass
class Pretrained:
    """A pretrained autoencoder: weights, Adam's state and the loss curve.

    Attributes
    ----------
    weights : list of numpy.ndarray
        Stacked weights, replica axis first.
    optimizer_state : dict
        Adam's step count and moments for the weights (see :class:`dkm.training.Adam`).
    history : dict
        ``"loss"`` per epoch, ``(S, epochs)``.
    """

    weights: list[np.ndarray]
    optimizer_state: dict
    history: dict[str, np.ndarray]


def pretrain(
    data: tf.Tensor,
    architecture: Architecture,
    seeds: Sequence[int],
    epochs: int = PAPER_PRETRAIN_EPOCHS,
    loop: LoopConfig = LoopConfig(),
) -> Pretrained:
    """Train ``S`` autoencoders (one per seed) on the reconstruction error alone."""
    autoencoder = Autoencoder(architecture, seeds)
    optimizer = Adam(loop.learning_rate)
    trainer = Trainer(autoencoder, Reconstruction(), data, optimizer, loop.jit_compile)
    sampler = BatchSampler(int(data.shape[0]), loop.batch_size, seeds, "pretrain", loop.sampler)
    history = run_epochs(trainer, sampler, epochs, description="pretraining", progress=loop.progress)
    return Pretrained(
        weights=autoencoder.get_weights(),
        optimizer_state=optimizer.state(autoencoder.params),
        history=history,
    )


def start_network(
    architecture: Architecture,
    seeds: Sequence[int],
    loop: LoopConfig,
    pretrained: Pretrained | None,
    carry_optimizer_state: bool = True,
) -> tuple[Autoencoder, Adam]:
    """The autoencoder and optimiser a fine-tuning phase starts from.

    Without ``pretrained``: a fresh Glorot-initialised network and a fresh
    Adam. With it: the pretrained weights and, when ``carry_optimizer_state``
    (the authors' code, where one Adam instance served both phases), Adam's
    step count and moments.
    """
    if pretrained is None:
        return Autoencoder(architecture, seeds), Adam(loop.learning_rate)
    autoencoder = Autoencoder(architecture, seeds, weights=pretrained.weights)
    optimizer = Adam(loop.learning_rate)
    if carry_optimizer_state:
        optimizer.load_state(pretrained.optimizer_state, autoencoder.params)
    return autoencoder, optimizer
