"""A run's record: its schema, its configuration hash, its validation and its flat form.

Every run of the protocol (one method, one dataset, one seed, one set of
hyperparameters) produces one *record*, a plain JSON object; a store keeps them
(:class:`dkm.protocol.results.ResultsStore`), and :mod:`dkm.book.tables` turns them
into the paper's tables.

Record schema (version 1)
-------------------------
::

    {
     "schema": 1,
     "dataset": "usps",
     "method": "dkm-p",
     "seed": 8905,
     "params": {"lambda": 1.0, "distance": "euclidean", "epochs": 100,
                "pretrain_epochs": 50, "batch_size": 256,
                "sampler": "permutation", "schedule": "constant", "scale": 1.0},
     "config_hash": "<64 hex digits>",
     "metrics": {"validation": {"acc": 0.71, "nmi": 0.69, "ari": 0.60},
                 "test": {"acc": 0.72, "nmi": 0.70, "ari": 0.61}},
     "kmeans_on_embedding": {"validation": {...}, "test": {...}},
     "wall_time_s": 182.4,
     "provenance": {"dkm_version": "0.1.0", "git_commit": "...", "python": "...",
                    "tensorflow": "...", "numpy": "...", "scikit_learn": "...",
                    "device": "CPU: ...", "cpu": "...", "hostname": "...",
                    "pretraining": "<16 hex digits>"},
     "created": "2026-11-21T17:30:00+00:00"
    }

``schema``
    The integer 1.
``dataset``
    ``mnist``, ``usps``, ``20news``, ``rcv1``, ``digits`` or the stem of a
    user's file: any non-empty string.
``method``
    The id of a declared method (:data:`dkm.protocol.registry.METHODS`). A
    store read keeps the records of a method nobody declared (a plugin's, read
    without it) and names them in one warning (:meth:`ResultsStore.records`).
``seed``
    An integer.
``params``
    The hyperparameters, a JSON object. Keys with a meaning to this package:
    ``lambda`` (DCN, DKM) or ``gamma`` (IDEC), a positive number, absent for
    ``km`` and ``ae-km`` (never both); ``distance``, the clustering distance f,
    ``"euclidean"`` (the default when absent) or ``"cosine"``; ``scale``, a
    positive number naming the scale of the experiment (1.0 is the paper's);
    ``arithmetic``, ``"reproducible"`` for a run made in the reproducible
    arithmetic (:mod:`dkm.reproducibility.arithmetic`), absent for the native one (a run is
    its configuration, its arithmetic included: the same run in the other
    arithmetic is another run, with another hash), and naming the same
    arithmetic as the provenance's ``arithmetic`` settings where a record has
    them. Other keys are kept as they are and only enter the hash.
``config_hash``
    :func:`config_hash` of ``dataset``, ``method``, ``seed`` and ``params``;
    checked on append. Two records with the same hash are the same
    experiment.
``metrics``
    ``{"validation": {...}, "test": {...}}``, each split a JSON object with
    the fractions ``acc`` and ``nmi`` in ``[0, 1]`` and ``ari`` in
    ``[-1, 1]`` (ARI is negative for worse-than-chance clusterings); ``null``
    when the dataset has no labels.
``kmeans_on_embedding``
    Same layout as ``metrics``: k-means on the method's final embedding (the
    supplement's k-Means-friendliness table), or ``null``.
``wall_time_s``
    Non-negative number of seconds (of a resumed run: with the training time
    its checkpoints saved).
``provenance``
    JSON object of versions and machine (free-form strings); a pretrained
    method's record adds ``pretraining``, the fingerprint of the pretrained
    weights it started from (:meth:`dkm.methods.pretraining.Pretrained.fingerprint`),
    and a run that resumed from checkpoints adds ``resumed``, one object per
    phase that did (:attr:`dkm.checkpoints.RunCheckpoints.resumed`).
``created``
    ISO 8601 timestamp with a time zone.
``study``, ``switches``
    What the run is, in the records made since they were written (optional; neither enters
    the hash): the ablation study it was run for (``null`` for the protocol's runs and a
    line search's), and the recorded parameters in which it differs from the protocol's run
    of its method on its dataset, its arithmetic left out (``{}`` for the protocol's run).
    For an older record, :func:`dkm.book.ablations.identified` reads both from its store
    and its parameters.

Only finite numbers are accepted (no NaN or infinity), so every line is
standard JSON.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from datetime import datetime, timezone
from numbers import Real
from typing import Any

import pandas as pd

from dkm.protocol import paper, registry
from dkm.reproducibility.arithmetic import ARITHMETICS, Arithmetic, recorded_arithmetic

#: Version of the record layout documented above.
SCHEMA_VERSION = 1
#: Splits of ``metrics`` and ``kmeans_on_embedding``.
SPLITS = ("validation", "test")
#: Metric names inside a split.
METRICS = ("acc", "nmi", "ari")
#: Clustering distances a record may name in ``params["distance"]``.
DISTANCE_NAMES = ("euclidean", "cosine")

_REQUIRED = {
    "schema": int,
    "dataset": str,
    "method": str,
    "seed": int,
    "params": dict,
    "config_hash": str,
    "metrics": (dict, type(None)),
    "kmeans_on_embedding": (dict, type(None)),
    "wall_time_s": Real,
    "provenance": dict,
    "created": str,
}
_METRIC_RANGES = {"acc": (0.0, 1.0), "nmi": (0.0, 1.0), "ari": (-1.0, 1.0)}
_SPLIT_PREFIXES = {"validation": "val", "test": "test"}


def score_column(metric: str, split: str = "test", kmeans_on_embedding: bool = False) -> str:
    """The :func:`records_to_dataframe` column that holds one score.

    Parameters
    ----------
    metric : {"acc", "nmi", "ari"}
    split : {"validation", "test"}
    kmeans_on_embedding : bool
        The score of k-means run on the learned embedding (``km_`` columns)
        instead of the model's own clusters.

    Returns
    -------
    str
        ``"test_acc"``, ``"val_nmi"``, ``"km_test_acc"``, ...
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    if split not in _SPLIT_PREFIXES:
        raise ValueError(f"split must be one of {tuple(_SPLIT_PREFIXES)}, got {split!r}")
    return f"{'km_' if kmeans_on_embedding else ''}{_SPLIT_PREFIXES[split]}_{metric}"


