"""scikit-learn estimators for the deep clustering methods.

:class:`DeepClusteringEstimator` holds what every deep method shares (input
checks, seeding, the fitted attributes, ``predict`` and ``transform``);
:class:`DeepKMeans` configures it for the paper's method, :class:`DCN` and
:class:`IDEC` for the two deep baselines.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from abc import ABC, abstractmethod
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import tensorflow as tf
from sklearn.base import (BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin,
                          TransformerMixin, _fit_context)
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from dkm.annealing import Schedule, constant, custom, paper_annealing
from dkm.autoencoder import PAPER_HIDDEN_SIZES, Architecture, Autoencoder
from dkm.checkpoints import RunCheckpoints, code_version, run_key
from dkm.losses import DISTANCES, get_distance
from dkm.methods.common import LoopConfig, MethodResult, nearest_center
from dkm.methods.config import jsonable
from dkm.methods.dcn import (DCN_INITIAL_COUNT, DCN_VARIANTS, LABEL_SOURCES, PULL_RULES,
                             UPDATE_RULES, DCNConfig, fit_dcn)
from dkm.methods.dkm import ASSIGNMENTS, DKMConfig, fit_dkm
from dkm.methods.idec import IDEC_VARIANTS, RECONSTRUCTIONS, IDECConfig, fit_idec
from dkm.methods.pretraining import Pretrained
from dkm.training import LAYOUTS, SAMPLERS, embed, enable_determinism

_MAX_SEED = 2**31 - 1


_POSITIVE_INT = Interval(Integral, 1, None, closed="left")
_NON_NEGATIVE_INT = Interval(Integral, 0, None, closed="left")
_NON_NEGATIVE = Interval(Real, 0, None, closed="left")  # also excludes inf and nan
_POSITIVE = Interval(Real, 0, None, closed="neither")


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
    :attr:`_parameter_constraints`), their configuration class
    (:attr:`_config_class`, every field of which is a parameter of the same
    name), the function that trains it (:attr:`_fit_function`) and
    :meth:`_variant_fields`; they must have the parameters ``n_clusters``,
    ``variant``, ``hidden_sizes``, ``embedding_dim``, ``batch_size``,
    ``learning_rate``, ``sampler``, ``layout``, ``pretrained``,
    ``random_state``, ``progress``, ``jit_compile`` and ``checkpoint_dir``. scikit-learn checks
    every parameter against the constraints when ``fit`` starts; checks that
    involve two parameters are the subclasses' :meth:`_variant_fields`.

    :meth:`fit` trains one network, seeded by ``random_state``;
    :meth:`fit_seeds` trains one per seed together (stacked replicas) and
    returns their :class:`dkm.methods.common.MethodResult`, as the protocol
    does (:meth:`from_config` builds the estimator of a protocol's
    configuration).

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
    embedding_ : ndarray of shape (n_samples, embedding_dim)
        Final embedding of every training point.
    seed_ : int
        The seed actually used (drawn from ``random_state`` when not an int).
    resumed_ : list of dict
        The training phases that started from a checkpoint of ``checkpoint_dir``
        (``phase``, ``from_epoch``, ``seconds`` saved, ``written_by``); empty
        when the fit ran from its start.
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
        "learning_rate": [_POSITIVE],
        "sampler": [StrOptions(set(SAMPLERS))],
        "layout": [StrOptions(set(LAYOUTS)), None],
        "pretrained": [Pretrained, None],
        "random_state": ["random_state"],
        "progress": ["boolean"],
        "jit_compile": ["boolean"],
        "pretrain_epochs": [_NON_NEGATIVE_INT],
        "kmeans_restarts": [_POSITIVE_INT],
        "carry_optimizer_state": ["boolean"],
        "checkpoint_dir": [str, os.PathLike, None],
    }

    #: The configuration class of the method; its fields are parameters of the estimator.
    _config_class: type
    #: ``fit(X, n_clusters, seeds, config, loop, pretrained=None, embedding_dim=None)``.
    _fit_function: Callable[..., MethodResult]

    _distance_name: str = "euclidean"

    @abstractmethod
    def _variant_fields(self) -> dict[str, Any]:
        """The configuration fields that the variant decides (epochs, schedule, ...)."""

    def _config(self) -> Any:
        """The configuration trained: every field from the parameter of its name, then the
        variant's."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self._config_class)}
        return self._config_class(**{**fields, **self._variant_fields()})

    @classmethod
    def from_config(cls, config: Any, loop: LoopConfig, n_clusters: int, *, variant: str,
                    pretrained: Pretrained | None = None,
                    random_state=None) -> "DeepClusteringEstimator":
        """The estimator that trains ``config`` with the loop settings ``loop``.

        The protocol's route to a method (:meth:`dkm.protocol.registry.Method.train`):
        the result of :meth:`fit_seeds` is that of the method's fit function
        called with ``config`` and ``loop``, bit for bit.

        Parameters
        ----------
        config : object
            The method's configuration (an instance of :attr:`_config_class`).
        loop : LoopConfig
            Settings of the shared training loop.
        n_clusters : int
            Number of clusters ``K``, also the embedding size.
        variant : str
            The estimator's variant (``"p"``, ...) whose configuration ``config`` is.
        pretrained : Pretrained, optional
            The shared pretraining to start from.
        random_state : int, optional
            The seed of :meth:`fit`.

        Raises
        ------
        ValueError
            When ``config`` is not of this estimator's configuration class, or
            when the estimator would train another configuration (a pretraining
            for a variant without one, say).
        """
        if not isinstance(config, cls._config_class):
            raise ValueError(f"{cls.__name__} trains a {cls._config_class.__name__}, "
                             f"got {type(config).__name__}")
        fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
        estimator = cls(
            n_clusters, variant=variant, **fields, hidden_sizes=tuple(loop.hidden_sizes),
            batch_size=loop.batch_size, learning_rate=loop.learning_rate, sampler=loop.sampler,
            layout=loop.layout, pretrained=pretrained, random_state=random_state,
            progress=loop.progress, jit_compile=loop.jit_compile,
        )
        estimator._validate_params()
        if estimator._config() != config:
            raise ValueError(f"{cls.__name__}(variant={variant!r}) cannot train {config}: it "
                             f"would train {estimator._config()}")
        return estimator

    def _check_X(self, X, *, fitting: bool) -> np.ndarray:
        """``X`` as finite float32; ``fitting`` records its features, else checks them."""
        X = validate_data(self, X, reset=fitting, dtype=np.float32, ensure_all_finite=True)
        if fitting:
            self._check_n_samples(X)
        return X

    def _check_n_samples(self, X: np.ndarray) -> None:
        if X.shape[0] < self.n_clusters:
            raise ValueError(
                f"n_samples={X.shape[0]} is smaller than n_clusters={self.n_clusters}: "
                "there must be at least one sample per cluster"
            )

    def _check_pretrained(self, config: Any, n_replicas: int, n_features: int) -> None:
        """``pretrained`` must be one of ``n_replicas`` networks of the right architecture,
        pretrained for ``config.pretrain_epochs`` epochs."""
        if self.pretrained is None:
            return
        if not config.pretrain_epochs:
            raise ValueError(f"variant {self.variant!r} trains without pretraining: "
                             "pretrained must be None")
        architecture = self._loop().architecture(n_features, self.embedding_dim or self.n_clusters)
        shapes = [tuple(w.shape) for w in self.pretrained.weights]
        expected = [shape for fan_in, fan_out in architecture.layer_shapes
                    for shape in ((n_replicas, fan_in, fan_out), (n_replicas, 1, fan_out))]
        if shapes != expected:
            raise ValueError(f"pretrained holds weights of shapes {shapes}; {n_replicas} "
                             f"replica(s) of {architecture} need {expected}")
        epochs = self.pretrained.history["loss"].shape[1]
        if epochs != config.pretrain_epochs:
            raise ValueError(f"pretrained was pretrained for {epochs} epochs, "
                             f"pretrain_epochs is {config.pretrain_epochs}")

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
            layout=self.layout,
            progress=bool(self.progress),
        )

    def _fit_checkpoints(self, X: np.ndarray) -> RunCheckpoints | None:
        """The checkpoints of :meth:`fit` in ``checkpoint_dir``, named by what decides the
        result: the estimator, its configuration and loop settings, the seed, the data and
        the pretraining it starts from."""
        if self.checkpoint_dir is None:
            return None
        if not isinstance(self.random_state, (int, np.integer)):
            raise ValueError(
                f"checkpoint_dir needs an int random_state, got {self.random_state!r}: an "
                "interrupted fit can resume only with the seed it started from")
        loop = self._loop()
        run = {
            "estimator": type(self).__name__, "seed": int(self.random_state),
            "config": jsonable(self._config()), "embedding_dim": self.embedding_dim,
            "loop": {"batch_size": loop.batch_size, "learning_rate": loop.learning_rate,
                     "sampler": loop.sampler, "hidden_sizes": list(loop.hidden_sizes),
                     "jit_compile": loop.jit_compile},
            "data": [list(X.shape), hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()],
            "pretrained": None if self.pretrained is None else self.pretrained.fingerprint(0),
        }
        return RunCheckpoints(Path(self.checkpoint_dir), run_key([json.dumps(run, sort_keys=True)]),
                              written_by=code_version())

    def _train(self, X: np.ndarray, seeds: list[int],
               checkpoints: RunCheckpoints | None = None) -> MethodResult:
        """Train on validated data, one replica per seed."""
        config = self._config()
        self._check_pretrained(config, len(seeds), X.shape[1])
        loop = dataclasses.replace(self._loop(), checkpoints=checkpoints)
        return type(self)._fit_function(X, self.n_clusters, seeds, config, loop,
                                        pretrained=self.pretrained,
                                        embedding_dim=self.embedding_dim)

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

        Asks TensorFlow for deterministic kernels first, then trains as
        :meth:`fit_seeds` does for the seed of ``random_state``. With
        ``checkpoint_dir``, a fit interrupted earlier on the same data with the
        same parameters resumes from its last checkpoint (``resumed_`` says
        from where).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite values; converted to float32.
        y : ignored
            Present for API consistency.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For bad data or parameters, ``checkpoint_dir`` without an int
            ``random_state``, or a checkpoint file that cannot be read.
        """
        X = self._check_X(X, fitting=True)
        checkpoints = self._fit_checkpoints(X)
        enable_determinism()
        self.seed_ = self._seed()
        result = self._train(X, [self.seed_], checkpoints)
        self.labels_ = result.labels[0]
        self.cluster_centers_ = result.centers[0]
        self.history_ = {name: values[0] for name, values in result.history.items()}
        self.autoencoder_weights_ = [w[0] for w in result.weights]
        self.embedding_ = result.embeddings[0]
        self.resumed_ = []
        if checkpoints is not None:
            self.resumed_ = checkpoints.resumed
            checkpoints.clear()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_seeds(self, X, seeds: Sequence[int],
                  checkpoints: RunCheckpoints | None = None) -> MethodResult:
        """Train one network per seed on ``X``, together (stacked replicas); ``random_state``
        is not used.

        The protocol's training (:func:`dkm.protocol.experiments.run_seeds`): the
        estimator is left unfitted, and the result is returned whole, one
        row per seed. With ``pretrained``, it holds one replica per seed, in
        their order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite values; converted to float32.
        seeds : sequence of int
            One seed per replica: initialisation, k-means++ and minibatch order.
        checkpoints : RunCheckpoints, optional
            Where the training phases save their state and resume from
            (:mod:`dkm.checkpoints`); none by default.

        Returns
        -------
        MethodResult
            Labels, embeddings, centres, curves and weights, replica axis first.

        Raises
        ------
        ValueError
            For bad data, no seeds, or a ``pretrained`` that does not fit them.
        """
        X = check_array(X, dtype=np.float32, ensure_all_finite=True)
        self._check_n_samples(X)
        seeds = list(seeds)
        if not seeds or not all(isinstance(s, (int, np.integer)) for s in seeds):
            raise ValueError(f"seeds must be a non-empty sequence of integers, got {seeds!r}")
        return self._train(X, [int(s) for s in seeds], checkpoints)

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
        "lam": [_NON_NEGATIVE],
        "distance": [StrOptions(set(DISTANCES))],
        "alpha": [_NON_NEGATIVE],
        "finetune_epochs": [_POSITIVE_INT],
        "schedule": [Schedule, "array-like", None],
        "assignment": [StrOptions(set(ASSIGNMENTS))],
        "weight_decay": [_NON_NEGATIVE],
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
            return custom(self.schedule)
        if self.variant == "p":
            return constant(self.alpha, self.finetune_epochs)
        return paper_annealing()

    def _variant_fields(self) -> dict[str, Any]:
        return {"schedule": self._schedule(),
                "pretrain_epochs": _check_pretraining(self.variant, self.pretrain_epochs)}


def _variant_epochs(variants: dict, variant: str, epochs: int | None,
                    pretrain_epochs: int) -> dict[str, int]:
    """Training and pretraining epochs of a baseline's variant ``"p"`` or ``"np"``.

    ``epochs=None`` means the paper's value for the variant (``variants``, by suffix).
    """
    return {"epochs": variants[variant].epochs if epochs is None else int(epochs),
            "pretrain_epochs": _check_pretraining(variant, pretrain_epochs)}


#: The parameters that DCN and IDEC share beyond the base class's.
_BASELINE_CONSTRAINTS: dict = {
    **DeepClusteringEstimator._parameter_constraints,
    "variant": [StrOptions({"p", "np"})],
    "epochs": [_POSITIVE_INT, None],
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
        **_BASELINE_CONSTRAINTS,
        "lam": [_NON_NEGATIVE],
        "initial_count": [_POSITIVE],
        "update": [StrOptions(set(UPDATE_RULES))],
        "pull": [StrOptions(set(PULL_RULES))],
        "train_centroids": ["boolean"],
        "clustering_weight": [_POSITIVE],
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
        return _variant_epochs(DCN_VARIANTS, self.variant, self.epochs, self.pretrain_epochs)


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
        the dataset (``dkm.protocol.paper``).
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
    carry_optimizer_state : bool, default=False
        Continue pretraining's Adam moments; IDEC's code started a fresh Adam.
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
        "reconstruction": [StrOptions(set(RECONSTRUCTIONS))],
    }
    _config_class = IDECConfig
    _fit_function = staticmethod(fit_idec)

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
        carry_optimizer_state: bool = False,
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
        self.gamma = gamma
        self.update_interval = update_interval
        self.tol = tol
        self.epochs = epochs
        self.pretrain_epochs = pretrain_epochs
        self.kmeans_restarts = kmeans_restarts
        self.reconstruction = reconstruction
        self.carry_optimizer_state = carry_optimizer_state
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
        return _variant_epochs(IDEC_VARIANTS, self.variant, self.epochs, self.pretrain_epochs)
