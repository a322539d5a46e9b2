"""scikit-learn estimators for the deep clustering methods.

:class:`DeepClusteringEstimator` holds what every deep method shares (input
checks, seeding, the fitted attributes, ``predict`` and ``transform``);
:class:`DeepKMeans` configures it for the paper's method, :class:`DCN` and
:class:`IDEC` for the two deep baselines.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from numbers import Integral, Real
from typing import Sequence

import numpy as np
import tensorflow as tf
from sklearn.base import (BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin,
                          TransformerMixin, _fit_context)
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from dkm.annealing import Schedule, constant, custom, paper_annealing
from dkm.autoencoder import PAPER_HIDDEN_SIZES, Architecture, Autoencoder
from dkm.losses import DISTANCES, get_distance
from dkm.methods.common import LoopConfig, MethodResult, nearest_center
from dkm.methods.dkm import DKMConfig, fit_dkm
from dkm.methods.dcn import DCN_VARIANTS, DCNConfig, fit_dcn
from dkm.methods.idec import IDEC_VARIANTS, IDECConfig, fit_idec
from dkm.training import SAMPLERS, embed, enable_determinism

_MAX_SEED = 2**31 - 1


_POSITIVE_INT = Interval(Integral, 1, None, closed="left")
_NON_NEGATIVE_INT = Interval(Integral, 0, None, closed="left")
_NON_NEGATIVE = Interval(Real, 0, None, closed="left")  # also excludes inf and nan


def _check_pretraining(variant: str, pretrain_epochs: int) -> int:
    """The pretraining epochs of ``variant``: none for ``"a"`` and ``"np"``, else at least one."""
    if variant in ("a", "np"):
        return 0
    if pretrain_epochs < 1:
        raise ValueError(f"pretrain_epochs must be a positive integer for variant {variant!r}, "
                         f"got {pretrain_epochs!r}")
    return int(pretrain_epochs)


class DeepClusteringEstimator(ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin,
                              BaseEstimator, ABC):
    """Shared machinery of the deep clustering estimators.

    Subclasses define ``__init__`` (their parameters, stored unchanged, as
    scikit-learn requires), the constraints of their own parameters (added to
    :attr:`_parameter_constraints`) and :meth:`_fit_method`; they must have the
    parameters ``n_clusters``, ``hidden_sizes``, ``embedding_dim``,
    ``batch_size``, ``learning_rate``, ``sampler``, ``random_state``,
    ``progress`` and ``jit_compile``. scikit-learn checks every parameter
    against the constraints when ``fit`` starts; checks that involve two
    parameters are the subclasses' ``_config``.

    Fitted attributes
    -----------------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every training point (from a forward pass after training).
    cluster_centers_ : ndarray of shape (n_clusters, embedding_dim)
        Cluster centres in the embedding space.
    history_ : dict of str to ndarray
        Per-epoch training curves (loss and its terms).
    autoencoder_weights_ : list of ndarray
        Weights of the trained autoencoder.
    seed_ : int
        The seed actually used (drawn from ``random_state`` when not an int).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen in ``fit``, when they all are strings.
    """

    _parameter_constraints: dict = {
        "n_clusters": [_POSITIVE_INT],
        "hidden_sizes": ["array-like"],
        "embedding_dim": [_POSITIVE_INT, None],
        "batch_size": [_POSITIVE_INT],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "sampler": [StrOptions(set(SAMPLERS))],
        "random_state": ["random_state"],
        "progress": ["boolean"],
        "jit_compile": ["boolean"],
    }

    _distance_name: str = "euclidean"

    @abstractmethod
    def _fit_method(self, X: np.ndarray, seed: int, loop: LoopConfig) -> MethodResult:
        """Train on validated data for one seed and return the result."""

    def _check_X(self, X, *, fitting: bool) -> np.ndarray:
        """``X`` as finite float32; ``fitting`` records its features, else checks them."""
        X = validate_data(self, X, reset=fitting, dtype=np.float32, ensure_all_finite=True)
        if fitting and X.shape[0] < self.n_clusters:
            raise ValueError(
                f"n_samples={X.shape[0]} is smaller than n_clusters={self.n_clusters}: "
                "there must be at least one sample per cluster"
            )
        return X

    def _seed(self) -> int:
        if isinstance(self.random_state, (int, np.integer)):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(_MAX_SEED))

    def _loop(self) -> LoopConfig:
        return LoopConfig(
            batch_size=int(self.batch_size),
            learning_rate=float(self.learning_rate),
            sampler=self.sampler,
            hidden_sizes=tuple(self.hidden_sizes),
            jit_compile=bool(self.jit_compile),
            progress=bool(self.progress),
        )

    @property
    def _n_features_out(self) -> int:
        """Size of the embedding (``transform``'s output), named ``<class>0`` and on."""
        return self.cluster_centers_.shape[1]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float32"]  # computed in float32
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None) -> "DeepClusteringEstimator":
        """Train the autoencoder and the clustering jointly on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite values; converted to float32.
        y : ignored
            Present for API consistency.

        Returns
        -------
        self
        """
        X = self._check_X(X, fitting=True)
        enable_determinism()
        self.seed_ = self._seed()
        result = self._fit_method(X, self.seed_, self._loop())
        self.labels_ = result.labels[0]
        self.cluster_centers_ = result.centers[0]
        self.history_ = {name: values[0] for name, values in result.history.items()}
        self.autoencoder_weights_ = [w[0] for w in result.weights]
        self.embedding_ = result.embeddings[0]
        return self

    def _embed(self, X: np.ndarray) -> np.ndarray:
        architecture = Architecture(
            self.n_features_in_,
            self.cluster_centers_.shape[1],
            tuple(self.hidden_sizes),
        )
        weights = [w[None] for w in self.autoencoder_weights_]
        autoencoder = Autoencoder(architecture, [self.seed_], weights=weights)
        return embed(autoencoder, tf.constant(X))

    def transform(self, X) -> np.ndarray:
        """Embeddings ``h(x)`` of ``X``, shape ``(n_samples, embedding_dim)``."""
        check_is_fitted(self)
        return self._embed(self._check_X(X, fitting=False))[0]

    def predict(self, X) -> np.ndarray:
        """The nearest cluster centre of each point's embedding."""
        check_is_fitted(self)
        embeddings = self._embed(self._check_X(X, fitting=False))
        distance = get_distance(self._distance_name)
        return nearest_center(embeddings, self.cluster_centers_[None], distance)[0]


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
        validation-optimal values depend on the dataset (see ``dkm.paper``).
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
    random_state : int, RandomState or None, default=None
        Seed of the initialisation and the minibatch order. The same int on
        the same data and machine gives identical results, bit for bit.
    progress : bool, default=True
        Show progress bars.
    jit_compile : bool, default=True
        Compile training epochs with XLA.

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
        "lam": [_NON_NEGATIVE],
        "distance": [StrOptions(set(DISTANCES))],
        "alpha": [_NON_NEGATIVE],
        "finetune_epochs": [_POSITIVE_INT],
        "schedule": [Schedule, "array-like", None],
        "pretrain_epochs": [_NON_NEGATIVE_INT],
        "kmeans_restarts": [_POSITIVE_INT],
    }

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
        hidden_sizes: tuple[int, ...] = PAPER_HIDDEN_SIZES,
        embedding_dim: int | None = None,
        batch_size: int = 256,
        learning_rate: float = 1e-3,
        sampler: str = "permutation",
        random_state=None,
        progress: bool = True,
        jit_compile: bool = True,
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
        self.hidden_sizes = hidden_sizes
        self.embedding_dim = embedding_dim
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.sampler = sampler
        self.random_state = random_state
        self.progress = progress
        self.jit_compile = jit_compile

    @property
    def _distance_name(self) -> str:  # type: ignore[override]
        return self.distance

    def _schedule(self) -> Schedule:
        if isinstance(self.schedule, Schedule):
            return self.schedule
        if self.schedule is not None:
            return custom(self.schedule)
        if self.variant == "p":
            return constant(self.alpha, self.finetune_epochs)
        return paper_annealing()

    def _config(self) -> DKMConfig:
        return DKMConfig(
            lam=float(self.lam),
            schedule=self._schedule(),
            pretrain_epochs=_check_pretraining(self.variant, self.pretrain_epochs),
            distance=self.distance,
            kmeans_restarts=int(self.kmeans_restarts),
        )

    def _fit_method(self, X: np.ndarray, seed: int, loop: LoopConfig) -> MethodResult:
        return fit_dkm(X, self.n_clusters, [seed], self._config(), loop,
                       embedding_dim=self.embedding_dim)


