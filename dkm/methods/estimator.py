"""The scikit-learn estimator every deep clustering method's estimator extends.

:class:`DeepClusteringEstimator` holds what every deep method shares (input
checks, seeding, the fitted attributes, ``predict`` and ``transform``); each
method's module configures it: :class:`dkm.methods.dkm.DeepKMeans` for the
paper's method, :class:`dkm.methods.dcn.DCN` and :class:`dkm.methods.idec.IDEC`
for the two deep baselines.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np
from sklearn.base import (BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin,
                          TransformerMixin, _fit_context)
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from dkm.checkpoints import RunCheckpoints, code_version, run_key
from dkm.losses import get_distance
from dkm.methods.common import LoopConfig, MethodResult, nearest_center
from dkm.methods.config import jsonable
from dkm.methods.parameters import (NON_NEGATIVE_INT, POSITIVE_INT, converted, declared,
                                    fill_docstring, flagged_values, loop_parameters,
                                    parameter)
from dkm.methods.pretraining import PAPER_PRETRAIN_EPOCHS, Pretrained
from dkm.methods.template import fit_deep_method
from dkm.replicas import LAYOUTS
from dkm.training import data_tensor, embed

_MAX_SEED = 2**31 - 1

__all__ = ["BASELINE_CONSTRAINTS", "DeepClusteringEstimator", "check_pretraining",
           "or_variants", "variant_epochs"]


def check_pretraining(variant: str, pretrain_epochs: int) -> int:
    """The pretraining epochs of ``variant``: none for ``"a"`` and ``"np"``, else at least one."""
    if variant in ("a", "np"):
        return 0
    if pretrain_epochs < 1:
        raise ValueError(f"pretrain_epochs must be a positive integer for variant {variant!r}, "
                         f"got {pretrain_epochs!r}")
    return int(pretrain_epochs)


@dataclass(kw_only=True, eq=False, repr=False)
@loop_parameters(LoopConfig)
class DeepClusteringEstimator(ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin,
                              BaseEstimator, ABC):
    """Shared machinery of the deep clustering estimators.

    The parameters are declared once, as the fields of a dataclass whose
    ``__init__`` keeps them unchanged, as scikit-learn requires: here those
    every estimator has (``n_clusters``, the only positional one, ``variant``,
    ``pretrain_epochs``, the loop's settings, each declared once in
    :class:`dkm.methods.common.LoopConfig`, and ``embedding_dim``, ``pretrained``,
    ``random_state`` and ``checkpoint_dir``, declared here with
    :func:`dkm.methods.parameters.parameter`: their constraints and docstring entries
    come from that declaration), in a subclass its own, keyword-only
    (``@dataclass(kw_only=True, eq=False, repr=False)``: scikit-learn's
    equality and representation are kept). A subclass also declares the
    constraints of its own parameters (added to :attr:`_parameter_constraints`),
    its configuration class (:attr:`_config_class`, a
    :class:`dkm.methods.template.DeepMethodConfig`: a field that is a parameter of
    the same name comes from it, the others keep their defaults, the paper's) and
    :meth:`_variant_fields`. scikit-learn checks every parameter against the
    constraints when ``fit`` starts; checks that involve two parameters are the
    subclasses' :meth:`_variant_fields`.

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
        Weights of the trained autoencoder (read-only arrays; copy one to change it).
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

    n_clusters: int = field(default=10, kw_only=False)
    variant: str = "p"
    pretrain_epochs: int = PAPER_PRETRAIN_EPOCHS
    embedding_dim: int | None = parameter(None, [POSITIVE_INT, None], """int, optional
        Embedding size; defaults to ``n_clusters`` as in the paper.""")
    pretrained: Pretrained | None = parameter(None, [Pretrained, None], """Pretrained, optional
        A pretraining to start from instead of computing one (variants with
        pretraining): :func:`dkm.methods.pretraining.load_or_pretrain` for the
        seed of ``random_state`` (or the seeds of :meth:`fit_seeds`), with
        ``pretrain_epochs`` epochs and the same loop settings, as KMeans takes
        an ``init`` array. The protocol shares one between its methods.""")
    random_state: int | np.random.RandomState | None = parameter(
        None, ["random_state"], """int, RandomState or None, default=None
        Seed of the initialisation and the minibatch order. The same int on
        the same data and machine gives identical results, bit for bit.""")
    checkpoint_dir: str | os.PathLike[str] | None = parameter(
        None, [str, os.PathLike, None], """str or path-like, optional
        Where :meth:`fit` saves its training state, every five minutes and at
        the end of each phase (:mod:`dkm.checkpoints`). Called again after an
        interruption, on the same data with the same parameters, ``fit``
        resumes from it and ends as if it had never stopped; the files are
        removed once it has finished. Needs an int ``random_state``.""")

    _parameter_constraints: ClassVar[dict] = {
        "n_clusters": [POSITIVE_INT],
        "pretrain_epochs": [NON_NEGATIVE_INT],
    }

    #: The configuration class of the method (:class:`dkm.methods.template.DeepMethodConfig`).
    _config_class: ClassVar[type]

    _distance_name: ClassVar[str] = "euclidean"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fill_docstring(cls)  # the shared parameters, at the docstring's {loop_parameters}

    @abstractmethod
    def _variant_fields(self) -> dict[str, Any]:
        """The configuration fields that the variant decides (epochs, schedule, ...)."""

    @classmethod
    def _config_parameters(cls) -> list[str]:
        """The configuration fields that are parameters of the estimator."""
        names = set(cls._get_param_names())
        return [f.name for f in dataclasses.fields(cls._config_class) if f.name in names]

    def _config(self) -> Any:
        """The configuration trained: the fields that are parameters from them, then the
        variant's; the others keep their defaults."""
        fields = {name: getattr(self, name) for name in self._config_parameters()}
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
        if type(config) is not cls._config_class:
            raise ValueError(f"{cls.__name__} trains a {cls._config_class.__name__}, "
                             f"got {type(config).__name__}")
        fields = {name: getattr(config, name) for name in cls._config_parameters()}
        settings = {f.name: getattr(loop, f.name) for f in declared(cls._loop_class)}
        estimator = cls(n_clusters, variant=variant, **fields, **settings,
                        pretrained=pretrained, random_state=random_state)
        estimator._validate_params()
        trained = estimator._config()
        if trained != config:
            differing = ", ".join(f"{f.name}={getattr(config, f.name)!r}"
                                  for f in dataclasses.fields(config)
                                  if getattr(config, f.name) != getattr(trained, f.name))
            raise ValueError(f"{cls.__name__}(variant={variant!r}) cannot train {differing}: "
                             f"it would train {trained}")
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

    def _loop(self, layout: str | None = None) -> LoopConfig:
        """The loop's settings: each declared setting from the parameter of its name."""
        values = {f.name: getattr(self, f.name) for f in declared(self._loop_class)}
        return self._loop_class(**converted(self._loop_class, values), layout=layout)

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
            "loop": flagged_values(loop, "identity"),
            "data": [list(X.shape), hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()],
            "pretrained": None if self.pretrained is None else self.pretrained.fingerprint(0),
        }
        return RunCheckpoints(Path(self.checkpoint_dir), run_key([json.dumps(run, sort_keys=True)]),
                              written_by=code_version())

    def _train(self, X: np.ndarray, seeds: list[int], checkpoints: RunCheckpoints | None = None,
               layout: str | None = None) -> MethodResult:
        """Train on validated data, one replica per seed."""
        config = self._config()
        self._check_pretrained(config, len(seeds), X.shape[1])
        loop = dataclasses.replace(self._loop(layout), checkpoints=checkpoints)
        return fit_deep_method(X, self.n_clusters, seeds, config, loop,
                               pretrained=self.pretrained, embedding_dim=self.embedding_dim)

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

        Trains as :meth:`fit_seeds` does for the seed of ``random_state``: on a CPU the
        same int seed on the same data gives the same bits, without TensorFlow's op
        determinism, which the fit leaves as it finds it (on a GPU, call
        ``tf.config.experimental.enable_op_determinism()`` first). With
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
    def fit_seeds(self, X, seeds: Sequence[int], checkpoints: RunCheckpoints | None = None,
                  layout: str | None = None) -> MethodResult:
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
        layout : {"stacked", "sequential"}, optional
            How the replicas run (by device when None:
            :func:`dkm.replicas.default_layout`); it does not change the result.

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
        if layout is not None and layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {', '.join(map(repr, LAYOUTS))} or None, "
                             f"got {layout!r}")
        return self._train(X, [int(s) for s in seeds], checkpoints, layout)

    def _embed(self, X: np.ndarray) -> np.ndarray:
        loop = self._loop()
        architecture = loop.architecture(self.n_features_in_, self.cluster_centers_.shape[1])
        weights = [w[None] for w in self.autoencoder_weights_]
        return embed(loop.autoencoder(architecture, [self.seed_], weights), data_tensor(X),
                     fixed_shape=True)

    def transform(self, X) -> np.ndarray:
        """Embeddings ``h(x)`` of ``X``, ``(n_samples, embedding_dim)``: a point's bits do not
        depend on the other points (:func:`dkm.training.embed`'s ``fixed_shape``); on the
        training data, the fit's own but for its last chunk of fewer than 1,024 points."""
        check_is_fitted(self)
        return self._embed(self._check_X(X, fitting=False))[0]

    def predict(self, X) -> np.ndarray:
        """The nearest cluster centre of each point's embedding."""
        check_is_fitted(self)
        embeddings = self._embed(self._check_X(X, fitting=False))
        distance = get_distance(self._distance_name)
        return nearest_center(embeddings, self.cluster_centers_[None], distance)[0]


def or_variants(variants: dict, variant: str, name: str, value: Any) -> Any:
    """``value``, or where it is None field ``name`` of ``variants[variant]``, the variant's."""
    return getattr(variants[variant], name) if value is None else value


def variant_epochs(variants: dict, variant: str, epochs: int | None,
                   pretrain_epochs: int) -> dict[str, int]:
    """Training and pretraining epochs of a baseline's variant ``"p"`` or ``"np"``.

    ``epochs=None`` means the paper's value for the variant (``variants``, by suffix).
    """
    return {"epochs": int(or_variants(variants, variant, "epochs", epochs)),
            "pretrain_epochs": check_pretraining(variant, pretrain_epochs)}


#: The parameters that DCN and IDEC share beyond the base class's.
BASELINE_CONSTRAINTS: dict = {
    **DeepClusteringEstimator._parameter_constraints,
    "variant": [StrOptions({"p", "np"})],
    "epochs": [POSITIVE_INT, None],
}
