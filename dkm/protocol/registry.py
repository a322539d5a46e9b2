"""The methods the package runs, each described once.

Every other module that needs to know about methods derives it from
:data:`METHODS`: the protocol (which estimator or function trains a method,
from which default configuration, with which trade-off: :meth:`Method.train`),
record validation, the paper's labels, the significance groups of the paper's
tables, and the command line. The method ids are written here and nowhere else
in the package's code (the paper's shipped JSON aside). Adding a method is one
:class:`Method` entry here (plus its objective, configuration and estimator or
``fit`` function). This module imports nothing heavy, so that labels and
groups are available without TensorFlow.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from types import MappingProxyType
from collections.abc import Mapping, Set as AbstractSet
from typing import Any, Literal, Sequence

__all__ = ["Method", "METHODS", "PAPER_METHODS", "GroupMembers", "Labels", "available_methods",
           "get", "ids", "register"]

Family = Literal["km", "dcn", "idec", "dkm"]
Group = Literal["pretrained", "not pretrained"]


@dataclass(frozen=True)
class Method:
    """One method of the package.

    Attributes
    ----------
    id : str
        The package's id (``"dkm-p"``), as records and the command line write it.
    label : str
        The paper's label (``"DKM^p"``); ``^`` and ``_`` mark super- and subscripts.
    family : str
        The algorithm: its objective and its configuration class; ``"km"``, ``"dcn"``,
        ``"idec"`` or ``"dkm"`` for the package's methods.
    pretrained : bool
        Whether training starts from the shared autoencoder pretraining.
    group : {"pretrained", "not pretrained"} or None
        The group whose best mean defines a significance mark in the paper's
        tables (bold, underlined); KM belongs to neither.
    tradeoff : {"lambda", "gamma"} or None
        The name of its trade-off hyperparameter in records and in the paper.
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
    """

    id: str
    label: str
    family: Family | str
    pretrained: bool
    group: Group | None
    tradeoff: Literal["lambda", "gamma"] | None
    in_paper: bool
    config: str
    embedding: bool
    kmeans_on_embedding: bool
    estimator: str | None = None
    variant: str | None = None
    fit: str | None = None
    paper_method: str | None = None
    runner: str | None = None

    def __post_init__(self) -> None:
        if [self.estimator, self.fit, self.runner].count(None) != 2:
            raise ValueError(f"{self.id}: give exactly one of an estimator, a fit function and "
                             "a runner")
        if (self.estimator is None) != (self.variant is None):
            raise ValueError(f"{self.id}: an estimator needs its variant, and only it has one")
        if self.in_paper and self.paper_method is not None:
            raise ValueError(f"{self.id} is one of the paper's methods: it implements no other")

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
        """The configuration field holding the trade-off (``"lam"``, ``"gamma"``)."""
        return {"lambda": "lam", "gamma": "gamma", None: None}[self.tradeoff]

    def default_config(self) -> Any:
        """The method's default configuration (imports TensorFlow)."""
        module, name = self.config.split(":")
        key = None
        if name.endswith("]"):
            name, key = name[:-1].split("[")
        value = getattr(import_module(module), name)
        return value if key is None else value[key]

    def make_estimator(self, config: Any, loop: Any, n_clusters: int,
                       pretrained: Any = None) -> Any:
        """The estimator that trains ``config`` with the loop settings ``loop``.

        See :meth:`dkm.methods.estimator.DeepClusteringEstimator.from_config` (imports
        TensorFlow).

        Raises
        ------
        ValueError
            For a method without an estimator (KM, AE-KM).
        """
        if self.estimator is None:
            raise ValueError(f"{self.id} has no estimator: {self.fit or self.runner} trains it")
        return _load(self.estimator).from_config(config, loop, n_clusters, variant=self.variant,
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
        """
        if self.runner is not None:
            raise ValueError(f"{self.id} is not trained by the package: {self.runner} runs it")
        if self.estimator is None:
            return _load(self.fit)(X, n_clusters, list(seeds), config, loop, pretrained=pretrained)
        return self.make_estimator(config, loop, n_clusters, pretrained).fit_seeds(
            X, seeds, loop.checkpoints, loop.layout)


def _load(target: str) -> Any:
    """The object named ``"module:NAME"``."""
    module, name = target.split(":")
    return getattr(import_module(module), name)


#: The estimator class of each deep family.
_ESTIMATORS: Mapping[str, str] = {"dcn": "DCN", "idec": "IDEC", "dkm": "DeepKMeans"}


def _deep(id: str, label: str, family: Family, pretrained: bool, in_paper: bool = True) -> Method:
    # the configuration and the estimator's variant are the family's variant named by the id's
    # suffix ("dkm-pa": "pa")
    variant = id.removeprefix(f"{family}-")
    return Method(
        id, label, family, pretrained, group="pretrained" if pretrained else "not pretrained",
        tradeoff="gamma" if family == "idec" else "lambda", in_paper=in_paper,
        config=f"dkm.methods.{family}:{family.upper()}_VARIANTS[{variant}]",
        embedding=True, kmeans_on_embedding=True,
        estimator=f"dkm.methods.{family}:{_ESTIMATORS[family]}", variant=variant,
    )


#: The paper's eight methods, in the order of its tables.
_PAPER_ENTRIES: Mapping[str, Method] = {m.id: m for m in (
    Method("km", "KM", "km", False, group=None, tradeoff=None, in_paper=True,
           config="dkm.methods.km:KM_CONFIG", embedding=False, kmeans_on_embedding=False,
           fit="dkm.methods.km:fit_km"),
    Method("ae-km", "AE-KM", "km", True, group="pretrained", tradeoff=None, in_paper=True,
           config="dkm.methods.km:AEKM_CONFIG", embedding=True, kmeans_on_embedding=False,
           fit="dkm.methods.km:fit_aekm"),
    _deep("dcn-np", "DCN^np", "dcn", False),
    _deep("dcn-p", "DCN^p", "dcn", True),
    _deep("idec-np", "IDEC^np", "idec", False),
    _deep("idec-p", "IDEC^p", "idec", True),
    _deep("dkm-a", "DKM^a", "dkm", False),
    _deep("dkm-p", "DKM^p", "dkm", True),
)}


def _authors_code(paper_id: str) -> Method:
    """The paper's method ``paper_id`` as the authors' own code trains it."""
    paper_method = _PAPER_ENTRIES[paper_id]
    return Method(
        f"{paper_id}-authors-code", f"{paper_method.label} (authors' code)", paper_method.family,
        paper_method.pretrained, group=paper_method.group, tradeoff=paper_method.tradeoff,
        in_paper=False, config=paper_method.config, embedding=paper_method.embedding,
        kmeans_on_embedding=False, paper_method=paper_id, runner="benchmarks/authors_code.py",
    )


_METHODS: dict[str, Method] = {m.id: m for m in (
    *_PAPER_ENTRIES.values(),
    _deep("dkm-pa", "DKM^pa", "dkm", True, in_paper=False),
    # the authors' own TensorFlow 1 code, run by benchmarks/authors_code.py from a clone of it
    *(_authors_code(paper_id) for paper_id in ("ae-km", "dcn-np", "dcn-p", "dkm-a", "dkm-p")),
)}

#: Every method, by id: the paper's eight in the order of its tables, then the others, then
#: those added by :func:`register`.
METHODS: Mapping[str, Method] = MappingProxyType(_METHODS)

#: The paper's eight protocol methods, in the order of its tables.
PAPER_METHODS: tuple[str, ...] = tuple(m.id for m in METHODS.values() if m.in_paper)


class Labels(Mapping):
    """Method id -> the paper's label, of every method the registry holds when asked
    (those :func:`register` adds included)."""

    def __getitem__(self, method: str) -> str:
        return METHODS[method].label

    def __iter__(self):
        return iter(METHODS)

    def __len__(self) -> int:
        return len(METHODS)


class GroupMembers(AbstractSet):
    """The ids of the methods of a significance group (:attr:`Method.group`), of every method
    the registry holds when asked."""

    def __init__(self, group: Group) -> None:
        self.group = group

    def _ids(self) -> frozenset[str]:
        return frozenset(m.id for m in METHODS.values() if m.group == self.group)

    def __contains__(self, method: object) -> bool:
        return method in self._ids()

    def __iter__(self):
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


def register(method: Method) -> Method:
    """Add a method declared outside the package, so that the protocol can run it.

    Its module declares its configuration and its fit function (or its estimator) as for
    the package's own methods; for example, a Gaussian mixture on the pretrained embedding::

        register(Method("ae-gmm", "AE-GMM", "gmm", True, group=None, tradeoff=None,
                        in_paper=False, config="my_module:GMM_CONFIG", embedding=True,
                        kmeans_on_embedding=False, fit="my_module:fit_gmm"))

    Returns
    -------
    Method
        ``method``, now in :data:`METHODS`.

    Raises
    ------
    ValueError
        If a method of the same id is there already.
    """
    if method.id in _METHODS:
        raise ValueError(f"a method {method.id!r} is registered already")
    _METHODS[method.id] = method
    return method


def get(method: str) -> Method:
    """The entry of ``method``.

    Raises
    ------
    ValueError
        For an unknown id, naming the known ones.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose among {', '.join(METHODS)}")
    return METHODS[method]
