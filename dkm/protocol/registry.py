"""The registry of methods: every method the protocol runs or reads, declared as data.

A method is declared once, as a :class:`Method`: its id, the paper's label, its
significance group, its trade-off, and what trains it, named by import path
(``"module:NAME"``), so that the registry holds it without importing the code
that implements it (TensorFlow loads when a run needs it). Every other module
that needs to know about methods asks the registry: the protocol (which estimator
or function trains a method, from which default configuration: :meth:`Method.train`),
record validation, the paper's labels, the significance groups of the paper's
tables and the command line.

The registry is filled here alone, on first use, from *declarations*: sequences of
:class:`Method` named by import path, read in this order:

1. the package's own methods, ``dkm.protocol.declarations`` (the paper's eight,
   DKM^pa and the runs of the authors' code: the one file of the package that
   writes method ids);
2. the entry points of the group ``dkm.methods`` (:data:`ENTRY_POINT_GROUP`) of
   the installed distributions, in the order :mod:`importlib.metadata` finds
   them: this package's ``book`` (the book's methods, ``dkm.book.declarations``)
   and those of any package a user installs;
3. plugins, named as a command runs (``python -m dkm ... --plugin MODULE``:
   :func:`load_plugins`).

A declaration is ``"module:NAME"``, a sequence of :class:`Method`, or a module,
whose ``METHODS`` it then is (an entry point names either the same way). A module may
declare ``MODELS`` too: estimators, by import path, whose configuration classes extend a
method's with switches of a study (the book's ablations); a configuration of such a class
is trained by its estimator (:func:`extending_models`, :meth:`Method.make_estimator`). Importing
a module registers nothing: the registry reads declarations, so what a process
knows of methods does not depend on what it imported before. An id is declared
once; a plugin that declares one again is refused, an entry point that does is
left out with a warning, and only the package declares the paper's methods.

A method's own module, for example a Gaussian mixture on the pretrained
autoencoder's embedding (``my_methods.py``), declares::

    from dkm.protocol.registry import Method

    METHODS = (Method("ae-gmm", "AE-GMM", "gmm", pretrained=True, group=None, tradeoff=None,
                      in_paper=False, config="my_methods:GMM_CONFIG", embedding=True,
                      kmeans_on_embedding=False, fit="my_methods:fit_gmm"),)

beside its configuration and fit function; ``python -m dkm run --plugin my_methods
--method ae-gmm ...`` then runs it (the README's example is complete).

This module imports nothing heavy, so that labels and groups are available
without TensorFlow.
"""
from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Iterator, Mapping, Set as AbstractSet
from dataclasses import dataclass
from importlib import import_module, metadata
from types import ModuleType
from typing import Any, Literal, Sequence

from dkm.reproducibility import pin_reproducible_cache_sizes, share_compiled_epochs

__all__ = ["Method", "METHODS", "PAPER_METHODS", "ENTRY_POINT_GROUP", "GroupMembers", "Labels",
           "available_methods", "extending_models", "get", "ids", "load_plugins", "plugins"]

Group = Literal["pretrained", "not pretrained"]

#: The entry-point group of the distributions that declare methods (``pyproject.toml``:
#: ``[project.entry-points."dkm.methods"]``).
ENTRY_POINT_GROUP = "dkm.methods"

#: The package's own declarations, read first.
_PACKAGE_DECLARATIONS = "dkm.protocol.declarations"


