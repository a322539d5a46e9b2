"""What the paper reports: its figures, seeds, optimal trade-offs and datasets.

The figures of the paper and its supplement ship with the package as
``dkm/protocol/paper/reported_results.json`` (a verbatim copy of the project's
transcription of the tables). This module loads that file once and answers
questions about it in the package's own vocabulary.

Names
-----
The paper writes models as ``KM``, ``AE-KM``, ``DCN^np``, ``DCN^p``,
``IDEC^np``, ``IDEC^p``, ``DKM^a`` and ``DKM^p``; the package calls them
``km``, ``ae-km``, ``dcn-np``, ``dcn-p``, ``idec-np``, ``idec-p``, ``dkm-a``
and ``dkm-p`` (:data:`METHOD_LABELS`; ``dkm-pa``, pretraining followed by
annealing, appears only in a commented-out part of the supplement and is
labelled ``DKM^pa``). Two decorations of a label occur in the supplement:

* a distance suffix, ``DKM^a_ee`` / ``DKM^p_ee`` (f and g Euclidean, the
  paper's setting) and ``DKM^a_ce`` / ``DKM^p_ce`` (f the cosine distance);
* a ``" + KM"`` suffix in the k-Means-friendliness table, ``DCN^p + KM``:
  k-means run on the final embedding of that method.

:func:`parse_model_label` turns any such label into a :class:`ModelRef`, and
:func:`model_label` goes back. Datasets are ``MNIST``, ``USPS``, ``20NEWS``
and ``RCV1`` in the paper and ``mnist``, ``usps``, ``20news`` and ``rcv1``
here (:data:`DATASET_LABELS`).

Units
-----
The paper's figures are percentages (mean and standard deviation over 10
seeded runs); the package's metrics are fractions. Multiply by 100 before
comparing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from dkm.data import PAPER_LABELS
from dkm.protocol import registry

__all__ = [
    "PAPER_SEEDS",
    "TRADEOFF_GRID",
    "SETUP",
    "METHOD_LABELS",
    "DATASET_LABELS",
    "DISTANCE_SUFFIXES",
    "TABLE_KEYS",
    "ModelRef",
    "model_label",
    "embedding_label",
    "AUTOENCODER_LABEL",
    "parse_model_label",
    "method_id",
    "dataset_id",
    "dataset_label",
    "reported",
    "reported_results",
    "tradeoff_name",
    "TRADEOFF_SYMBOLS",
    "optimal_tradeoff",
    "dataset_statistics",
]

#: The ten seeds of the authors' runs, in the order of their code.
PAPER_SEEDS: tuple[int, ...] = (8905, 9129, 291, 4012, 1256, 6819, 4678, 6971, 1362, 575)

#: The paper's line-search grid for λ and γ: {10^i, i = -4..3}.
TRADEOFF_GRID: tuple[float, ...] = tuple(10.0**i for i in range(-4, 4))

#: The experimental set-up the paper states (its Section 4.2 and the supplement): the
#: autoencoder's hidden layers, the minibatch, Adam's learning rate and β₁, β₂, the pretraining
#: epochs, each method's training epochs (by the paper's label, as it states them; the
#: registry maps a label to its method), the validation part of the split, the seeds per
#: cell and the grid of λ and γ.
SETUP: Mapping[str, Any] = MappingProxyType({
    "hidden_sizes": (500, 500, 2000),
    "batch_size": 256,
    "learning_rate": 1e-3,
    "adam_betas": (0.9, 0.999),
    "pretrain_epochs": 50,
    "epochs": MappingProxyType({"DKM^p": 100, "DKM^a": 200, "DCN^p": 50, "DCN^np": 200,
                                "IDEC^p": 50, "IDEC^np": 200}),
    "validation_fraction": 0.1,
    "seeds": 10,
    "tradeoff_grid": TRADEOFF_GRID,
})

#: Method id -> its label, of every declared method (:data:`dkm.protocol.registry.METHODS`).
METHOD_LABELS: Mapping[str, str] = registry.Labels()

#: Package dataset id -> the paper's label.
DATASET_LABELS: Mapping[str, str] = MappingProxyType(PAPER_LABELS)

#: The paper's name of the pretrained autoencoder's embedding in its figure of learned
#: representations (the embedding AE-KM clusters).
AUTOENCODER_LABEL = "AE"

#: Clustering distance f -> the suffix of the supplement's labels (``DKM^a_ce``).
DISTANCE_SUFFIXES: Mapping[str, str] = MappingProxyType({"euclidean": "ee", "cosine": "ce"})

#: Short table names used across the package -> table names in the JSON file.
TABLE_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "table1": "table1_kmeans_related",
        "table2": "table2_dkm_vs_idec",
        "ari1": "supp_ari_kmeans_related",
        "ari2": "supp_ari_dkm_vs_idec",
        "cosine": "supp_cosine_20news",
        "friendliness": "supp_kmeans_friendliness",
    }
)


_KMEANS_SUFFIX = " + KM"
# a method, its superscript, a qualifier in parentheses ("DCN^np (authors)"), a distance suffix
_LABEL_PATTERN = re.compile(
    r"^(?P<base>[A-Z-]+(?:\^[a-z]+)?(?: \([a-z][a-z' ]*\))?)(?:_(?P<suffix>[a-z]+))?$")
_DISTANCE_BY_SUFFIX = MappingProxyType({suffix: name for name, suffix in DISTANCE_SUFFIXES.items()})


def _method_ids() -> dict[str, str]:
    """The paper's label -> method id, of every declared method."""
    return {label: method for method, label in METHOD_LABELS.items()}