def _variant_epochs(
    variants: dict, prefix: str, variant: str, epochs: int | None, pretrain_epochs: int
) -> tuple[int, int]:
    """Training and pretraining epochs of a baseline's variant ``"p"`` or ``"np"``.

    ``epochs=None`` means the paper's value for the variant (``variants``).
    """
    paper_epochs = variants[f"{prefix}-{variant}"].epochs
    return (paper_epochs if epochs is None else int(epochs),
            _check_pretraining(variant, pretrain_epochs))


#: The parameters that DCN and IDEC share beyond the base class's.
_BASELINE_CONSTRAINTS: dict = {
    **DeepClusteringEstimator._parameter_constraints,
    "variant": [StrOptions({"p", "np"})],
    "epochs": [_POSITIVE_INT, None],
    "pretrain_epochs": [_NON_NEGATIVE_INT],
    "kmeans_restarts": [_POSITIVE_INT],
}


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
        Trade-off λ; the paper's values depend on the dataset (``dkm.paper``).
    epochs : int, optional
        Training epochs after pretraining; by default the paper's 50 (``"p"``)
        or 200 (``"np"``).
    pretrain_epochs : int, default=50
        Pretraining epochs of variant ``"p"``.
    kmeans_restarts : int, default=10
        k-means++ restarts for the initial centroids of variant ``"p"``.
    hidden_sizes : tuple of int, default=(500, 500, 2000)
        Encoder hidden layers; the decoder mirrors them.
    embedding_dim : int, optional
        Embedding size; defaults to ``n_clusters`` as in the paper.
    batch_size : int, default=256
    learning_rate : float, default=1e-3
        Adam's learning rate.
    sampler : {"permutation", "independent", "sequential"}, default="permutation"
        Minibatch order (see :class:`dkm.training.BatchSampler`).
    random_state : int, RandomState or None, default=None
        Seed; the same int gives identical results, bit for bit.
    progress : bool, default=True
        Show progress bars.
    jit_compile : bool, default=True
        Compile training epochs with XLA.

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

    _parameter_constraints: dict = {**_BASELINE_CONSTRAINTS, "lam": [_NON_NEGATIVE]}

    def __init__(
        self,
        n_clusters: int = 10,
        *,
        variant: str = "p",
        lam: float = 1.0,
        epochs: int | None = None,
        pretrain_epochs: int = 50,
        kmeans_restarts: int = 10,
        hidden_sizes: tuple[int, ...] = PAPER_HIDDEN_SIZES,
        embedding_dim: int | None = None,
        batch_size: int = 256,
        learning_rate: float = 1e-3,
        sampler: str = "permutation",
        random_state=None,
        progress: bool = True,
        jit_compile: bool = True,
    ) -> None:
        self.n_clusters = n_clusters
        self.variant = variant
        self.lam = lam
        self.epochs = epochs
        self.pretrain_epochs = pretrain_epochs
        self.kmeans_restarts = kmeans_restarts
        self.hidden_sizes = hidden_sizes
        self.embedding_dim = embedding_dim
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.sampler = sampler
        self.random_state = random_state
        self.progress = progress
        self.jit_compile = jit_compile

    def _config(self) -> DCNConfig:
        epochs, pretrain_epochs = _variant_epochs(
            DCN_VARIANTS, "dcn", self.variant, self.epochs, self.pretrain_epochs
        )
        return DCNConfig(lam=float(self.lam), epochs=epochs, pretrain_epochs=pretrain_epochs,
                         kmeans_restarts=int(self.kmeans_restarts))

    def _fit_method(self, X: np.ndarray, seed: int, loop: LoopConfig) -> MethodResult:
        return fit_dcn(X, self.n_clusters, [seed], self._config(), loop,
                       embedding_dim=self.embedding_dim)


