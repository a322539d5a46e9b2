"""The methods the package runs, each described once.

Every other module that needs to know about methods derives it from
:data:`METHODS`: the protocol (which function trains a method, from which
default configuration, with which trade-off), record validation, the paper's
labels, the significance groups of the paper's tables, and the command line.
Adding a method is one :class:`Method` entry here (plus its objective and
``fit`` function). This module imports nothing heavy, so that labels and groups
are available without TensorFlow.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from types import MappingProxyType
from typing import Any, Callable, Literal, Mapping

__all__ = ["Method", "METHODS", "PAPER_METHODS", "get", "ids"]

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
    family : {"km", "dcn", "idec", "dkm"}
        The algorithm: its objective and its configuration class.
    pretrained : bool
        Whether training starts from the shared autoencoder pretraining.
    group : {"pretrained", "not pretrained"} or None
        The group whose best mean defines a significance mark in the paper's
        tables (bold, underlined); KM belongs to neither.
    tradeoff : {"lambda", "gamma"} or None
        The name of its trade-off hyperparameter in records and in the paper.
    in_paper : bool
        One of the paper's eight protocol methods.
    fit : str
        ``"module:function"`` that trains it.
    config : str
        ``"module:NAME"`` of its default configuration, or ``"module:NAME[key]"``
        for an entry of a dict of variants.
    kmeans_on_embedding : bool
        Whether the protocol also runs k-means on its final embedding (the
        supplement's k-Means-friendliness); AE-KM's own result is that already.
    """

    id: str
    label: str
    family: Family
    pretrained: bool
    group: Group | None
    tradeoff: Literal["lambda", "gamma"] | None
    in_paper: bool
    fit: str
    config: str
    kmeans_on_embedding: bool

    @property
    def config_field(self) -> str | None:
        """The configuration field holding the trade-off (``"lam"``, ``"gamma"``)."""
        return {"lambda": "lam", "gamma": "gamma", None: None}[self.tradeoff]

    def fit_function(self) -> Callable[..., Any]:
        """The function that trains the method (imports TensorFlow)."""
        module, name = self.fit.split(":")
        return getattr(import_module(module), name)

    def default_config(self) -> Any:
        """The method's default configuration (imports TensorFlow)."""
        module, name = self.config.split(":")
        key = None
        if name.endswith("]"):
            name, key = name[:-1].split("[")
        value = getattr(import_module(module), name)
        return value if key is None else value[key]


def _deep(id: str, label: str, family: Family, pretrained: bool, in_paper: bool = True) -> Method:
    tradeoff = "gamma" if family == "idec" else "lambda"
    return Method(id, label, family, pretrained, "pretrained" if pretrained else "not pretrained",
                  tradeoff, in_paper, f"dkm.methods.{family}:fit_{family}",
                  f"dkm.methods.{family}:{family.upper()}_VARIANTS[{id}]", True)


#: Every method, by id, in the order of the paper's tables.
METHODS: Mapping[str, Method] = MappingProxyType({m.id: m for m in (
    Method("km", "KM", "km", False, None, None, True, "dkm.methods.km:fit_km",
           "dkm.methods.km:KM_CONFIG", False),
    Method("ae-km", "AE-KM", "km", True, "pretrained", None, True, "dkm.methods.km:fit_aekm",
           "dkm.methods.km:AEKM_CONFIG", False),
    _deep("dcn-np", "DCN^np", "dcn", False),
    _deep("dcn-p", "DCN^p", "dcn", True),
    _deep("idec-np", "IDEC^np", "idec", False),
    _deep("idec-p", "IDEC^p", "idec", True),
    _deep("dkm-a", "DKM^a", "dkm", False),
    _deep("dkm-p", "DKM^p", "dkm", True),
    _deep("dkm-pa", "DKM^pa", "dkm", True, in_paper=False),
)})

#: The paper's eight protocol methods, in the order of its tables.
PAPER_METHODS: tuple[str, ...] = tuple(m.id for m in METHODS.values() if m.in_paper)


def ids() -> tuple[str, ...]:
    """Every method id, in the order of :data:`METHODS`."""
    return tuple(METHODS)


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
