"""Run records and the JSON Lines store that keeps them.

Every run of the protocol (one method, one dataset, one seed, one set of
hyperparameters) produces one *record*, a plain JSON object. A
:class:`ResultsStore` appends records to a JSON Lines file, one record per
line, and reads them back; :mod:`dkm.book.tables` turns them into the paper's
tables.

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

Only finite numbers are accepted (no NaN or infinity), so every line is
standard JSON.

Crash safety
------------
:meth:`ResultsStore.append` writes a whole line with one ``write`` call on a
file opened in append mode, then flushes it to disk with ``os.fsync``; where
``fcntl`` exists it holds an exclusive ``flock`` meanwhile, so concurrent
appenders do not interleave. A crash can therefore at worst leave a
truncated *last* line. The next append notices that the file does not end
with a newline and starts on a fresh line, and :meth:`ResultsStore.records`
warns about the broken line and skips it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from numbers import Real
from pathlib import Path
from typing import Any

import pandas as pd

from dkm.reproducibility.arithmetic import ARITHMETICS, Arithmetic, recorded_arithmetic
from dkm.protocol import paper, registry

try:
    import fcntl
except ImportError:  # Windows: appends are not locked against each other.
    fcntl = None

__all__ = [
    "SCHEMA_VERSION",
    "SPLITS",
    "METRICS",
    "DISTANCES",
    "COLUMNS",
    "config_hash",
    "new_record",
    "record_arithmetic",
    "validate_record",
    "records_to_dataframe",
    "record_label",
    "ResultsStore",
    "result_stores",
    "results_folder",
    "all_stores",
    "held_runs",
    "duplicate_runs",
    "check_store_arithmetic",
    "AUDITS",
    "STORE_FOLDERS",
    "store_path",
    "store_records",
    "single_arithmetic",
    "protocol_stores",
    "record_scale",
    "score_column",
    "is_full_scale",
    "full_scale_records",
    "full_scale_records_by_store",
    "every_full_scale_record",
]

#: Version of the record layout documented above.
SCHEMA_VERSION = 1
#: Splits of ``metrics`` and ``kmeans_on_embedding``.
SPLITS = ("validation", "test")
#: Metric names inside a split.
METRICS = ("acc", "nmi", "ari")
#: Clustering distances a record may name in ``params["distance"]``.
DISTANCES = ("euclidean", "cosine")

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


def _check_params(params: Mapping[str, Any], method: str) -> None:
    tradeoffs = [key for key in ("lambda", "gamma") if key in params]
    if len(tradeoffs) > 1:
        raise ValueError("params carry both 'lambda' and 'gamma'")
    for key in tradeoffs:
        if not _is_number(params[key]) or params[key] <= 0:
            raise ValueError(f"params[{key!r}] must be a positive number, got {params[key]!r}")
    if tradeoffs and method in registry.METHODS and registry.get(method).tradeoff is None:
        raise ValueError(f"method {method!r} takes no {tradeoffs[0]!r}")
    if params.get("distance", DISTANCES[0]) not in DISTANCES:
        raise ValueError(
            f"params['distance'] must be one of {DISTANCES}, got {params['distance']!r}"
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
    name = next((key for key in ("lambda", "gamma") if key in params), None)
    return {
        "dataset": record["dataset"],
        "method": record["method"],
        "seed": record["seed"],
        "distance": params.get("distance", DISTANCES[0]),
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
    ``"lambda"``, ``"gamma"`` or missing and ``tradeoff`` its value (NaN for
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
    distance = record["params"].get("distance", DISTANCES[0])
    return paper.model_label(record["method"],
                             distance=None if distance == DISTANCES[0] else distance)


class ResultsStore:
    """An append-only JSON Lines file of run records.

    Parameters
    ----------
    path : str or os.PathLike
        The file; it and its parent directories are created on the first
        append.

    Examples
    --------
    >>> store = ResultsStore("results/usps.jsonl")          # doctest: +SKIP
    >>> if not store.contains(record["config_hash"]):        # doctest: +SKIP
    ...     store.append(record)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.path)!r})"

    @contextmanager
    def _locked_append_fd(self) -> Iterator[int]:
        """An append-mode descriptor of the file, exclusively locked if possible."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)  # closing releases the lock

    @staticmethod
    def _ends_with_newline(fd: int) -> bool:
        """True for an empty file or one whose last byte is a newline."""
        size = os.fstat(fd).st_size
        return size == 0 or os.pread(fd, 1, size - 1) == b"\n"

    def append(self, record: Mapping[str, Any]) -> None:
        """Validate a record and append it as one line, flushed to disk.

        If the file ends with a truncated line (a crash during an earlier
        append), the record starts on a new line so that the broken fragment
        stays on a line of its own.

        Raises
        ------
        ValueError
            If the record does not follow the schema (:func:`validate_record`).
        """
        validate_record(record)
        line = json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
        with self._locked_append_fd() as fd:
            data = line.encode("utf-8")
            if not self._ends_with_newline(fd):
                data = b"\n" + data
            view = memoryview(data)
            while view:  # one write for a regular file; loop only on a short write
                view = view[os.write(fd, view) :]
            os.fsync(fd)

    def _parse(self, number: int, line: bytes) -> dict[str, Any] | None:
        """The record on a line, or None (with a warning) when it is unusable."""
        try:
            record = json.loads(line)
            validate_record(record, declared=False)
        except ValueError as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            warnings.warn(
                f"{self.path}:{number}: skipping an unreadable record ({error})",
                RuntimeWarning,
                stacklevel=3,
            )
            return None
        return record

    def records(self) -> list[dict[str, Any]]:
        """Every valid record, in file order, whatever the process imported before.

        A line that is not valid JSON (typically the truncated last line of a
        crashed append) or not a valid record is skipped with a
        ``RuntimeWarning`` that names the file and the line number. Blank
        lines are ignored. A missing file holds no records.

        A record of a method nobody declared (:data:`dkm.protocol.registry.METHODS`:
        a plugin's, read without the plugin) is valid: it is kept, and one
        ``RuntimeWarning`` per read names those methods and counts their
        records. The tables (:func:`dkm.book.tables.build`), which label rows
        by the registry, leave such records out.
        """
        if not self.path.exists():
            return []
        records = []
        for number, line in enumerate(self.path.read_bytes().split(b"\n"), start=1):
            record = self._parse(number, line) if line.strip() else None
            if record is not None:
                records.append(record)
        undeclared = Counter(r["method"] for r in records if r["method"] not in registry.METHODS)
        if undeclared:
            methods = ", ".join(f"{method} ({count})" for method, count in undeclared.items())
            warnings.warn(
                f"{self.path}: {undeclared.total()} "
                f"record{'' if undeclared.total() == 1 else 's'} of methods nobody declared, kept "
                f"(the tables leave them out): {methods}; declare them with --plugin MODULE "
                f"or an entry point of the group {registry.ENTRY_POINT_GROUP}",
                RuntimeWarning,
                stacklevel=2,
            )
        return records

    def completed_hashes(self) -> set[str]:
        """The ``config_hash`` of every valid record."""
        return {record["config_hash"] for record in self.records()}

    def contains(self, config_hash: str) -> bool:
        """True if a valid record with this ``config_hash`` is stored."""
        return config_hash in self.completed_hashes()

    def to_dataframe(self) -> pd.DataFrame:
        """The records as a flat DataFrame (see :func:`records_to_dataframe`)."""
        return records_to_dataframe(self.records())

    def arithmetics(self) -> set[Arithmetic]:
        """The arithmetics of its records (:func:`record_arithmetic`); empty for no record."""
        return {record_arithmetic(record) for record in self.records()}


def check_store_arithmetic(store: ResultsStore, arithmetic: Arithmetic) -> None:
    """Refuse to add runs of ``arithmetic`` to a store whose records are of another.

    A store holds the runs of one arithmetic: the same configuration in the two would
    otherwise sit side by side as two sets of numbers for one table.

    Raises
    ------
    ValueError
        Naming the store's arithmetic and how to run in it, or to choose another store.
    """
    others = sorted(store.arithmetics() - {arithmetic})
    if others:
        option = "--native" if others == ["native"] else "--reproducible"
        raise ValueError(f"{store.path} holds runs made in the {' and '.join(others)} "
                         f"arithmetic, and this process runs in the {arithmetic} one: run in the "
                         f"store's arithmetic ({option} on the command line, dkm.reproducibility.arithmetic in "
                         "Python) or give another results store")


def result_stores(folder: str | os.PathLike[str]) -> list[Path]:
    """The stores of a results folder, sorted by path.

    Parameters
    ----------
    folder : str or os.PathLike
        A results folder laid out as ``results/`` is: the protocol's stores
        and the line searches' as ``<name>.jsonl``, the ablation studies' as
        ``ablations/<study>.jsonl``.

    Returns
    -------
    list of pathlib.Path
        ``folder/*.jsonl`` then ``folder/ablations/*.jsonl``; empty when the
        folder does not exist.
    """
    folder = Path(folder)
    return sorted(folder.glob("*.jsonl")) + sorted(folder.glob("ablations/*.jsonl"))


#: The folders of a results folder that hold stores of their own kind: the ablation studies',
#: the authors' code's, the bfloat16 runs', the native arithmetic's where the protocol's
#: stores are in the reproducible one.
STORE_FOLDERS = ("ablations", "authors-code", "bfloat16", "native", "reproducible")
#: The folder of a results folder that holds the audits of its records: reruns, never records.
AUDITS = "audits"


def results_folder(store: str | os.PathLike[str]) -> Path:
    """The results folder a store belongs to: its folder, or the first folder above it that is
    not one of :data:`STORE_FOLDERS` (``results/ablations/alpha.jsonl`` and
    ``results/reproducible/ablations/alpha.jsonl``: ``results``)."""
    parent = Path(store).parent
    while parent.name in STORE_FOLDERS:
        parent = parent.parent
    return parent


def all_stores(folder: str | os.PathLike[str]) -> list[Path]:
    """Every store of a results folder, its sub-folders' included, the audits' not; sorted."""
    folder = Path(folder)
    return sorted(path for path in folder.rglob("*.jsonl")
                  if AUDITS not in path.relative_to(folder).parts[:-1])


def _records_by_run(folder: str | os.PathLike[str]) -> dict[str, list[tuple[Path, dict[str, Any]]]]:
    runs: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for store in all_stores(folder):
        for record in ResultsStore(store).records():
            runs.setdefault(record["config_hash"], []).append((store, record))
    return runs


def held_runs(folder: str | os.PathLike[str]) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Every run a results folder holds, by configuration hash: its store and its record.

    A run is its configuration and seed, its arithmetic included; the folder holds one
    record of each (:func:`duplicate_runs` lists the exceptions; of those, the oldest
    record is returned). Commands that need a run that some store holds read it from there
    instead of running it again (:func:`dkm.protocol.grid.run_grid`).
    """
    return {run: min(records, key=lambda found: found[1]["created"])
            for run, records in _records_by_run(folder).items()}


def duplicate_runs(folder: str | os.PathLike[str]) -> list[list[tuple[Path, dict[str, Any]]]]:
    """The runs of which a results folder holds more than one record: for each, its records
    (store and record), oldest first. A rerun belongs in the audits (:data:`AUDITS`)."""
    return [sorted(records, key=lambda found: found[1]["created"])
            for records in _records_by_run(folder).values() if len(records) > 1]


def store_path(folder: str | os.PathLike[str], name: str) -> Path:
    """The store named ``name`` in ``folder``: ``folder/<name>.jsonl``.

    A dataset's protocol runs are the store of its name, a line search's
    ``<dataset>-lambda``, an ablation study's its study's name (in the
    ``ablations/`` folder of ``results/``).
    """
    return Path(folder) / f"{name}.jsonl"


def store_records(folder: str | os.PathLike[str], name: str,
                  arithmetic: Arithmetic | None = None) -> list[dict[str, Any]]:
    """The records of a results folder's store ``name``, or of its runs in one arithmetic.

    A results folder keeps the runs of a store made in the arithmetic its tables do not
    read in the sub-folder of that arithmetic's name (:data:`STORE_FOLDERS`): the protocol's
    USPS runs, in the reproducible arithmetic in ``results/usps.jsonl``, in the native one
    in ``results/native/usps.jsonl``.

    Parameters
    ----------
    folder : str or os.PathLike
    name : str
        The store's name (:func:`store_path`).
    arithmetic : {"native", "reproducible"}, optional
        Without it, the records of ``folder/<name>.jsonl``; with it, the records made in that
        arithmetic (:func:`record_arithmetic`) of ``folder/<name>.jsonl`` and
        ``folder/<arithmetic>/<name>.jsonl``.

    Returns
    -------
    list of dict
        In the stores' order; empty where neither store exists.
    """
    if arithmetic is not None and arithmetic not in ARITHMETICS:
        raise ValueError(f"arithmetic must be one of {ARITHMETICS}, got {arithmetic!r}")
    paths = [store_path(folder, name)]
    if arithmetic is not None:
        paths.append(store_path(Path(folder) / arithmetic, name))
    records = [record for path in paths if path.is_file()
               for record in ResultsStore(path).records()]
    return [record for record in records
            if arithmetic is None or record_arithmetic(record) == arithmetic]


def single_arithmetic(records: Iterable[Mapping[str, Any]]) -> Arithmetic:
    """The one arithmetic a set of records was made in (:func:`record_arithmetic`).

    Raises
    ------
    ValueError
        When there is no record, or the records were made in more than one arithmetic.
    """
    found = {record_arithmetic(record) for record in records}
    if len(found) != 1:
        raise ValueError("expected records made in one arithmetic, got "
                         + (" and ".join(sorted(found)) if found else "no record"))
    return found.pop()


def protocol_stores(folder: str | os.PathLike[str]) -> dict[str, Path]:
    """The protocol's stores of a results folder, by dataset.

    The protocol keeps the runs of each named dataset (:func:`dkm.data.available_datasets`,
    a data variant such as ``usps-sharp`` included) in ``folder/<dataset>.jsonl``;
    the line searches' and the ablation studies' stores are not among them.

    Returns
    -------
    dict of str to pathlib.Path
        Each named dataset that has a store in ``folder`` to that store, in the
        order of :func:`dkm.data.available_datasets`; empty when the folder
        does not exist.
    """
    from dkm.data import available_datasets

    stores = {dataset: store_path(folder, dataset) for dataset in available_datasets()}
    return {dataset: store for dataset, store in stores.items() if store.is_file()}


def record_scale(record: Mapping[str, Any]) -> float:
    """The epoch scale a record ran at: ``params["scale"]``, 1 (the paper's epochs) when absent."""
    return record["params"].get("scale", 1.0)


def is_full_scale(record: Mapping[str, Any]) -> bool:
    """True for a run at the paper's epochs: ``params["scale"]`` is 1 or absent."""
    return record_scale(record) == 1.0


def full_scale_records_by_store(folder: str | os.PathLike[str]) -> dict[Path, list[dict[str, Any]]]:
    """The full-scale records (:func:`is_full_scale`) of each of a results folder's stores.

    Returns
    -------
    dict
        Each of :func:`result_stores` (in their order) to its full-scale
        records, in the store's order; the records of smaller runs (tests,
        the book's quick builds) are left out.
    """
    return {store: [record for record in ResultsStore(store).records() if is_full_scale(record)]
            for store in result_stores(folder)}


def full_scale_records(folder: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every full-scale record of a results folder, its stores' records one after another.

    The records of :func:`full_scale_records_by_store`, without their stores.
    """
    return [record for records in full_scale_records_by_store(folder).values()
            for record in records]


def every_full_scale_record(folder: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The full-scale records of every store of a results folder (:func:`all_stores`).

    Those of :func:`full_scale_records` and those of the stores kept in the folder's
    :data:`STORE_FOLDERS` (the other arithmetic's, the authors' code's, the bfloat16 runs'):
    every record a rerun may be an audit of. The audits' reruns are not among them.
    """
    return [record for store in all_stores(folder) for record in ResultsStore(store).records()
            if is_full_scale(record)]