class IDEC(DeepClusteringEstimator):
    """Improved Deep Embedded Clustering (Guo, Gao, Liu and Yin, 2017).

    Trains the autoencoder and cluster centres on ``reconstruction + γ KL(P ‖ Q)``
    with Student's t soft assignments ``Q`` and a sharpened target ``P``
    recomputed on the whole dataset every ``update_interval`` iterations;
    stops when fewer than ``tol`` of the labels change between two updates
    (see :mod:`dkm.methods.idec`).

    Parameters
    ----------
    n_clusters : int, default=10
        Number of clusters ``K`` (>= 1); also the embedding size unless
        ``embedding_dim`` is given.
    variant : {"p", "np"}, default="p"
        ``"p"`` (IDEC^p): start from the pretrained autoencoder; ``"np"``
        (IDEC^np): from a random one. The centres start from k-means++ on
        the initial embedding in both.
    gamma : float, default=0.1
        Weight γ of the KL term (IDEC's default); the paper's values depend on
        the dataset (``dkm.paper``).
    update_interval : int, default=140
        Iterations between target updates (IDEC's code: 140 MNIST, 30 USPS,
        3 Reuters).
    tol : float, default=0.001
        Stopping threshold on the fraction of changed labels.
    epochs : int, optional
        Most training epochs; by default the paper's 50 (``"p"``) or 200
        (``"np"``).
    pretrain_epochs : int, default=50
        Pretraining epochs of variant ``"p"``.
    kmeans_restarts : int, default=20
        k-means++ restarts for the initial centres (IDEC's code: 20).
    reconstruction : {"mean", "sum"}, default="mean"
        Squared error averaged over features (IDEC's Keras ``"mse"``, to which
        the paper's γ values refer) or summed (DKM's ``g``). Since Adam is
        nearly blind to the loss's scale, ``"mean"`` with γ trains like
        ``"sum"`` with ``n_features · γ``: on many features the KL term can
        then dominate (the book's chapter 7, 20NEWS IDEC^np).
    hidden_sizes : tuple of int, default=(500, 500, 2000)
        Encoder hidden layers; the decoder mirrors them.
    embedding_dim : int, optional
        Embedding size; defaults to ``n_clusters`` as in the paper.
    batch_size : int, default=256
    learning_rate : float, default=1e-3
        Adam's learning rate.
    sampler : {"permutation", "independent", "sequential"}, default="permutation"
        Minibatch order (see :class:`dkm.training.BatchSampler`).
    random_state : int, RandomState or None, default=None
        Seed; the same int gives identical results, bit for bit.
    progress : bool, default=True
        Show progress bars.
    jit_compile : bool, default=True
        Compile training epochs with XLA.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from dkm import IDEC
    >>> X, y = load_digits(return_X_y=True)
    >>> model = IDEC(n_clusters=10, gamma=0.1, update_interval=7, pretrain_epochs=5,
    ...              epochs=5, random_state=0, progress=False).fit(X / 16)
    >>> model.labels_.shape
    (1797,)
    """

    _parameter_constraints: dict = {
        **_BASELINE_CONSTRAINTS,
        "gamma": [_NON_NEGATIVE],
        "update_interval": [_POSITIVE_INT],
        "tol": [_NON_NEGATIVE],
        "reconstruction": [StrOptions({"mean", "sum"})],
    }

    def __init__(
        self,
        n_clusters: int = 10,
        *,
        variant: str = "p",
        gamma: float = 0.1,
        update_interval: int = 140,
        tol: float = 1e-3,
        epochs: int | None = None,
        pretrain_epochs: int = 50,
        kmeans_restarts: int = 20,
        reconstruction: str = "mean",
        hidden_sizes: tuple[int, ...] = PAPER_HIDDEN_SIZES,
        embedding_dim: int | None = None,
        batch_size: int = 256,
        learning_rate: float = 1e-3,
        sampler: str = "permutation",
        random_state=None,
        progress: bool = True,
        jit_compile: bool = True,
    ) -> None:
        self.n_clusters = n_clusters
        self.variant = variant
        self.gamma = gamma
        self.update_interval = update_interval
        self.tol = tol
        self.epochs = epochs
        self.pretrain_epochs = pretrain_epochs
        self.kmeans_restarts = kmeans_restarts
        self.reconstruction = reconstruction
        self.hidden_sizes = hidden_sizes
        self.embedding_dim = embedding_dim
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.sampler = sampler
        self.random_state = random_state
        self.progress = progress
        self.jit_compile = jit_compile

    def _config(self) -> IDECConfig:
        epochs, pretrain_epochs = _variant_epochs(
            IDEC_VARIANTS, "idec", self.variant, self.epochs, self.pretrain_epochs
        )
        return IDECConfig(gamma=float(self.gamma), epochs=epochs, pretrain_epochs=pretrain_epochs,
                          update_interval=self.update_interval, tol=float(self.tol),
                          kmeans_restarts=int(self.kmeans_restarts),
                          reconstruction=self.reconstruction)

    def _fit_method(self, X: np.ndarray, seed: int, loop: LoopConfig) -> MethodResult:
        return fit_idec(X, self.n_clusters, [seed], self._config(), loop,
                        embedding_dim=self.embedding_dim)
