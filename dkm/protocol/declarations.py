"""The package's methods, declared: the one file of the package that writes method ids.

The registry (:mod:`dkm.protocol.registry`) reads :data:`METHODS` first, then the
declarations of the entry points and plugins. Each method names what trains it by
import path, so that this module imports nothing but :class:`dkm.protocol.registry.Method`.
:data:`LINE_SEARCHES` names the methods whose λ or γ the protocol's line searches vary.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from dkm.protocol.registry import Method


@dataclass(frozen=True)
class _Family:
    """What the methods of one deep family share: their module's estimator and their
    trade-off (its name in records, the configuration field that holds it)."""

    estimator: str
    tradeoff: str
    tradeoff_field: str


#: The package's deep families, each a module ``dkm.methods.<family>``.
_FAMILIES: Mapping[str, _Family] = MappingProxyType({
    "dcn": _Family("DCN", "lambda", "lam"),
    "idec": _Family("IDEC", "gamma", "gamma"),
    "dkm": _Family("DeepKMeans", "lambda", "lam"),
})


def _deep(id: str, label: str, family: str, pretrained: bool, in_paper: bool = True) -> Method:
    # the configuration and the estimator's variant are the family's variant named by the id's
    # suffix ("dkm-pa": "pa")
    variant = id.removeprefix(f"{family}-")
    declared = _FAMILIES[family]
    return Method(
        id, label, family, pretrained, group="pretrained" if pretrained else "not pretrained",
        tradeoff=declared.tradeoff, tradeoff_field=declared.tradeoff_field, in_paper=in_paper,
        config=f"dkm.methods.{family}:{family.upper()}_VARIANTS[{variant}]",
        embedding=True, kmeans_on_embedding=True,
        estimator=f"dkm.methods.{family}:{declared.estimator}", variant=variant,
    )


#: The paper's eight methods, in the order of its tables.
_PAPER: tuple[Method, ...] = (
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
)


def _authors_code(paper_method: Method) -> Method:
    """The paper's method as the authors' own code trains it."""
    return Method(
        f"{paper_method.id}-authors-code", f"{paper_method.label} (authors' code)",
        paper_method.family, paper_method.pretrained, group=paper_method.group,
        tradeoff=paper_method.tradeoff, tradeoff_field=paper_method.tradeoff_field,
        in_paper=False, config=paper_method.config,
        embedding=paper_method.embedding, kmeans_on_embedding=False,
        paper_method=paper_method.id, runner="benchmarks/authors_code.py",
    )


#: The package's methods: the paper's eight in the order of its tables, DKM^pa, and the
#: paper's methods that the authors' own TensorFlow 1 code trains (run by
#: benchmarks/authors_code.py from a clone of it).
METHODS: tuple[Method, ...] = (
    *_PAPER,
    _deep("dkm-pa", "DKM^pa", "dkm", True, in_paper=False),
    *(_authors_code(m) for m in _PAPER if m.id in ("ae-km", "dcn-np", "dcn-p", "dkm-a", "dkm-p")),
)

#: The line searches the results folder holds at full scale: the methods searched on each
#: dataset (store ``<dataset>-lambda.jsonl``), each on the first
#: :data:`dkm.protocol.experiments.LINE_SEARCH_SEEDS` of the paper's seeds.
LINE_SEARCHES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "usps": ("dkm-p", "dkm-a", "dcn-np", "dcn-p", "idec-np", "idec-p"),
    "usps-sharp": ("dkm-p",),
    "20news": ("dkm-p", "dkm-a"),
})