@dataclass(frozen=True)
class Method:
    """The declaration of one method.

    Attributes
    ----------
    id : str
        Its id (``"dkm-p"``), as records and the command line write it.
    label : str
        The paper's label (``"DKM^p"``); ``^`` and ``_`` mark super- and subscripts.
    family : str
        The algorithm: its objective and its configuration class; ``"km"``, ``"dcn"``,
        ``"idec"`` or ``"dkm"`` for the package's methods, a name of its own for another
        algorithm.
    pretrained : bool
        Whether training starts from the shared autoencoder pretraining.
    group : {"pretrained", "not pretrained"} or None
        The group whose best mean defines a significance mark in the paper's
        tables (bold, underlined); KM belongs to neither.
    tradeoff : str or None
        The name of its trade-off hyperparameter in records and in the paper (``"lambda"``
        for DCN and DKM, ``"gamma"`` for IDEC); None for a method without one.
    in_paper : bool
        One of the paper's eight protocol methods.
    config : str
        ``"module:NAME"`` of its default configuration, or ``"module:NAME[key]"``
        for an entry of a dict of variants.
    embedding : bool
        Whether it learns an embedding of the data (KM clusters the raw data).
    kmeans_on_embedding : bool
        Whether the protocol also runs k-means on its final embedding (the
        supplement's k-Means-friendliness); AE-KM's own result is that already.
    estimator : str or None
        ``"module:Class"`` of the scikit-learn estimator that trains it (a
        :class:`dkm.methods.estimator.DeepClusteringEstimator`), for the deep methods.
    variant : str or None
        The estimator's ``variant`` parameter (``"p"`` for ``"dkm-p"``).
    fit : str or None
        ``"module:function"`` that trains a method without an estimator (the
        k-means baselines): ``fit(X, n_clusters, seeds, config, loop, pretrained=None)``.
    paper_method : str or None
        For another implementation of one of the paper's methods (the DKM
        authors' DCN): that method's id, whose reported figures and λ/γ it
        takes and whose protocol runs it is compared with; None otherwise.
    runner : str or None
        For a method the package does not train (the authors' own code): the
        command outside the package that does and writes its records.
    tradeoff_field : str or None
        The field of its configuration that holds the trade-off, where it is not named
        ``tradeoff`` (DKM's and DCN's ``lam``, recorded as ``"lambda"``).
    """

    id: str
    label: str
    family: str
    pretrained: bool
    group: Group | None
    tradeoff: str | None
    in_paper: bool
    config: str
    embedding: bool
    kmeans_on_embedding: bool
    estimator: str | None = None
    variant: str | None = None
    fit: str | None = None
    paper_method: str | None = None
    runner: str | None = None
    tradeoff_field: str | None = None

    def __post_init__(self) -> None:
        if [self.estimator, self.fit, self.runner].count(None) != 2:
            raise ValueError(f"{self.id}: give exactly one of an estimator, a fit function and "
                             "a runner")
        if (self.estimator is None) != (self.variant is None):
            raise ValueError(f"{self.id}: an estimator needs its variant, and only it has one")
        if self.in_paper and self.paper_method is not None:
            raise ValueError(f"{self.id} is one of the paper's methods: it implements no other")
        if self.tradeoff is None and self.tradeoff_field is not None:
            raise ValueError(f"{self.id}: a tradeoff_field needs the tradeoff it holds")

    @property
    def reported_as(self) -> str | None:
        """The id of the paper's method whose figures this one is compared with (None: none)."""
        return self.id if self.in_paper else self.paper_method

    @property
    def reported_label(self) -> str | None:
        """The label of the paper's method whose figures this one is compared with (None: none).

        ``"DCN^p"`` for the DKM authors' DCN^p, whose own label is ``"DCN^p (authors)"``.
        """
        return None if self.reported_as is None else get(self.reported_as).label

    @property
    def config_field(self) -> str | None:
        """The configuration field holding the trade-off (``"lam"``, ``"gamma"``): its
        :attr:`tradeoff_field`, else the field named as the trade-off."""
        return self.tradeoff_field or self.tradeoff

    def default_config(self) -> Any:
        """The method's default configuration (imports TensorFlow)."""
        return _load(self.config)

    def make_estimator(self, config: Any, loop: Any, n_clusters: int,
                       pretrained: Any = None) -> Any:
        """The estimator that trains ``config`` with the loop settings ``loop``: the method's,
        or for a configuration of a declared model's class (a study's switches), that model.

        See :meth:`dkm.methods.estimator.DeepClusteringEstimator.from_config` (imports
        TensorFlow).

        Raises
        ------
        ValueError
            For a method without an estimator (KM, AE-KM), or a configuration of a class
            that neither the method's estimator nor a declared model trains.
        """
        if self.estimator is None:
            raise ValueError(f"{self.id} has no estimator: {self.fit or self.runner} trains it")
        estimator = _load(self.estimator)
        if type(config) is not estimator._config_class:
            estimator = next((model for model in extending_models(estimator._config_class)
                              if model._config_class is type(config)), estimator)
        return estimator.from_config(config, loop, n_clusters, variant=self.variant,
                                     pretrained=pretrained)

    def train(self, X: Any, n_clusters: int, seeds: Sequence[int], config: Any, loop: Any,
              pretrained: Any = None) -> Any:
        """Train one replica per seed with ``config``; the protocol's one route to a method.

        Parameters
        ----------
        X : numpy.ndarray
            ``(N, d)`` data.
        n_clusters : int
            Number of clusters ``K``.
        seeds : sequence of int
            One seed per replica, trained together.
        config : object
            The method's configuration (:meth:`default_config`, changed).
        loop : LoopConfig
            Settings of the shared training loop.
        pretrained : Pretrained, optional
            The shared pretraining of these seeds; computed when needed and None.

        Returns
        -------
        MethodResult
            The deep methods' through their estimator
            (:meth:`dkm.methods.estimator.DeepClusteringEstimator.fit_seeds`), the
            k-means baselines' through their fit function.

        Notes
        -----
        The protocol's runs opt into :mod:`dkm.reproducibility` for the whole process: the
        matrix products' cache sizes pinned where the process computes in the reproducible
        arithmetic (a Dask worker started in it, say), and one compiled epoch per distinct
        graph shared between trainers (the numbers are the same either way).
        """
        if self.runner is not None:
            raise ValueError(f"{self.id} is not trained by the package: {self.runner} runs it")
        pin_reproducible_cache_sizes()
        share_compiled_epochs()
        if self.estimator is None:
            return _load(self.fit)(X, n_clusters, list(seeds), config, loop, pretrained=pretrained)
        return self.make_estimator(config, loop, n_clusters, pretrained).fit_seeds(
            X, seeds, loop.checkpoints, loop.layout)


