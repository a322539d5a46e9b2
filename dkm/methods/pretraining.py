"""End-to-end autoencoder pretraining, shared by every pretrained method.

For a given dataset and seed the pretraining runs once: :func:`load_or_pretrain`
keeps it in an on-disk cache, so that every pretrained method (AE-KM, DCN^p,
IDEC^p, DKM^p) starts from bit-for-bit identical weights, as in the paper's
protocol.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import tensorflow as tf

from dkm._atomic import atomic_write
from dkm.autoencoder import Architecture, Autoencoder
from dkm.methods.common import LoopConfig
from dkm.training import Adam, BatchSampler, Reconstruction, data_tensor, run_epochs

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

    def fingerprint(self, replica: int) -> str:
        """The first 16 hexadecimal digits of the SHA-256 of one replica's weights.

        Two runs that start from the same pretrained network, bit for bit,
        have the same fingerprint; a pretraining computed with another
        arithmetic (another CPU, another library) almost surely has another.
        """
        digest = hashlib.sha256()
        for weight in self.weights:
            digest.update(np.ascontiguousarray(weight[replica], dtype=np.float32).tobytes())
        return digest.hexdigest()[:16]


def pretrain(
    data: tf.Tensor,
    architecture: Architecture,
    seeds: Sequence[int],
    epochs: int = PAPER_PRETRAIN_EPOCHS,
    loop: LoopConfig = LoopConfig(),
) -> Pretrained:
    """Train ``S`` autoencoders (one per seed) on the reconstruction error alone."""
    autoencoder, optimizer, history = _pretrained_network(data, architecture, seeds, epochs, loop)
    return Pretrained(
        weights=autoencoder.get_weights(),
        optimizer_state=optimizer.state(autoencoder.params),
        history=history,
    )


def _pretrained_network(
    data: tf.Tensor,
    architecture: Architecture,
    seeds: Sequence[int],
    epochs: int,
    loop: LoopConfig,
) -> tuple[Autoencoder, Adam, dict[str, np.ndarray]]:
    """:func:`pretrain`'s network and optimiser as they end, with its curves."""
    autoencoder = loop.autoencoder(architecture, seeds)
    optimizer = Adam(loop.learning_rate)
    trainer = loop.trainer(autoencoder, Reconstruction(), data, optimizer)
    sampler = BatchSampler(int(data.shape[0]), loop.batch_size, seeds, "pretrain", loop.sampler)
    history = run_epochs(trainer, sampler, epochs, description="pretraining",
                         progress=loop.progress, checkpoints=loop.checkpoints)
    return autoencoder, optimizer, history


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
        return loop.autoencoder(architecture, seeds), Adam(loop.learning_rate)
    autoencoder = loop.autoencoder(architecture, seeds, weights=pretrained.weights)
    optimizer = Adam(loop.learning_rate)
    if carry_optimizer_state:
        optimizer.load_state(pretrained.optimizer_state, autoencoder.params)
    return autoencoder, optimizer


def initial_network(
    data: tf.Tensor,
    architecture: Architecture,
    seeds: Sequence[int],
    loop: LoopConfig,
    pretrain_epochs: int,
    pretrained: Pretrained | None = None,
    carry_optimizer_state: bool = True,
) -> tuple[Autoencoder, Adam, dict[str, np.ndarray]]:
    """The network, optimiser and pretraining curves a method starts from.

    With ``pretrain_epochs > 0`` the network is ``pretrained``; when None, the
    network pretrained here goes on as it is, no copy of its weights and
    moments made (the same values as starting from :func:`pretrain`'s result).
    With 0 it is a fresh Glorot-initialised network. The pretraining curves
    come back prefixed with ``"pretrain_"``.
    """
    if not pretrain_epochs:
        return *start_network(architecture, seeds, loop, None), {}
    if pretrained is None:
        autoencoder, optimizer, history = _pretrained_network(
            data, architecture, seeds, pretrain_epochs, loop)
        if not carry_optimizer_state:
            optimizer = Adam(loop.learning_rate)
    else:
        autoencoder, optimizer = start_network(
            architecture, seeds, loop, pretrained, carry_optimizer_state
        )
        history = pretrained.history
    history = {f"pretrain_{name}": values for name, values in history.items()}
    return autoencoder, optimizer, history


def pretraining_key(
    X: np.ndarray, architecture: Architecture, epochs: int, loop: LoopConfig
) -> str:
    """SHA-256 naming a pretraining: data, architecture, epochs and loop settings
    (the products' precision among them).

    The data enter through the SHA-256 of their float32 bytes and their shape;
    the seed is not part of the key (one cache file per seed).
    """
    X = np.ascontiguousarray(X, dtype=np.float32)
    description = {
        "format": 1,
        "data_sha256": hashlib.sha256(X.tobytes()).hexdigest(),
        "data_shape": list(X.shape),
        "layers": list(architecture.encoder_sizes),
        "epochs": int(epochs),
        "batch_size": int(loop.batch_size),
        "learning_rate": float(loop.learning_rate),
        "sampler": loop.sampler,
        "jit_compile": bool(loop.jit_compile),
    }
    if loop.precision != "float32":  # float32's keys are those of the caches made before
        description["precision"] = loop.precision
    return hashlib.sha256(json.dumps(description, sort_keys=True).encode()).hexdigest()


