"""Rerun records and say which give their numbers again, bit for bit, and why the others do not.

:func:`rerun` rebuilds a record's run from its fields (method, dataset, seed, trade-off,
scale, loop settings and any configuration field it changed) and trains it again here,
pretraining included; :func:`audit_record` compares the two records' scores bit for bit and,
where they differ, names what differs between the machine and settings that wrote the record
and those that reran it (:func:`differences`): the vector instruction set, the settings that
decide the arithmetic, the libraries, the code. A record written before records named their
arithmetic says only its CPU: the reason is then "not established".

:func:`refit` trains the runs of one seed's records again and keeps what a record does not:
the final embeddings, the clusters, the per-epoch curves.
"""
from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable, Literal, Mapping, Sequence

from dkm.reproducibility.arithmetic import recorded_intra_op_threads
from dkm.protocol import registry
from dkm.protocol.environment import version_differences
from dkm.protocol.experiments import (configure, data_fingerprint, fit_methods,
                                      recorded_loop_settings, run_params, run_seeds)
from dkm.protocol.results import config_hash

__all__ = ["Audit", "LAST_BITS", "rerun", "refit", "audit_record", "differences",
           "rebuilt_hash"]

Verdict = Literal["same", "last bits", "different"]
#: The largest relative difference of two scores that differ only in their last bits.
LAST_BITS = 1e-12


@dataclass(frozen=True)
class Audit:
    """A record and its rerun.

    Attributes
    ----------
    record, rerun : dict
        The record audited and the one its rerun made (not stored).
    verdict : {"same", "last bits", "different"}
        Whether every score of the two (validation and test, and k-means on
        the embedding) is the same bit for bit, differs only in its last bits
        (relative difference at most :data:`LAST_BITS`), or differs more.
    score_differences : tuple of str
        Each score that differs: where, and its two values.
    differences : tuple of str
        What differs between the record's machine and settings and the
        rerun's (:func:`differences`); empty when nothing recorded does.
    """

    record: dict[str, Any]
    rerun: dict[str, Any]
    verdict: Verdict
    score_differences: tuple[str, ...]
    differences: tuple[str, ...]

    @property
    def reason(self) -> str:
        """Why the scores differ, as far as the records tell, or that they do not."""
        if self.verdict == "same":
            return "same bits"
        if not self.differences:
            return "not established: nothing recorded differs"
        return "; ".join(self.differences)

    def summary(self) -> dict[str, Any]:
        """One JSON line: the run, the verdict, the reason, both test scores and both
        provenances, and the rerun's whole record (kept as an audit, never as a second
        record of the run)."""
        return {"dataset": self.record["dataset"], "method": self.record["method"],
                "seed": self.record["seed"], "config_hash": self.record["config_hash"],
                "verdict": self.verdict, "reason": self.reason,
                "score_differences": list(self.score_differences),
                "differences": list(self.differences),
                "recorded_test": self.record["metrics"]["test"],
                "rerun_test": self.rerun["metrics"]["test"],
                "recorded_provenance": self.record.get("provenance", {}),
                "rerun_provenance": self.rerun.get("provenance", {}),
                "rerun_wall_time_s": self.rerun["wall_time_s"],
                "rerun_record": self.rerun}


def _from_json(template: Any, value: Any) -> Any:
    """``value`` as JSON holds it, back in the type of the configuration field ``template``."""
    if dataclasses.is_dataclass(template) and isinstance(value, Mapping):
        return type(template)(**{k: _from_json(getattr(template, k), v) for k, v in value.items()})
    if isinstance(template, tuple) and isinstance(value, list):
        return tuple(value)
    return value


def _changed_fields(record: Mapping[str, Any], dataset: Any, loop: Any) -> dict[str, Any]:
    """The configuration fields the record's run changed against its method's configuration."""
    entry = registry.get(record["method"])
    params = record["params"]
    tradeoff = params.get(entry.tradeoff) if entry.tradeoff else None
    config = configure(record["method"], dataset, tradeoff, params["scale"])
    default = run_params(record["method"], config, loop, params["scale"],
                         params["data_fingerprint"], _arithmetic(params))
    changed = {}
    for name, value in params.items():
        if default.get(name) != value:
            template = getattr(config, name, None)
            changed[name] = _from_json(template, value)
    return changed


@dataclass(frozen=True)
class _Run:
    """What rebuilds a record's run: the loop's settings, λ or γ, the other fields it changed."""

    loop: Any
    tradeoff: float | None
    overrides: dict[str, Any]


def _arithmetic(params: Mapping[str, Any]) -> str:
    """The arithmetic a record's parameters name (none: the native one)."""
    return params.get("arithmetic", "native")