@dataclass(frozen=True)
class ModelRef:
    """One row of a paper table in the package's terms.

    Attributes
    ----------
    method : str
        Package method id, e.g. ``"dkm-p"``.
    distance : str or None
        ``"euclidean"`` or ``"cosine"`` when the label names it (``_ee`` /
        ``_ce``); ``None`` when it does not, which means the paper's default,
        Euclidean.
    kmeans_on_embedding : bool
        True for the ``" + KM"`` rows: k-means on the method's embedding.
    """

    method: str
    distance: str | None = None
    kmeans_on_embedding: bool = False

    @property
    def label(self) -> str:
        """The paper's label of this row."""
        return model_label(
            self.method, distance=self.distance, kmeans_on_embedding=self.kmeans_on_embedding
        )


def model_label(
    method: str, *, distance: str | None = None, kmeans_on_embedding: bool = False
) -> str:
    """The paper's label of a method, optionally with its distance and ``+ KM``.

    Parameters
    ----------
    method : str
        Package method id (a key of :data:`METHOD_LABELS`).
    distance : str, optional
        ``"euclidean"`` or ``"cosine"``: appends ``_ee`` or ``_ce``.
    kmeans_on_embedding : bool
        Append ``" + KM"``.

    Returns
    -------
    str
        For example ``model_label("dkm-a", distance="cosine") == "DKM^a_ce"``.
    """
    if method not in METHOD_LABELS:
        raise ValueError(f"unknown method {method!r}; expected one of {sorted(METHOD_LABELS)}")
    label = METHOD_LABELS[method]
    if distance is not None:
        if distance not in DISTANCE_SUFFIXES:
            raise ValueError(f"unknown distance {distance!r}; expected one of {sorted(DISTANCE_SUFFIXES)}")
        label = f"{label}_{DISTANCE_SUFFIXES[distance]}"
    return label + _KMEANS_SUFFIX if kmeans_on_embedding else label


def embedding_label(method: str) -> str:
    """The paper's name of a method's final embedding, as its figure of representations has it.

    AE-KM clusters the pretrained autoencoder's embedding without changing it,
    so its embedding is the autoencoder's, :data:`AUTOENCODER_LABEL` (``"AE"``);
    every other method with an embedding is named by its own label.

    Parameters
    ----------
    method : str
        Package method id.

    Returns
    -------
    str
        For example ``embedding_label("ae-km") == "AE"`` and
        ``embedding_label("dkm-p") == "DKM^p"``.

    Raises
    ------
    ValueError
        For an unknown method, or KM, which clusters the data themselves and
        has no embedding.
    """
    entry = registry.get(method)
    if entry.family != "km":
        return entry.label
    if not entry.pretrained:
        raise ValueError(f"{method} has no embedding: it clusters the data themselves")
    return AUTOENCODER_LABEL


