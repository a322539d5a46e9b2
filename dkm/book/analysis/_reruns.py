"""Reruns of committed records, in the stores or kept apart (the benchmarks' reruns, the
audits), each against its record."""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from dkm.book.analysis._check_runs import check_runs
from dkm.protocol.results import AUDITS
from dkm.reproducibility.arithmetic import recorded_arithmetic


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