_MISSING = object()


def _load(target: str) -> Any:
    """The object named ``"module:NAME"``, or the entry ``key`` of the one named
    ``"module:NAME[key]"``.

    Raises
    ------
    ImportError
        When the module cannot be imported or has no ``NAME``.
    """
    module, name = target.split(":")
    key = None
    if name.endswith("]"):
        name, key = name[:-1].split("[")
    value = getattr(import_module(module), name, _MISSING)
    if value is _MISSING:
        raise ImportError(f"cannot import {name} from {module}")
    return value if key is None else value[key]


class _Registry:
    """The declared methods by id, each with where it was declared, filled on first use."""

    def __init__(self) -> None:
        self._methods: dict[str, Method] = {}
        self._models: list[str] = []
        self._sources: dict[str, str] = {}
        self._plugins: list[str] = []
        self._loaded = False

    def methods(self) -> dict[str, Method]:
        """Every declared method by id: the package's, then the entry points', then the
        plugins' loaded so far."""
        if not self._loaded:
            self._add(import_module(_PACKAGE_DECLARATIONS), "the package", package=True)
            self._loaded = True
            for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
                source = f"the entry point {entry_point.name} = {entry_point.value}"
                try:
                    self._add(entry_point.load(), source)
                except Exception as error:  # an installed package must not stop every command
                    warnings.warn(f"{source} (group {ENTRY_POINT_GROUP}) is left out: {error}",
                                  RuntimeWarning, stacklevel=4)
        return self._methods

    def load_plugin(self, name: str) -> tuple[Method, ...]:
        """Import the plugin ``name`` and add its declarations (none when loaded already)."""
        self.methods()
        if name in self._plugins:
            return ()
        declared = _load(name) if ":" in name else import_module(name)
        methods = self._add(declared, f"the plugin {name}")
        self._plugins.append(name)
        return methods

    def plugins(self) -> tuple[str, ...]:
        return tuple(self._plugins)

    def models(self) -> tuple[str, ...]:
        """The declared models' import paths, in the order they were declared."""
        self.methods()
        return tuple(self._models)

    def _add(self, declared: Any, source: str, package: bool = False) -> tuple[Method, ...]:
        """Add the methods of a declaration (a sequence, or a module's ``METHODS``), all or
        none; ``package``: the package's own, the only ones that may be the paper's.

        Raises
        ------
        ValueError
            For something else than methods, an id declared already (here or
            earlier), or a method of the paper outside the package's declarations.
        """
        models: tuple[str, ...] = ()
        if isinstance(declared, ModuleType):
            if not hasattr(declared, "METHODS"):
                raise ValueError(f"{source}: module {declared.__name__} declares no METHODS")
            models = tuple(getattr(declared, "MODELS", ()))
            if not all(isinstance(model, str) and ":" in model for model in models):
                raise ValueError(f"{source}: MODELS must be import paths 'module:Class', got "
                                 f"{models!r}")
            declared = declared.METHODS
        if not isinstance(declared, (tuple, list)):
            raise ValueError(f"{source} declares {declared!r}, not a sequence of methods")
        methods = tuple(declared)
        for method in methods:
            if not isinstance(method, Method):
                raise ValueError(f"{source} declares {method!r}, not a "
                                 "dkm.protocol.registry.Method")
            if method.id in self._methods:
                raise ValueError(f"{source} declares the method {method.id!r}, which "
                                 f"{self._sources[method.id]} declares already")
            if method.in_paper and not package:
                raise ValueError(f"{source} declares {method.id!r} as one of the paper's "
                                 "methods; only the package declares those")
        ids = [method.id for method in methods]
        if len(set(ids)) != len(ids):
            raise ValueError(f"{source} declares an id twice: {ids}")
        for method in methods:
            self._methods[method.id] = method
            self._sources[method.id] = source
        self._models.extend(model for model in models if model not in self._models)
        return methods