def parse_model_label(label: str) -> ModelRef:
    """Read a paper label such as ``"DKM^p_ce"`` or ``"DCN^p + KM"``.

    Raises
    ------
    ValueError
        If the label names no known method or distance.
    """
    kmeans = label.endswith(_KMEANS_SUFFIX)
    core = label[: -len(_KMEANS_SUFFIX)] if kmeans else label
    match = _LABEL_PATTERN.match(core)
    method_ids = _method_ids()
    if match is None or match["base"] not in method_ids:
        raise ValueError(
            f"unknown model label {label!r}; expected one of {sorted(method_ids)}, "
            f"optionally followed by _ee/_ce and/or {_KMEANS_SUFFIX!r}"
        )
    suffix = match["suffix"]
    if suffix is not None and suffix not in _DISTANCE_BY_SUFFIX:
        raise ValueError(f"unknown distance suffix _{suffix} in {label!r}; expected _ee or _ce")
    distance = None if suffix is None else _DISTANCE_BY_SUFFIX[suffix]
    return ModelRef(method_ids[match["base"]], distance, kmeans)


def protocol_grid(dataset: str) -> dict[str, tuple[str, ...]]:
    """The methods the paper runs on ``dataset``, by clustering distance.

    The eight methods of Tables 1 and 2 with the Euclidean distance on every dataset, and the
    DKM variants of the supplement's cosine table with the cosine distance on the datasets
    that table reports (20NEWS).

    Returns
    -------
    dict of str to tuple of str
        ``"euclidean"`` to the paper's methods, and ``"cosine"`` to the methods of the cosine
        table where it reports ``dataset``.

    Examples
    --------
    >>> protocol_grid("20news")["cosine"]
    ('dkm-a', 'dkm-p')
    >>> "cosine" in protocol_grid("usps")
    False
    """
    grid: dict[str, tuple[str, ...]] = {"euclidean": tuple(registry.PAPER_METHODS)}
    rows = [row for row in reported_results()
            if row["table"] == TABLE_KEYS["cosine"] and dataset_id(row["dataset"]) == dataset]
    cosine = sorted({ref.method for ref in map(parse_model_label, (row["model"] for row in rows))
                     if ref.distance == "cosine"})
    if cosine:
        grid["cosine"] = tuple(cosine)
    return grid


def method_id(label: str) -> str:
    """The package method id of a paper label (decorations are ignored)."""
    return parse_model_label(label).method


def dataset_id(name: str) -> str:
    """The package dataset id of a paper dataset, given as label or id (any case)."""
    lowered = name.lower()
    if lowered not in DATASET_LABELS:
        raise ValueError(
            f"unknown paper dataset {name!r}; expected one of {list(DATASET_LABELS.values())}"
        )
    return lowered


def dataset_label(name: str) -> str:
    """The paper's label (``"USPS"``) of a dataset given as id or label."""
    return DATASET_LABELS[dataset_id(name)]


@cache
def _document() -> Mapping[str, Any]:
    """The parsed JSON file shipped with the package (read once)."""
    text = resources.files(__package__).joinpath("reported_results.json").read_text("utf-8")
    return json.loads(text)


@cache
def _index() -> Mapping[tuple[str, str, str, str], tuple[float, float, int]]:
    """(table, model label, dataset label, metric) -> (mean, std, runs)."""
    return MappingProxyType(
        {
            (row["table"], row["model"], row["dataset"], row["metric"]): (
                float(row["mean"]),
                float(row["std"]),
                int(row["runs"]),
            )
            for row in _document()["results"]
        }
    )


def reported_results() -> list[dict[str, Any]]:
    """Every figure of the paper as a list of fresh dicts.

    Each dict has the keys ``table`` (JSON table name, see
    :data:`TABLE_KEYS`), ``model`` (paper label), ``dataset`` (paper label),
    ``metric`` (``"ACC"``, ``"NMI"`` or ``"ARI"``), ``mean`` and ``std`` (in
    percent) and ``runs``.
    """
    return [dict(row) for row in _document()["results"]]


def _table_key(table: str) -> str:
    """Accept a short table name (``"table1"``) or a JSON table name."""
    if table in TABLE_KEYS:
        return TABLE_KEYS[table]
    if table in TABLE_KEYS.values():
        return table
    raise ValueError(
        f"unknown paper table {table!r}; expected one of {sorted(TABLE_KEYS)} "
        f"or {sorted(TABLE_KEYS.values())}"
    )