def rebuilt_hash(record: Mapping[str, Any], dataset: Any = None) -> str:
    """The configuration hash of the run that the protocol builds from ``record``'s fields.

    What an audit reruns: equal to the record's ``config_hash`` when the package still
    builds that run (its configuration, :class:`dkm.methods.config.RunIdentity`, and its
    loop's recorded settings). ``dataset`` is the record's data, or (None) a stand-in of
    its name whose fingerprint is the record's.
    """
    return _rebuild(record, dataset)[1]


def _rebuild(record: Mapping[str, Any], dataset: Any) -> tuple[_Run, str]:
    from dkm.methods.common import LoopConfig
    from dkm.methods.parameters import converted

    params = record["params"]
    if dataset is None:
        dataset = SimpleNamespace(name=record["dataset"], n_samples=0)
    elif data_fingerprint(dataset) != params["data_fingerprint"]:
        raise ValueError(f"{dataset.name}: not the data of the record (fingerprint "
                         f"{data_fingerprint(dataset)}, the record's {params['data_fingerprint']})")
    recorded = {name: params[name] for name in recorded_loop_settings(LoopConfig())}
    loop = LoopConfig(**converted(LoopConfig, recorded),
                      precision=params.get("precision", "float32"), progress=False)
    entry = registry.get(record["method"])
    changed = _changed_fields(record, dataset, loop)
    tradeoff = params.get(entry.tradeoff) if entry.tradeoff else None
    overrides = {k: v for k, v in changed.items() if k != entry.tradeoff}
    config = configure(record["method"], dataset, tradeoff, params["scale"], overrides)
    rebuilt = config_hash(record["dataset"], record["method"], record["seed"],
                          run_params(record["method"], config, loop, params["scale"],
                                     params["data_fingerprint"], _arithmetic(params)))
    return _Run(loop, tradeoff, overrides), rebuilt


def _rebuilt(record: Mapping[str, Any], dataset: Any) -> _Run:
    """The run of ``record`` rebuilt from its fields, checked against its configuration hash."""
    run, rebuilt = _rebuild(record, dataset)
    if rebuilt != record["config_hash"]:
        raise ValueError(f"cannot rebuild the run of {record['config_hash'][:12]} from its fields "
                         f"(the rebuilt one hashes to {rebuilt[:12]})")
    return run


def rerun(record: Mapping[str, Any], dataset: Any) -> dict[str, Any]:
    """Train the run of ``record`` again on ``dataset`` (its data) and return the new record.

    The pretraining is trained again too (in a temporary cache, so that the new
    record names its fingerprint as the record may).

    Raises
    ------
    ValueError
        When the data is not the record's, or the run cannot be rebuilt from the
        record's fields (its configuration hash would differ).
    """
    run = _rebuilt(record, dataset)
    with tempfile.TemporaryDirectory() as cache:
        new, = run_seeds(dataset, record["method"], [record["seed"]], tradeoff=run.tradeoff,
                         scale=record["params"]["scale"], overrides=run.overrides, loop=run.loop,
                         cache_dir=cache)
    return new