_REGISTRY = _Registry()


class _Methods(Mapping):
    """Method id -> :class:`Method`, of every method declared when asked."""

    def __getitem__(self, method: str) -> Method:
        return _REGISTRY.methods()[method]

    def __iter__(self) -> Iterator[str]:
        return iter(_REGISTRY.methods())

    def __len__(self) -> int:
        return len(_REGISTRY.methods())

    def __repr__(self) -> str:
        return f"METHODS({', '.join(self)})"


#: Every declared method, by id: the package's (the paper's eight in the order of its
#: tables, then the others), then those of the entry points, then the plugins' loaded so far.
METHODS: Mapping[str, Method] = _Methods()


def __getattr__(name: str) -> Any:
    # PAPER_METHODS reads the declarations on first use
    if name == "PAPER_METHODS":
        return _paper_methods()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _paper_methods() -> tuple[str, ...]:
    """The paper's eight protocol methods, in the order of its tables (:data:`PAPER_METHODS`)."""
    return tuple(m.id for m in METHODS.values() if m.in_paper)


class Labels(Mapping):
    """Method id -> the paper's label, of every method declared when asked."""

    def __getitem__(self, method: str) -> str:
        return METHODS[method].label

    def __iter__(self) -> Iterator[str]:
        return iter(METHODS)

    def __len__(self) -> int:
        return len(METHODS)


class GroupMembers(AbstractSet):
    """The ids of the methods of a significance group (:attr:`Method.group`), of every method
    declared when asked."""

    def __init__(self, group: Group) -> None:
        self.group = group

    def _ids(self) -> frozenset[str]:
        return frozenset(m.id for m in METHODS.values() if m.group == self.group)

    def __contains__(self, method: object) -> bool:
        return method in self._ids()

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids())

    def __len__(self) -> int:
        return len(self._ids())

    def __repr__(self) -> str:
        return f"GroupMembers({self.group!r}: {sorted(self._ids())})"


def ids() -> tuple[str, ...]:
    """Every method id, in the order of :data:`METHODS`."""
    return tuple(METHODS)


def available_methods() -> tuple[str, ...]:
    """Ids of the methods the package trains (every entry without a :attr:`Method.runner`)."""
    return tuple(m.id for m in METHODS.values() if m.runner is None)


def load_plugins(names: Iterable[str]) -> tuple[Method, ...]:
    """Import each plugin and add the methods it declares to :data:`METHODS`.

    Parameters
    ----------
    names : iterable of str
        Each a module whose ``METHODS`` is a sequence of :class:`Method`, or
        ``"module:NAME"`` of such a sequence; importable from ``sys.path`` (the
        current directory, for ``python -m dkm``, and ``PYTHONPATH``). A plugin
        loaded already is not loaded again.

    Returns
    -------
    tuple of Method
        The methods added, in order.

    Raises
    ------
    ImportError
        When a module cannot be imported.
    ValueError
        When a plugin declares something else than methods, an id declared
        already, or one of the paper's methods.
    """
    return tuple(method for name in names for method in _REGISTRY.load_plugin(name))


def plugins() -> tuple[str, ...]:
    """The plugins loaded in this process (:func:`load_plugins`), in order: what another
    process (a Dask worker) loads to know the same methods."""
    return _REGISTRY.plugins()


def extending_models(config_class: type) -> tuple[type, ...]:
    """The declared models (estimator classes) whose configuration class extends
    ``config_class``, in the order declared; imports them (and TensorFlow).

    A study's switches are fields of such a class, which the protocol's configuration then
    takes (:func:`dkm.methods.config.with_overrides`), and its estimator trains.
    """
    models = (_load(path) for path in _REGISTRY.models())
    return tuple(model for model in models
                 if issubclass(model._config_class, config_class)
                 and model._config_class is not config_class)


def get(method: str) -> Method:
    """The declaration of ``method``.

    Raises
    ------
    ValueError
        For an undeclared id, naming the declared ones and how to declare another.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose among {', '.join(METHODS)} (a "
                         "method of your own comes in with --plugin MODULE or an entry point "
                         f"of the group {ENTRY_POINT_GROUP})")
    return METHODS[method]
