"""The two non-deep baselines: KM (k-means++ on the raw data) and AE-KM.

AE-KM is k-means++ on the embedding of the same pretrained autoencoder that
the pretrained deep methods start from (50 epochs of end-to-end
reconstruction training); with the shared pretraining cache
(:func:`dkm.methods.pretraining.load_or_pretrain`) it is exactly their
starting point.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Sequence

import numpy as np

from dkm.methods.common import LoopConfig, MethodResult, kmeans_per_replica, scale_epochs
from dkm.methods.config import RunIdentity
from dkm.methods.pretraining import PAPER_PRETRAIN_EPOCHS, Pretrained, initial_network
from dkm.training import data_tensor, embed


@dataclass(frozen=True)
class KMConfig:
    """k-means++ on the raw data.

    Attributes
    ----------
    kmeans_restarts : int
        Restarts of k-means++ (10, scikit-learn's default when the paper ran).
    """

    kmeans_restarts: int = 10

    #: What a run's record holds of it (:func:`dkm.methods.config.identity_params`).
    IDENTITY: ClassVar[RunIdentity] = RunIdentity(1, ("kmeans_restarts",),
                                                  fixed={"distance": "euclidean"})

    def scaled(self, factor: float) -> "KMConfig":
        """The same configuration: KM has no epochs to scale."""
        return self


@dataclass(frozen=True)
class AEKMConfig:
    """k-means++ on the embedding of a pretrained autoencoder.

    Attributes
    ----------
    pretrain_epochs : int
        Epochs of the autoencoder's pretraining (the paper: 50).
    kmeans_restarts : int
        Restarts of k-means++.
    """

    pretrain_epochs: int = PAPER_PRETRAIN_EPOCHS
    kmeans_restarts: int = 10

    #: What a run's record holds of it (:func:`dkm.methods.config.identity_params`).
    IDENTITY: ClassVar[RunIdentity] = RunIdentity(1, ("pretrain_epochs", "kmeans_restarts"),
                                                  fixed={"distance": "euclidean"})

    def __post_init__(self) -> None:
        if self.pretrain_epochs < 1:
            raise ValueError(f"AE-KM needs pretraining, got pretrain_epochs={self.pretrain_epochs}")

    def scaled(self, factor: float) -> "AEKMConfig":
        """The same configuration with the pretraining epochs multiplied by ``factor``."""
        return replace(self, pretrain_epochs=scale_epochs(self.pretrain_epochs, factor))


KM_CONFIG = KMConfig()
AEKM_CONFIG = AEKMConfig()


def fit_km(
    X: np.ndarray,
    n_clusters: int,
    seeds: Sequence[int],
    config: KMConfig = KM_CONFIG,
    loop: LoopConfig = LoopConfig(),
    pretrained: Pretrained | None = None,
) -> MethodResult:
    """k-means++ on the raw data ``X``, once per seed.

    ``loop`` and ``pretrained`` are accepted for a uniform signature and not
    used. The result has no embedding; its centres live in the input space.
    """
    points = np.broadcast_to(X, (len(seeds), *X.shape))
    labels, centers = kmeans_per_replica(points, n_clusters, seeds, config.kmeans_restarts)
    return MethodResult(labels=labels, embeddings=None, centers=centers)


def fit_aekm(
    X: np.ndarray,
    n_clusters: int,
    seeds: Sequence[int],
    config: AEKMConfig = AEKM_CONFIG,
    loop: LoopConfig = LoopConfig(),
    pretrained: Pretrained | None = None,
    embedding_dim: int | None = None,
) -> MethodResult:
    """k-means++ on the embedding of the pretrained autoencoder, once per seed.

    Parameters
    ----------
    X : numpy.ndarray
        ``(N, d)`` float32 data.
    n_clusters : int
        Number of clusters ``K``.
    seeds : sequence of int
        One seed per replica: pretraining and k-means++.
    config : AEKMConfig
        Pretraining epochs and k-means restarts.
    loop : LoopConfig
        Settings of the pretraining loop.
    pretrained : Pretrained, optional
        The shared pretraining; computed here when None.
    embedding_dim : int, optional
        Size of the embedding; the paper uses ``n_clusters``.
    """
    data = data_tensor(X)
    architecture = loop.architecture(X.shape[1], embedding_dim or n_clusters)
    autoencoder, _, history = initial_network(
        data, architecture, seeds, loop, config.pretrain_epochs, pretrained
    )
    embeddings = embed(autoencoder, data)
    labels, centers = kmeans_per_replica(embeddings, n_clusters, seeds, config.kmeans_restarts)
    return MethodResult(labels, embeddings, centers, history, autoencoder.get_weights())