def reported(table: str, model: str, dataset: str, metric: str) -> tuple[float, float, int]:
    """A figure of the paper: ``(mean, std, runs)`` in percent.

    Parameters
    ----------
    table : str
        Short name (``"table1"``, ``"table2"``, ``"ari1"``, ``"ari2"``,
        ``"cosine"``, ``"friendliness"``) or the JSON name
        (``"table1_kmeans_related"``, ...).
    model : str
        The paper's label (``"DKM^p"``, ``"DKM^a_ce"``, ``"DCN^p + KM"``) or a
        package method id (``"dkm-p"``), which stands for its plain label (or,
        for another implementation of a paper's method, that method's:
        :attr:`dkm.protocol.registry.Method.reported_as`).
    dataset : str
        ``"USPS"`` or ``"usps"`` (any case).
    metric : str
        ``"acc"``, ``"nmi"`` or ``"ari"`` (any case).

    Returns
    -------
    tuple of (float, float, int)
        Mean and standard deviation in percent, and the number of runs.

    Raises
    ------
    ValueError
        If the paper reports no such figure.

    Examples
    --------
    >>> reported("table1", "DKM^p", "usps", "acc")
    (75.7, 1.3, 10)
    """
    key = (
        _table_key(table),
        _reported_label(model),
        dataset_label(dataset),
        metric.upper(),
    )
    if key not in _index():
        models = sorted({k[1] for k in _index() if k[0] == key[0]})
        metrics = sorted({k[3] for k in _index() if k[0] == key[0]})
        raise ValueError(
            f"the paper reports no {key[3]} of {key[1]!r} on {key[2]} in {key[0]}; "
            f"that table has the models {models} and the metrics {metrics}"
        )
    return _index()[key]


def _reported_label(model: str) -> str:
    """The paper's label under which a method id's figures are reported (a label: itself)."""
    if model not in METHOD_LABELS:
        return model
    return registry.get(model).reported_label or METHOD_LABELS[model]


#: The trade-off hyperparameters' symbols in the paper, by their record names.
TRADEOFF_SYMBOLS: Mapping[str, str] = MappingProxyType({"lambda": "λ", "gamma": "γ"})


def tradeoff_name(method: str) -> str:
    """``"lambda"`` for DCN and DKM, ``"gamma"`` for IDEC.

    Raises
    ------
    ValueError
        For ``km`` and ``ae-km``, which have no trade-off hyperparameter.
    """
    names = {m.id: m.tradeoff for m in registry.METHODS.values() if m.tradeoff is not None}
    if method not in names:
        raise ValueError(
            f"method {method!r} has no trade-off hyperparameter; "
            f"methods with one: {sorted(names)}"
        )
    return names[method]


_NO_DEFAULT: Any = object()


def optimal_tradeoff(method: str, dataset: str, default: Any = _NO_DEFAULT) -> Any:
    """The validation-optimal λ (DCN, DKM) or γ (IDEC) of the supplement.

    Parameters
    ----------
    method : str
        ``"dkm-a"``, ``"dkm-p"``, ``"dcn-p"``, ``"dcn-np"``, ``"idec-p"`` or
        ``"idec-np"``, or another implementation of one of them (the DKM
        authors' DCN: DCN's value).
    dataset : str
        One of the paper's datasets, as id or label.
    default : optional
        Returned where the paper gives no value (``math.nan``, ``None``);
        without it, that raises.

    Returns
    -------
    float
        For example ``optimal_tradeoff("dkm-p", "usps") == 1.0``.

    Raises
    ------
    ValueError
        If the paper gives no value for this method (``km``, ``ae-km``,
        ``dkm-pa``) or dataset, and no ``default`` is given.
    """
    try:
        by_model = _document()["optimal_tradeoff_hyperparameters"][tradeoff_name(method)]
        label = _reported_label(method)
        if label not in by_model:
            raise ValueError(
                f"the paper gives no optimal {tradeoff_name(method)} for {method!r}; "
                f"it gives one for {sorted(_method_ids()[m] for m in by_model)}"
            )
        return float(by_model[label][dataset_label(dataset)])
    except ValueError:
        if default is _NO_DEFAULT:
            raise
        return default


def dataset_statistics(dataset: str) -> dict[str, int | str]:
    """The paper's statistics of a dataset.

    Returns
    -------
    dict
        ``{"dataset": id, "samples": int, "classes": int, "dimensions": int}``;
        the images' dimensions are flattened (MNIST: 28 × 28 = 784).
    """
    name = dataset_id(dataset)
    stats = _document()["datasets"][DATASET_LABELS[name]]
    return {
        "dataset": name,
        "samples": int(stats["samples"]),
        "classes": int(stats["classes"]),
        "dimensions": int(stats["dims"]),
    }