def load_or_pretrain(
    data: np.ndarray | tf.Tensor,
    architecture: Architecture,
    seeds: Sequence[int],
    epochs: int = PAPER_PRETRAIN_EPOCHS,
    loop: LoopConfig = LoopConfig(),
    cache_dir: str | os.PathLike[str] | None = None,
) -> Pretrained:
    """:func:`pretrain`, through an on-disk cache of one file per seed.

    Seeds already in ``cache_dir`` are loaded; the missing ones are trained
    together (stacked) and saved. Files are named by :func:`pretraining_key`
    and the seed, and written atomically (a temporary file, then
    ``os.replace``), so that an interrupted run never leaves a broken entry.

    Parameters
    ----------
    data : numpy.ndarray or tf.Tensor
        The ``(N, d)`` dataset.
    architecture, seeds, epochs, loop
        As for :func:`pretrain`.
    cache_dir : path, optional
        Directory of the cache (created if needed); None trains without cache.

    Returns
    -------
    Pretrained
        Replicas in the order of ``seeds``.
    """
    X = np.asarray(data, dtype=np.float32)
    if cache_dir is None:
        return pretrain(data_tensor(X), architecture, seeds, epochs, loop)
    directory = Path(cache_dir)
    directory.mkdir(parents=True, exist_ok=True)
    key = pretraining_key(X, architecture, epochs, loop)
    paths = {int(seed): directory / f"pretrain-{key[:24]}-seed{int(seed)}.npz" for seed in seeds}
    replicas = {}
    for seed, path in paths.items():
        if path.exists():
            try:
                replicas[seed] = _load_replica(path)
            except ValueError as error:
                warnings.warn(f"{error}: pretraining seed {seed} again, into a new file",
                              RuntimeWarning, stacklevel=2)
    missing = [seed for seed in paths if seed not in replicas]
    if missing:
        trained = pretrain(data_tensor(X), architecture, missing, epochs, loop)
        for replica, seed in enumerate(missing):
            _save_replica(paths[seed], trained, replica)
            replicas[seed] = _load_replica(paths[seed])
    return _stack_replicas([replicas[int(seed)] for seed in seeds])


def _save_replica(path: Path, pretrained: Pretrained, replica: int) -> None:
    arrays = {"iterations": np.float64(pretrained.optimizer_state["iterations"])}
    for i, weight in enumerate(pretrained.weights):
        arrays[f"weight_{i}"] = weight[replica]
    for i, (m, v) in enumerate(pretrained.optimizer_state["moments"]):
        arrays[f"moment1_{i}"], arrays[f"moment2_{i}"] = m[replica], v[replica]
    for name, values in pretrained.history.items():
        arrays[f"history_{name}"] = values[replica]
    with atomic_write(path) as stream:
        np.savez(stream, **arrays)


def _load_replica(path: Path) -> dict[str, np.ndarray]:
    """A cache file's arrays.

    Raises
    ------
    ValueError
        Naming the file, when it is not one :func:`_save_replica` wrote whole (truncated by a
        full disk or copied from elsewhere).
    """
    try:
        with np.load(path, allow_pickle=False) as stored:
            replica = {name: stored[name] for name in stored.files}
    except (OSError, EOFError, ValueError, zipfile.BadZipFile) as error:
        raise ValueError(f"{path} is not a readable pretraining cache file ({error})") from None
    if not {"iterations", "weight_0", "moment1_0", "moment2_0"} <= replica.keys():
        raise ValueError(f"{path} is not a pretraining cache file (it lacks the weights or the "
                         "optimiser's state)")
    return replica


def _stack_replicas(replicas: list[dict[str, np.ndarray]]) -> Pretrained:
    first = replicas[0]

    def stacked(name: str) -> np.ndarray:
        return np.stack([replica[name] for replica in replicas])

    n_weights = sum(name.startswith("weight_") for name in first)
    return Pretrained(
        weights=[stacked(f"weight_{i}") for i in range(n_weights)],
        optimizer_state={
            "iterations": float(first["iterations"]),
            "moments": [[stacked(f"moment1_{i}"), stacked(f"moment2_{i}")] for i in range(n_weights)],
        },
        # Curves every replica has (entries cached by an older version may lack some).
        history={name.removeprefix("history_"): stacked(name) for name in first
                 if name.startswith("history_") and all(name in r for r in replicas)},
    )
