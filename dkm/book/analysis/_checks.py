"""The runs of the benchmarks' check scripts (``benchmarks/check_*.py``), reruns, and their gaps."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dkm.reproducibility.arithmetic import is_reproducible, recorded_arithmetic
from dkm.protocol.results import AUDITS


def check_runs(name: str, directory: str | Path) -> list[dict[str, Any]]:
    """The runs of a check script (``benchmarks/check_*.py``), read from ``<directory>/<name>.jsonl``.

    Returns an empty list when the file does not exist.
    """
    path = Path(directory) / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def kept_reruns(directory: str | Path) -> list[dict[str, Any]]:
    """The reruns kept apart from the stores: every line of ``<directory>/rerun-*.jsonl``.

    Returns an empty list when there is none.
    """
    return [run for path in sorted(Path(directory).glob("rerun-*.jsonl"))
            for run in check_runs(path.stem, directory)]


def audited_reruns(results_dir: str | Path = "results") -> list[dict[str, Any]]:
    """The reruns kept as audits of a results folder's records: the whole record of each
    audit's rerun in ``<results_dir>/audits/*.jsonl`` (:data:`dkm.protocol.results.AUDITS`).

    A results folder keeps one record per run; a later record of a run it held is kept
    there as an audit (:meth:`dkm.protocol.audit.Audit.summary`). Returns an empty list
    when there is none.
    """
    folder = Path(results_dir) / AUDITS
    return [json.loads(line)["rerun_record"] for path in sorted(folder.glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def reruns_apart(results_dir: str | Path, benchmarks_dir: str | Path) -> list[dict[str, Any]]:
    """Every rerun of a committed record kept apart from the stores, wherever it is kept: the
    benchmarks' reruns (:func:`kept_reruns`), the audits of a results folder
    (:func:`audited_reruns`) and the reruns of the audits beside the benchmarks
    (``<benchmarks_dir>/audit-*.jsonl``, :func:`audits`)."""
    audited = [_audit_rerun(line) for path in sorted(Path(benchmarks_dir).glob("audit-*.jsonl"))
               for line in check_runs(path.stem, benchmarks_dir)]
    return kept_reruns(benchmarks_dir) + audited_reruns(results_dir) + audited


def _audit_rerun(audit: Mapping[str, Any]) -> dict[str, Any]:
    """The rerun of an audit line: its whole record, or, for a line written before audits kept
    it, what the line says of it (its test scores and provenance; its day is not known)."""
    if "rerun_record" in audit:
        return dict(audit["rerun_record"])
    return {**{key: audit[key] for key in ("dataset", "method", "seed", "config_hash")},
            "metrics": {"test": audit["rerun_test"]}, "provenance": audit["rerun_provenance"]}


def every_rerun(results_dir: str | Path, benchmarks_dir: str | Path,
                metric: str = "acc") -> pd.DataFrame:
    """Every rerun of a committed record made in the native arithmetic, against its record:
    the one table from which every page reads how far reruns move.

    :func:`reruns` of a results folder's native full-scale records
    (:func:`dkm.protocol.results.full_scale_records` of every store) and of their reruns among
    :func:`reruns_apart`. A rerun of a record made in the reproducible arithmetic is its
    audit (:func:`audits`), kept out: the two arithmetics are never mixed in one table.
    """
    from dkm.protocol.results import full_scale_records, record_arithmetic

    records = [record for record in full_scale_records(results_dir, every=True)
               if record_arithmetic(record) == "native"]
    runs = {record["config_hash"] for record in records}
    return reruns(records, [rerun for rerun in reruns_apart(results_dir, benchmarks_dir)
                            if rerun["config_hash"] in runs], metric)


def machine_moved(rerun_table: pd.DataFrame) -> pd.Series:
    """Which reruns of :func:`every_rerun` the machine alone is established to have moved.

    A rerun made with the code that wrote its record (``own_code``) that moved leaves only
    the machine to have moved it; so does any moved rerun of the same configuration that
    gives that rerun's score. Of the other moved reruns, whether the code or the machine
    moved them is not established.

    Returns
    -------
    pandas.Series of bool
        On ``rerun_table``'s index.
    """
    own = rerun_table[rerun_table.own_code & rerun_table.moved]
    scores = set(zip(own.config_hash, own.rerun))
    return rerun_table.moved & pd.Series(
        [(config, score) in scores for config, score in zip(rerun_table.config_hash,
                                                            rerun_table.rerun)],
        index=rerun_table.index, dtype=bool)


def check_gap(runs: Iterable[Mapping[str, Any]], changed: Mapping[str, Any],
              reference: Mapping[str, Any], metric: str = "acc") -> pd.Series:
    """Per seed, a check run's test score with ``changed`` minus the run with ``reference``.

    Check runs name what they changed against the protocol in ``changed``;
    seeds lacking either run are left out.
    """
    def by_seed(setting):
        return {r["seed"]: r["test"][metric] for r in runs if r.get("changed") == dict(setting)}

    first, second = by_seed(changed), by_seed(reference)
    return pd.Series({s: first[s] - second[s] for s in sorted(first) if s in second}, dtype=float)


def protocol_gap(runs: Iterable[Mapping[str, Any]], changed: Mapping[str, Any],
                 records: Iterable[Mapping[str, Any]], metric: str = "acc") -> pd.Series:
    """Per seed, a check run's test score with ``changed`` minus the protocol's run.

    Parameters
    ----------
    runs : iterable of dict
        Check runs (:func:`check_runs`), their test scores in percent.
    changed : mapping
        The setting of the check runs to read, as their ``changed`` field names it.
    records : iterable of dict
        The protocol's records; each check run is paired with the record of
        the same dataset, method and seed (the last one, if several).
    metric : {"acc", "nmi", "ari"}

    Returns
    -------
    pandas.Series
        The differences in points, indexed by seed (sorted); seeds without a
        protocol record are left out.
    """
    protocol = {(r["dataset"], r["method"], r["seed"]): 100 * r["metrics"]["test"][metric]
                for r in records if r.get("metrics")}
    gaps = {r["seed"]: r["test"][metric] - protocol[key] for r in runs
            if r.get("changed") == dict(changed)
            and (key := (r["dataset"], r["method"], r["seed"])) in protocol}
    return pd.Series(dict(sorted(gaps.items())), dtype=float)


def rerun_gaps(reruns: Iterable[Mapping[str, Any]], records: Iterable[Mapping[str, Any]],
               metric: str = "acc") -> pd.DataFrame:
    """Each rerun of a committed record against that record: does a record still reproduce?

    A rerun is a record of the same configuration (the same ``config_hash``)
    made later, by the same or another state of the code. Where ``records``
    hold a configuration more than once, the earliest (by ``created``) is its
    record.

    Returns
    -------
    pandas.DataFrame
        One row per rerun that has a committed record: ``dataset``,
        ``method``, ``seed``, the test ``metric`` of the record and of the rerun
        (percent), their ``difference`` (rerun minus record), the commits
        that wrote each (``recorded_at``, ``rerun_at``), the days they were
        written (``recorded_on``, ``rerun_on``; None where a record has no
        ``created``) and the ``config_hash`` they share.
    """
    committed: dict[str, Mapping[str, Any]] = {}
    for record in sorted(records, key=lambda r: r.get("created", "")):
        committed.setdefault(record["config_hash"], record)
    rows = []
    for rerun in reruns:
        record = committed.get(rerun["config_hash"])
        if record is None:
            continue
        before = 100 * record["metrics"]["test"][metric]
        after = 100 * rerun["metrics"]["test"][metric]
        rows.append({"dataset": rerun["dataset"], "method": rerun["method"],
                     "seed": rerun["seed"], "recorded": before, "rerun": after,
                     "difference": after - before,
                     "recorded_at": record["provenance"]["git_commit"],
                     "rerun_at": rerun["provenance"]["git_commit"],
                     "recorded_on": _day(record), "rerun_on": _day(rerun),
                     "config_hash": rerun["config_hash"]})
    return pd.DataFrame(rows, columns=["dataset", "method", "seed", "recorded", "rerun",
                                       "difference", "recorded_at", "rerun_at", "recorded_on",
                                       "rerun_on", "config_hash"])


def _day(record: Mapping[str, Any]) -> str | None:
    return record["created"][:10] if record.get("created") else None


def repeated_runs(records: Iterable[Mapping[str, Any]], metric: str = "acc") -> pd.DataFrame:
    """Configurations recorded more than once: each later record against the first.

    Two records of the same ``config_hash`` (in one store or in several, e.g. a
    line search that repeats the protocol's own value) ran the same
    configuration; by their ``created`` times, the first is the record and
    each later one a rerun (:func:`rerun_gaps`).

    Returns
    -------
    pandas.DataFrame
        As :func:`rerun_gaps`, one row per later record; empty when no
        configuration was recorded twice.
    """
    by_configuration: dict[str, list[Mapping[str, Any]]] = {}
    for record in sorted(records, key=lambda r: r["created"]):
        by_configuration.setdefault(record["config_hash"], []).append(record)
    repeated = [runs for runs in by_configuration.values() if len(runs) > 1]
    return rerun_gaps([r for runs in repeated for r in runs[1:]], [runs[0] for runs in repeated],
                      metric)


def reruns(records: Iterable[Mapping[str, Any]], separate: Iterable[Mapping[str, Any]] = (),
           metric: str = "acc") -> pd.DataFrame:
    """Every rerun of a committed configuration, in the stores and outside them.

    Parameters
    ----------
    records : iterable of dict
        The committed stores' records; a configuration they hold twice is a
        rerun of its first record (:func:`repeated_runs`).
    separate : iterable of dict
        Reruns kept apart from the stores (e.g. ``benchmarks/results/rerun-*.jsonl``),
        each set against the first record of its configuration.
    metric : {"acc", "nmi", "ari"}

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`rerun_gaps`, then ``kept`` (``"store"`` or
        ``"apart"``), ``own_code`` (the rerun ran the commit that wrote the
        record, neither with uncommitted changes), ``moved`` (its score
        differs from the record's) and ``same_day`` (it was written on the
        day of its record; False where either day is not known), ordered by
        the day of the record and of the rerun.
    """
    records = list(records)
    table = pd.concat([repeated_runs(records, metric).assign(kept="store"),
                       rerun_gaps(separate, records, metric).assign(kept="apart")],
                      ignore_index=True)
    table["own_code"] = ((table.recorded_at == table.rerun_at)
                         & ~table.recorded_at.str.endswith("-dirty"))
    table["moved"] = table.recorded != table.rerun
    table["same_day"] = table.recorded_on.notna() & (table.recorded_on == table.rerun_on)
    return table.sort_values(["recorded_on", "rerun_on"], kind="stable").reset_index(drop=True)


def with_reruns(records: Iterable[Mapping[str, Any]],
                reruns: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records as the latest rerun of each configuration would have written them.

    Parameters
    ----------
    records : iterable of dict
        The records a table reads (the protocol's stores).
    reruns : iterable of dict
        Any records and reruns of the same configurations, in the stores or kept apart
        (:func:`reruns_apart`); those of other configurations, and the reruns that do not
        say when they were made (an audit line that kept only its rerun's test scores),
        are ignored.

    Returns
    -------
    list of dict
        ``records`` in their order, each replaced by the last (by ``created``) of the
        records and reruns that share its ``config_hash``; a record without a later
        rerun is kept as it is.
    """
    latest: dict[str, Mapping[str, Any]] = {}
    for run in sorted((r for r in reruns if "created" in r), key=lambda r: r["created"]):
        latest[run["config_hash"]] = run
    return [latest[record["config_hash"]]
            if record["config_hash"] in latest
            and latest[record["config_hash"]]["created"] > record["created"] else record
            for record in records]


def isa_probe_table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The lines of ``benchmarks/probe_cpu_isa.py`` as a table, the snapshot's last.

    Parameters
    ----------
    rows : iterable of mapping
        Its JSON lines: one per setting (``kind`` ``"setting"``) and the
        snapshot's (``kind`` ``"snapshot"``).

    Returns
    -------
    pandas.DataFrame
        One row per line: ``setting`` (``"the snapshot"`` for its own line),
        ``first_epoch_loss``, ``commit`` (seven digits, ``-dirty`` kept), ``cpu``
        (missing where the provenance predates it), ``same_as_snapshot`` and
        ``same_as_machine`` (the loss equals, bit for bit, the snapshot's or the
        one of the setting ``"as the machine runs it"``); empty without lines.

    Raises
    ------
    ValueError
        When there are lines but not exactly one snapshot line.
    """
    rows = list(rows)
    if not rows:
        return pd.DataFrame(columns=["setting", "first_epoch_loss", "commit", "cpu",
                                     "same_as_snapshot", "same_as_machine"])
    snapshots = [r for r in rows if r["kind"] == "snapshot"]
    if len(snapshots) != 1:
        raise ValueError(f"a probe has one snapshot line, these lines have {len(snapshots)}")
    settings = [r for r in rows if r["kind"] == "setting"]
    machine = next((r["first_epoch_loss"] for r in settings
                    if r["setting"] == "as the machine runs it"), None)
    frame = pd.DataFrame([{
        "setting": r["setting"] if r["kind"] == "setting" else "the snapshot",
        "first_epoch_loss": float(r["first_epoch_loss"]),
        "commit": _short_commit(r["provenance"]["git_commit"]),
        "cpu": r["provenance"].get("cpu"),
    } for r in [*settings, *snapshots]])
    frame["same_as_snapshot"] = frame.first_epoch_loss == snapshots[0]["first_epoch_loss"]
    frame["same_as_machine"] = frame.first_epoch_loss == machine
    return frame


def _short_commit(commit: str) -> str:
    return commit[:7] + ("-dirty" if commit.endswith("-dirty") else "")


def audits(directory: str | Path,
           pattern: str = "audit-*.jsonl") -> pd.DataFrame:
    """The audits of committed records (``python -m dkm audit --output``), one row each.

    Read from every file of ``directory`` that matches ``pattern``; of a record
    audited more than once on the same CPU, the last audit (one row per record and
    rerun CPU).
    Columns: ``dataset``, ``method``, ``seed``, ``verdict`` (``"same"``,
    ``"last bits"``, ``"different"``), ``recorded`` and ``rerun`` (test ACC, percent), ``scores_differing`` (how many of the record's scores
    differ), ``record_names_arithmetic`` (whether the record names its vector
    instruction sets), ``record_arithmetic`` (``"reproducible"`` where the record's
    settings are that arithmetic's, :func:`dkm.reproducibility.arithmetic.recorded_arithmetic`; else
    ``"native"``), ``record_cpu``, ``rerun_cpu``, ``rerun_cache_sizes`` (the cache sizes the
    rerun's matrix products blocked by, where its provenance names them) and ``reason``.
    Empty when there is none.
    """
    lines = [line for path in sorted(Path(directory).glob(pattern))
             for line in check_runs(path.stem, directory)]
    last = {(line["config_hash"], line["rerun_provenance"].get("cpu")): line for line in lines}
    rows = [{"dataset": a["dataset"], "method": a["method"], "seed": a["seed"],
             "verdict": a["verdict"], "recorded": 100 * a["recorded_test"]["acc"],
             "rerun": 100 * a["rerun_test"]["acc"],
             "scores_differing": len(a.get("score_differences", [])),
             "record_names_arithmetic": "arithmetic" in a["recorded_provenance"],
             "record_arithmetic": recorded_arithmetic(a["recorded_provenance"]),
             "record_cpu": a["recorded_provenance"].get("cpu",
                                                        a["recorded_provenance"].get("device")),
             "rerun_cpu": a["rerun_provenance"].get("cpu"),
             "rerun_cache_sizes": (a["rerun_provenance"].get("arithmetic") or {}).get(
                 "cache_sizes"),
             "reason": a["reason"]}
            for a in last.values()]
    return pd.DataFrame(rows, columns=["dataset", "method", "seed", "verdict", "recorded", "rerun",
                                       "scores_differing", "record_names_arithmetic",
                                       "record_arithmetic", "record_cpu", "rerun_cpu",
                                       "rerun_cache_sizes", "reason"])


#: The parts of the reproducible fixture's fit that :func:`reproducible_fits` compares.
FIT_PARTS = {"labels": ("labels",), "pretraining losses": ("pretrain_loss",),
             "fine-tuning losses": ("loss",), "centres": ("centers",), "weights": ("weights",)}


def _same_parts(line: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, bool]:
    """Whether each part of :data:`FIT_PARTS` is the same, bit for bit, in two fits."""
    return {part: all(line.get(key) == other.get(key) for key in keys)
            for part, keys in FIT_PARTS.items()}


def in_present_settings(line: Mapping[str, Any]) -> bool:
    """Whether a benchmark's line (``mode`` and ``environment``) was made natively or in the
    reproducible arithmetic's present settings (:func:`dkm.reproducibility.arithmetic.is_reproducible`), not in
    an earlier version of the mode."""
    return line["mode"] == "native" or is_reproducible(line["environment"])


def _cache_sizes(line: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The cache sizes a reproducible fit's matrix products blocked by, where its line names
    them (a native fit's are its CPU's own)."""
    sizes = line.get("cache_sizes") if line["mode"] == "reproducible" else None
    return None if sizes is None else tuple(sizes)


def _last_fits(directory: str | Path) -> dict[tuple, Mapping[str, Any]]:
    """The last line of ``reproducible-fits.jsonl`` for each CPU, mode and cache sizes, of
    those :func:`in_present_settings`."""
    return {(line["cpu"], line["mode"], _cache_sizes(line)): line
            for line in check_runs("reproducible-fits", directory) if in_present_settings(line)}


def reproducible_fits(directory: str | Path, fixture: str | Path) -> pd.DataFrame:
    """What each CPU gave for the reproducible fixture's fit, in either arithmetic.

    Parameters
    ----------
    directory : str or Path
        Where ``reproducible-fits.jsonl`` lies (``benchmarks/reproducible_fits.py``'s lines).
    fixture : str or Path
        The fixture, ``tests/fixtures/reproducible-dkm-p.json``.

    Returns
    -------
    pandas.DataFrame
        One row per CPU, mode and cache sizes (the last line of each; reproducible
        fits made in earlier settings of the mode are left out): ``cpu``, ``mode``
        (``"reproducible"``, ``"native"``), ``cache_sizes`` (the L1, L2 and L3 sizes
        its matrix products blocked by, as the reproducible arithmetic pins them or
        ``benchmarks/with_cache_sizes.py`` set them; None for a native fit and where the
        line does not name them: the CPU's own), ``fit`` (a digest of the parts of
        :data:`FIT_PARTS`: two rows with the same digest computed the same fit), then for
        each part whether it is the fixture's, bit for bit, ``centres_differing``, how
        many of the centres' coordinates are not the fixture's bits, and ``centres_ulps``,
        the most units in the last place by which a coordinate differs from the fixture's.
        Empty when there is no line.
    """
    reference = json.loads(Path(fixture).read_text())
    last = _last_fits(directory)
    centres = np.frombuffer(bytes.fromhex(reference["centers"]), np.float32)

    def centres_compared(line: Mapping[str, Any]) -> dict[str, int]:
        # each coordinate's distance from the fixture's in units in the last place: the
        # float32 values' bits read as integers (the coordinates keep their signs)
        other = np.frombuffer(bytes.fromhex(line["centers"]), np.float32)
        ulps = np.abs(other.view(np.int32).astype(np.int64) - centres.view(np.int32))
        return {"centres_differing": int(np.sum(ulps > 0)), "centres_ulps": int(np.max(ulps))}

    def digest(line: Mapping[str, Any]) -> str:
        parts = json.dumps([line.get(key) for keys in FIT_PARTS.values() for key in keys])
        return hashlib.sha256(parts.encode()).hexdigest()[:12]

    rows = [{"cpu": cpu, "mode": mode, "cache_sizes": sizes, "fit": digest(line),
             **_same_parts(line, reference), **centres_compared(line)}
            for (cpu, mode, sizes), line in last.items()]
    return pd.DataFrame(rows, columns=["cpu", "mode", "cache_sizes", "fit", *FIT_PARTS,
                                       "centres_differing", "centres_ulps"])


def cache_size_products(directory: str | Path) -> pd.DataFrame:
    """Which of a fit's products rounded otherwise with other cache sizes than the mode's.

    Parameters
    ----------
    directory : str or Path
        Where ``cache-size-products.jsonl`` lies (``benchmarks/cache_size_products.py``'s
        lines: the products computed with the mode's sizes and with others, each compared).

    Returns
    -------
    pandas.DataFrame
        One row per CPU, told sizes and computation (the last line of each CPU and sizes):
        ``cpu``, ``pinned`` and ``told`` (the L1, L2 and L3 sizes, bytes, as tuples),
        ``network`` (a paper's dataset's label, or ``"small fit"``), ``phase``
        (``"training step"``, ``"embedding"``), ``shape``, ``part`` (of a training step's
        layer: ``"forward"``, ``"input gradient"``, ``"weight gradient"``; empty for an
        embedding) and ``differs``. Empty when there is no line.
    """
    last = {(line["cpu"], tuple(line["told"])): line
            for line in check_runs("cache-size-products", directory)}
    rows = [{"cpu": cpu, "pinned": tuple(line["pinned"]), "told": told, **product}
            for (cpu, told), line in last.items() for product in line["products"]]
    return pd.DataFrame(rows, columns=["cpu", "pinned", "told", "network", "phase", "shape",
                                       "part", "differs"])