def refit(records: Sequence[Mapping[str, Any]], dataset: Any, *,
          cache_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Train the runs of ``records`` again and return what a record does not keep.

    A record keeps a run's scores, not its final embedding, its clusters or its per-epoch
    curves. This trains the runs of one seed again, every method from one shared
    pretraining (:func:`dkm.protocol.experiments.fit_methods`), and returns their full
    results. Rebuilt from the records' fields, in the arithmetic they were made in, on a CPU
    of the same vector instruction sets, the runs are the recorded ones: their scores are the
    records', bit for bit. It costs what the runs cost, less the pretraining when
    ``cache_dir`` holds it (the grid's cache, ``.pretraining-cache/`` beside its store).

    Parameters
    ----------
    records : sequence of dict
        Records of one dataset and seed, one per method, of one scale and loop settings.
    dataset : Dataset
        Their data.
    cache_dir : path, optional
        Where the shared pretraining is cached; None: trained in memory.

    Returns
    -------
    dict of str to MethodResult
        By method id, in the order of ``records``.

    Raises
    ------
    ValueError
        For no records, records of several seeds, scales or loop settings or of one method
        twice, data that is not theirs, or a run that cannot be rebuilt from its fields.
    """
    records = list(records)
    methods = [record["method"] for record in records]
    if not records or len(set(methods)) < len(methods):
        raise ValueError(f"refit takes one record per method, got methods {methods}")
    runs = [_rebuilt(record, dataset) for record in records]
    seeds = {record["seed"] for record in records}
    scales = {record["params"]["scale"] for record in records}
    if len(seeds) > 1 or len(scales) > 1 or any(run.loop != runs[0].loop for run in runs):
        raise ValueError(f"refit takes the records of one seed, scale and loop settings, got "
                         f"seeds {sorted(seeds)} and scales {sorted(scales)}")
    return fit_methods(dataset, methods, sorted(seeds), scale=scales.pop(),
                       tradeoffs={m: run.tradeoff for m, run in zip(methods, runs)
                                  if run.tradeoff is not None},
                       overrides={m: run.overrides for m, run in zip(methods, runs)
                                  if run.overrides},
                       loop=runs[0].loop, cache_dir=cache_dir)


def _scores(record: Mapping[str, Any]) -> dict[str, float]:
    """Every score of a record by its path (``"metrics test nmi"``)."""
    return {f"{source} {split} {metric}": value
            for source in ("metrics", "kmeans_on_embedding")
            for split, scores in (record.get(source) or {}).items()
            for metric, value in scores.items()}


def differences(recorded: Mapping[str, Any], here: Mapping[str, Any]) -> tuple[str, ...]:
    """What differs between two records' provenances that can change a run's bits.

    In this order: the CPU's vector instruction sets (or, for a record that does
    not name them, its CPU), the settings of the arithmetic (instruction-set
    caps, OpenMP's threads), TensorFlow's intra-op threads
    (:func:`dkm.reproducibility.arithmetic.recorded_intra_op_threads`), the cache sizes its matrix
    products blocked by and whether TensorFlow ran its oneDNN kernels (each where both
    records say), the versions of the packages that decide the numbers
    (:func:`dkm.protocol.environment.version_differences`: "TensorFlow 2.22.0 here, 2.21.0 in
    the record") and the lock the environment was installed from, and the code.
    """
    found = []
    before, after = recorded.get("arithmetic"), here.get("arithmetic")
    if before is None:
        cpu = recorded.get("cpu") or recorded.get("device")
        if cpu != here.get("cpu"):
            found.append(f"the record names only its CPU ({cpu}), not its vector instruction "
                         f"sets; rerun on {here.get('cpu')}")
    else:
        if before["vector_extensions"] != after["vector_extensions"]:
            found.append(f"vector instruction sets: recorded on {recorded.get('cpu')} "
                         f"({' '.join(before['vector_extensions'])}), rerun on {here.get('cpu')} "
                         f"({' '.join(after['vector_extensions'])})")
        names = sorted((set(before["environment"]) | set(after["environment"]))
                       - {"TF_NUM_INTRAOP_THREADS"})  # compared as the threads it gives
        changed = [f"{name} {before['environment'].get(name, 'unset')} → "
                   f"{after['environment'].get(name, 'unset')}" for name in names
                   if before["environment"].get(name) != after["environment"].get(name)]
        if changed:
            found.append("settings: " + ", ".join(changed))
        threads = recorded_intra_op_threads(recorded), recorded_intra_op_threads(here)
        if threads[0] != threads[1]:
            found.append("TensorFlow's intra-op threads: "
                         + " → ".join(str(n or "not recorded") for n in threads))
        sizes = before.get("cache_sizes"), after.get("cache_sizes")
        if None not in sizes and sizes[0] != sizes[1]:
            found.append("the cache sizes TensorFlow's matrix products blocked by: "
                         + " → ".join("/".join(str(n) for n in s) for s in sizes))
        onednn = before.get("onednn"), after.get("onednn")
        if None not in onednn and onednn[0] != onednn[1]:
            found.append("TensorFlow's oneDNN kernels: "
                         + " → ".join("on" if on else "off" for on in onednn))
    found.extend(version_differences(recorded, here))
    locks = [(provenance.get("lock") or {}).get("digest") for provenance in (recorded, here)]
    if None not in locks and locks[0] != locks[1]:
        found.append(f"the environment's lock: {locks[1][:12]} here, {locks[0][:12]} in the record")
    if recorded.get("git_commit") != here.get("git_commit"):
        found.append(f"code: {str(recorded.get('git_commit'))[:12]} → "
                     f"{str(here.get('git_commit'))[:12]}")
    return tuple(found)


def audit_record(record: Mapping[str, Any], dataset: Any,
                 train: Callable[[Mapping[str, Any], Any], dict[str, Any]] = rerun) -> Audit:
    """Rerun ``record`` (with ``train``, :func:`rerun` by default) and compare the two."""
    new = train(record, dataset)
    before, after = _scores(record), _scores(new)
    if before.keys() != after.keys():
        raise ValueError(f"the rerun of {record['config_hash'][:12]} has other scores: "
                         f"{sorted(before.keys() ^ after.keys())}")
    differing = {path: (before[path], after[path]) for path in before
                 if before[path] != after[path]}
    if not differing:
        verdict: Verdict = "same"
    elif all(abs(a - b) <= LAST_BITS * max(abs(a), abs(b)) for a, b in differing.values()):
        verdict = "last bits"
    else:
        verdict = "different"
    return Audit(dict(record), new, verdict,
                 tuple(f"{path}: {a!r} → {b!r}" for path, (a, b) in differing.items()),
                 differences(record.get("provenance", {}), new.get("provenance", {})))