#: Columns of :func:`records_to_dataframe`, in order.
COLUMNS = (
    "dataset",
    "method",
    "seed",
    "distance",
    "tradeoff_name",
    "tradeoff",
    "scale",
    *(score_column(m, s, on_embedding) for on_embedding in (False, True)
      for s in SPLITS for m in METRICS),
    "wall_time_s",
    "created",
    "config_hash",
)


def config_hash(dataset: str, method: str, seed: int, params: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of an experiment's configuration.

    The canonical form is ``json.dumps`` of ``{"dataset", "method", "seed",
    "params"}`` with ``sort_keys=True``, ``separators=(",", ":")``,
    ``ensure_ascii=True`` and ``allow_nan=False``: it does not depend on the
    order of the keys, and numbers are written as JSON numbers (``1.0`` and
    ``1`` differ, as they do in the record).

    Returns
    -------
    str
        64 lowercase hexadecimal digits.

    Raises
    ------
    ValueError
        If ``params`` holds something JSON cannot represent (NaN, objects).
    """
    try:
        canonical = json.dumps(
            {"dataset": dataset, "method": method, "seed": seed, "params": dict(params)},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=True,
            allow_nan=False,
        )
    except (TypeError, ValueError) as error:
        raise ValueError(f"the configuration is not standard JSON: {error}") from None
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def new_record(
    dataset: str,
    method: str,
    seed: int,
    params: Mapping[str, Any],
    *,
    metrics: Mapping[str, Mapping[str, float]] | None,
    kmeans_on_embedding: Mapping[str, Mapping[str, float]] | None = None,
    wall_time_s: float = 0.0,
    replicas_trained_together: int = 1,
    provenance: Mapping[str, Any] | None = None,
    created: str | None = None,
    study: str | None = None,
    switches: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Assemble and validate a record, computing its hash and timestamp: the one way a
    record is made (:func:`dkm.protocol.experiments.run_seeds` makes every run's).

    Parameters
    ----------
    dataset, method, seed, params
        The configuration (see the module docstring).
    metrics, kmeans_on_embedding : mapping or None
        ``{"validation": {"acc", "nmi", "ari"}, "test": {...}}`` as fractions.
    wall_time_s : float
        Duration of the run.
    replicas_trained_together : int
        How many seeds trained together as one computation, this one included.
    provenance : mapping, optional
        Versions and machine; empty when not given.
    created : str, optional
        ISO 8601 timestamp; now (UTC) when not given.
    study : str, optional
        The ablation study the run was made for (None: the protocol's or a line search's).
    switches : mapping, optional
        The parameters in which the run differs from the protocol's; with it, the record
        says ``study`` and ``switches`` (see the module docstring); without it, neither.

    Returns
    -------
    dict
        A record that :func:`validate_record` accepts.

    Raises
    ------
    ValueError
        If the record would not be valid.
    """
    record = {
        "schema": SCHEMA_VERSION,
        "dataset": dataset,
        "method": method,
        "seed": seed,
        "params": dict(params),
        "config_hash": config_hash(dataset, method, seed, params),
        "metrics": metrics,
        "kmeans_on_embedding": kmeans_on_embedding,
        "wall_time_s": wall_time_s,
        "replicas_trained_together": replicas_trained_together,
        "provenance": dict(provenance or {}),
        "created": created or datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    if switches is not None:
        record.update(study=study, switches=dict(switches))
    validate_record(record)
    return record


def _is_number(value: Any) -> bool:
    """A finite real number that is not a bool."""
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _check_types(record: Mapping[str, Any]) -> None:
    missing = [key for key in _REQUIRED if key not in record]
    if missing:
        raise ValueError(f"record lacks the keys {missing}")
    for key, expected in _REQUIRED.items():
        value = record[key]
        if isinstance(value, bool) or not isinstance(value, expected):
            raise ValueError(f"record[{key!r}] has the wrong type: {value!r}")


def _tradeoff_names() -> tuple[str, ...]:
    """The names the declared methods give their trade-offs (``"lambda"``, ``"gamma"``)."""
    return tuple(dict.fromkeys(m.tradeoff for m in registry.METHODS.values() if m.tradeoff))


def _check_params(params: Mapping[str, Any], method: str) -> None:
    tradeoffs = [key for key in _tradeoff_names() if key in params]
    if len(tradeoffs) > 1:
        raise ValueError(f"params carry both {' and '.join(map(repr, tradeoffs))}: a record "
                         "holds its method's trade-off only")
    for key in tradeoffs:
        if not _is_number(params[key]) or params[key] <= 0:
            raise ValueError(f"params[{key!r}] must be a positive number, got {params[key]!r}")
    if tradeoffs and method in registry.METHODS and registry.get(method).tradeoff is None:
        raise ValueError(f"method {method!r} takes no {tradeoffs[0]!r}")
    if params.get("distance", DISTANCE_NAMES[0]) not in DISTANCE_NAMES:
        raise ValueError(
            f"params['distance'] must be one of {DISTANCE_NAMES}, got {params['distance']!r}"
        )
    if "scale" in params and not (_is_number(params["scale"]) and params["scale"] > 0):
        raise ValueError(f"params['scale'] must be a positive number, got {params['scale']!r}")
    if params.get("arithmetic", "reproducible") != "reproducible":
        raise ValueError("params['arithmetic'] is 'reproducible' or absent (the native "
                         f"arithmetic), got {params['arithmetic']!r}")


def record_arithmetic(record: Mapping[str, Any]) -> Arithmetic:
    """The arithmetic a record's run was made in: ``params["arithmetic"]``, ``"native"`` when
    absent (:func:`dkm.reproducibility.arithmetic.current_arithmetic`)."""
    return record["params"].get("arithmetic", ARITHMETICS[0])


def _check_arithmetic(record: Mapping[str, Any]) -> None:
    """The arithmetic the parameters name is the one the provenance's settings describe."""
    settings = record["provenance"].get("arithmetic")
    if not isinstance(settings, Mapping) or "environment" not in settings:
        return  # older records name no settings
    described = recorded_arithmetic(record["provenance"])
    if described != record_arithmetic(record):
        raise ValueError(f"record's parameters name the {record_arithmetic(record)} arithmetic "
                         f"but its provenance's settings are the {described} one's")


def _check_scores(scores: Mapping[str, Any] | None, key: str) -> None:
    """Check a ``metrics``-like object: both splits, three metrics in range."""
    if scores is None:
        return
    if set(scores) != set(SPLITS):
        raise ValueError(
            f"record[{key!r}] must have exactly the splits {SPLITS}, got {sorted(scores)}"
        )
    for split in SPLITS:
        values = scores[split]
        if not isinstance(values, dict) or set(values) != set(METRICS):
            raise ValueError(f"record[{key!r}][{split!r}] must map exactly {METRICS} to numbers")
        for metric, (low, high) in _METRIC_RANGES.items():
            value = values[metric]
            if not _is_number(value) or not low <= value <= high:
                raise ValueError(
                    f"record[{key!r}][{split!r}][{metric!r}] must be a fraction in "
                    f"[{low:g}, {high:g}], got {value!r}"
                )


def validate_record(record: Mapping[str, Any], *, declared: bool = True) -> None:
    """Check a record against the schema of this module.

    Parameters
    ----------
    record : mapping
        The record.
    declared : bool, default=True
        Whether its method must be declared (:data:`dkm.protocol.registry.METHODS`):
        a record appended must; a record read need not, and a trade-off of an
        undeclared method is then not checked against its declaration.

    Raises
    ------
    ValueError
        Naming the first problem found: a value JSON cannot hold (NaN, a
        NumPy scalar), a missing key, a wrong type, an undeclared method (with
        ``declared``), an unknown distance, a metric out of range, a negative
        time, a ``config_hash`` that does not match the configuration, a
        ``created`` that is not an ISO 8601 timestamp with a time zone.
    """
    if not isinstance(record, Mapping):
        raise ValueError(f"a record must be a mapping, got {type(record).__name__}")
    try:
        json.dumps(record, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"record is not standard JSON: {error}") from None
    _check_types(record)
    if record["schema"] != SCHEMA_VERSION:
        raise ValueError(
            f"record['schema'] is {record['schema']!r}; this package reads {SCHEMA_VERSION}"
        )
    if not record["dataset"]:
        raise ValueError("record['dataset'] is empty")
    if not record["method"]:
        raise ValueError("record['method'] is empty")
    if declared and record["method"] not in registry.METHODS:
        raise ValueError(f"record['method'] is {record['method']!r}; expected one of "
                         f"{registry.ids()}")
    _check_params(record["params"], record["method"])
    _check_arithmetic(record)
    expected = config_hash(record["dataset"], record["method"], record["seed"], record["params"])
    if record["config_hash"] != expected:
        raise ValueError(
            f"record['config_hash'] is {record['config_hash']!r} but its configuration hashes "
            f"to {expected!r}; compute it with dkm.protocol.results.config_hash"
        )
    for key in ("metrics", "kmeans_on_embedding"):
        _check_scores(record[key], key)
    if not _is_number(record["wall_time_s"]) or record["wall_time_s"] < 0:
        raise ValueError(
            f"record['wall_time_s'] must be a non-negative number, got {record['wall_time_s']!r}"
        )
    try:
        created = datetime.fromisoformat(record["created"])
    except ValueError:
        raise ValueError(
            f"record['created'] is not an ISO 8601 timestamp: {record['created']!r}"
        ) from None
    if created.tzinfo is None:
        raise ValueError(f"record['created'] has no time zone: {record['created']!r}")


def _flat_scores(scores: Mapping[str, Any] | None,
                 kmeans_on_embedding: bool) -> dict[str, float]:
    """``{"test": {"acc": x}}`` -> ``{"test_acc": x}`` (NaN when null)."""
    return {
        score_column(metric, split, kmeans_on_embedding): math.nan
        if scores is None
        else float(scores[split][metric])
        for split in SPLITS
        for metric in METRICS
    }


def _flat_record(record: Mapping[str, Any]) -> dict[str, Any]:
    params = record["params"]
    name = next((key for key in _tradeoff_names() if key in params), None)
    return {
        "dataset": record["dataset"],
        "method": record["method"],
        "seed": record["seed"],
        "distance": params.get("distance", DISTANCE_NAMES[0]),
        "tradeoff_name": name,
        "tradeoff": math.nan if name is None else float(params[name]),
        "scale": float(params.get("scale", math.nan)),
        **_flat_scores(record["metrics"], kmeans_on_embedding=False),
        **_flat_scores(record["kmeans_on_embedding"], kmeans_on_embedding=True),
        "wall_time_s": float(record["wall_time_s"]),
        "created": record["created"],
        "config_hash": record["config_hash"],
    }


def records_to_dataframe(records: list[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per record, with flat columns (:data:`COLUMNS`).

    ``distance`` defaults to ``"euclidean"``; ``tradeoff_name`` is
    the method's trade-off (``"lambda"``, ``"gamma"``) or missing and ``tradeoff`` its value (NaN for
    ``km`` and ``ae-km``); ``scale`` is NaN when the record names none. The
    metric columns are ``test_acc``, ``test_nmi``, ``test_ari``,
    ``val_acc``, ... for ``metrics`` and ``km_test_acc``, ... for
    ``kmeans_on_embedding``, as fractions, NaN where the record has none.
    """
    return pd.DataFrame([_flat_record(record) for record in records], columns=list(COLUMNS))


def record_label(record: Mapping[str, Any]) -> str:
    """The paper's label of a record's method, naming its distance where it is not the paper's.

    Parameters
    ----------
    record : mapping
        A run record (``method`` and ``params`` are read).

    Returns
    -------
    str
        :func:`dkm.protocol.paper.model_label` of the method, with the supplement's
        ``_ce`` suffix for the cosine distance and no suffix for the paper's
        Euclidean one (named or, as in older records, absent).

    Examples
    --------
    >>> record_label({"method": "dkm-a", "params": {"distance": "cosine"}})
    'DKM^a_ce'
    >>> record_label({"method": "dkm-a", "params": {}})
    'DKM^a'
    """
    distance = record["params"].get("distance", DISTANCE_NAMES[0])
    return paper.model_label(record["method"],
                             distance=None if distance == DISTANCE_NAMES[0] else distance)


def record_scale(record: Mapping[str, Any]) -> float:
    """The epoch scale a record ran at: ``params["scale"]``, 1 (the paper's epochs) when absent."""
    return record["params"].get("scale", 1.0)


def is_full_scale(record: Mapping[str, Any]) -> bool:
    """True for a run at the paper's epochs: ``params["scale"]`` is 1 or absent."""
    return record_scale(record) == 1.0
