"""Tests of dkm.protocol.results: the record schema, config hashes and the JSON Lines store."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

from dkm.protocol.results import (
    AUDITS,
    COLUMNS,
    ResultsStore,
    every_store,
    check_store_arithmetic,
    config_hash,
    duplicate_runs,
    full_scale_records,
    held_runs,
    full_scale_records_by_store,
    new_record,
    dataset_stores,
    record_arithmetic,
    record_label,
    record_scale,
    records_to_dataframe,
    table_stores,
    results_folder,
    score_column,
    single_arithmetic,
    store_records,
    validate_record,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
PARAMS = {
    "lambda": 1.0,
    "distance": "euclidean",
    "epochs": 100,
    "pretrain_epochs": 50,
    "batch_size": 256,
    "sampler": "permutation",
    "schedule": "constant",
    "scale": 1.0,
}


def scores(acc: float = 0.7, nmi: float = 0.6, ari: float = 0.5) -> dict:
    return {
        "validation": {"acc": acc - 0.01, "nmi": nmi - 0.01, "ari": ari - 0.01},
        "test": {"acc": acc, "nmi": nmi, "ari": ari},
    }


def make_record(seed: int = 8905, method: str = "dkm-p", dataset: str = "usps", **changes) -> dict:
    params = {**PARAMS, **changes.pop("params", {})}
    return new_record(
        dataset,
        method,
        seed,
        params,
        metrics=scores(),
        wall_time_s=1.5,
        **{"provenance": {"dkm_version": "0.1.0"}, **changes},
    )


def test_config_hash_ignores_key_order() -> None:
    shuffled = dict(reversed(list(PARAMS.items())))
    assert config_hash("usps", "dkm-p", 1, PARAMS) == config_hash("usps", "dkm-p", 1, shuffled)
    assert len(config_hash("usps", "dkm-p", 1, PARAMS)) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"params": {**PARAMS, "lambda": 0.1}},
        {"params": {**PARAMS, "distance": "cosine"}},
        {"seed": 2},
        {"method": "dkm-a"},
        {"dataset": "mnist"},
    ],
)
def test_config_hash_differs_for_another_configuration(change: dict) -> None:
    config = {"dataset": "usps", "method": "dkm-p", "seed": 1, "params": PARAMS}
    assert config_hash(**config) != config_hash(**{**config, **change})


def test_config_hash_rejects_nan() -> None:
    with pytest.raises(ValueError, match="not standard JSON"):
        config_hash("usps", "dkm-p", 1, {"lambda": math.nan})


def test_round_trip(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "deep" / "dir" / "runs.jsonl")
    records = [make_record(seed) for seed in (1, 2, 3)]
    for record in records:
        store.append(record)
    assert store.records() == records
    assert store.path.read_text().count("\n") == 3


def test_dataframe_has_flat_columns(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "runs.jsonl")
    store.append(make_record(1, kmeans_on_embedding=scores(acc=0.9)))
    store.append(new_record("usps", "km", 2, {"scale": 0.5}, metrics=None))
    frame = store.to_dataframe()
    assert tuple(frame.columns) == COLUMNS
    first, second = frame.iloc[0], frame.iloc[1]
    assert (first["method"], first["seed"], first["distance"]) == ("dkm-p", 1, "euclidean")
    assert (first["tradeoff_name"], first["tradeoff"], first["scale"]) == ("lambda", 1.0, 1.0)
    assert (first["test_acc"], first["val_acc"], first["km_test_acc"]) == pytest.approx(
        (0.7, 0.69, 0.9)
    )
    assert math.isnan(second["tradeoff"]) and math.isnan(second["test_acc"])
    assert math.isnan(second["km_val_nmi"]) and second["scale"] == 0.5


def test_score_column_names_a_dataframe_column() -> None:
    assert score_column("acc") == "test_acc"
    assert score_column("nmi", "validation") == "val_nmi"
    assert score_column("ari", "test", kmeans_on_embedding=True) == "km_test_ari"
    assert score_column("acc", "validation", True) in COLUMNS
    with pytest.raises(ValueError, match="metric must be one of"):
        score_column("accuracy")
    with pytest.raises(ValueError, match="split must be one of"):
        score_column("acc", "train")


def test_empty_dataframe_keeps_columns() -> None:
    assert tuple(records_to_dataframe([]).columns) == COLUMNS


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r.pop("metrics"), "lacks the keys"),
        (lambda r: r.update(method="dkm"), "method"),
        (lambda r: r.update(seed=True), "seed"),
        (lambda r: r.update(schema=2), "schema"),
        (lambda r: r["metrics"]["test"].update(acc=1.5), "acc"),
        (lambda r: r["metrics"]["test"].update(nmi=math.nan), "not standard JSON"),
        (lambda r: r["metrics"]["test"].pop("ari"), "must map exactly"),
        (lambda r: r["metrics"].pop("validation"), "splits"),
        (lambda r: r.update(config_hash="0" * 64), "config_hash"),
        (lambda r: r.update(created="2026-11-21T17:30:00"), "time zone"),
        (lambda r: r.update(created="yesterday"), "ISO 8601"),
        (lambda r: r.update(wall_time_s=-1), "wall_time_s"),
        (lambda r: r.update(provenance=None), "provenance"),
    ],
)
def test_invalid_records_are_refused(tmp_path: Path, change, message: str) -> None:
    record = make_record()
    change(record)
    with pytest.raises(ValueError, match=message):
        ResultsStore(tmp_path / "runs.jsonl").append(record)
    assert not (tmp_path / "runs.jsonl").exists() or (tmp_path / "runs.jsonl").read_text() == ""


@pytest.mark.parametrize(
    "params, message",
    [
        ({"lambda": 1.0, "gamma": 1.0}, "both"),
        ({"lambda": 0.0}, "positive"),
        ({"distance": "manhattan"}, "distance"),
        ({"scale": -1}, "scale"),
    ],
)
def test_invalid_params_are_refused(params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        new_record("usps", "dkm-p", 1, params, metrics=None)


def test_km_takes_no_tradeoff() -> None:
    with pytest.raises(ValueError, match="takes no 'lambda'"):
        new_record("usps", "km", 1, {"lambda": 1.0}, metrics=None)


def test_negative_ari_is_valid() -> None:
    validate_record(new_record("usps", "dcn-np", 1, {"lambda": 1.0}, metrics=scores(ari=-0.02)))


def test_truncated_last_line_is_skipped_and_repaired(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "runs.jsonl")
    store.append(make_record(1))
    with store.path.open("a") as handle:  # a crash in the middle of the second append
        handle.write(json.dumps(make_record(2))[:57])
    with pytest.warns(RuntimeWarning, match=r"runs\.jsonl:2: skipping"):
        assert [r["seed"] for r in store.records()] == [1]
    store.append(make_record(3))
    lines = store.path.read_text().split("\n")
    assert len(lines) == 4 and lines[-1] == ""  # the fragment kept a line of its own
    with pytest.warns(RuntimeWarning, match=r"runs\.jsonl:2:"):
        assert [r["seed"] for r in store.records()] == [1, 3]


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(make_record(1)))
    store = ResultsStore(path)
    store.append(make_record(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [r["seed"] for r in store.records()] == [1, 2]


def test_invalid_record_on_disk_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text('{"schema": 1}\n' + json.dumps(make_record(1)) + "\n\n")
    with pytest.warns(RuntimeWarning, match=r"runs\.jsonl:1: .*lacks the keys"):
        assert [r["seed"] for r in ResultsStore(path).records()] == [1]


def undeclared_record(seed: int, method: str = "ae-gmm") -> dict:
    """A valid record of a method nobody declared (a plugin's, read without the plugin)."""
    record = {**make_record(seed), "method": method, "params": {"scale": 1.0}}
    return {**record, "config_hash": config_hash("usps", method, seed, record["params"])}


def test_records_of_undeclared_methods_are_kept_and_named_in_one_warning(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    lines = [undeclared_record(1), make_record(2), undeclared_record(3), undeclared_record(4, "x")]
    path.write_text("".join(json.dumps(record) + "\n" for record in lines))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = ResultsStore(path).records()
    assert [(r["method"], r["seed"]) for r in records] == [
        ("ae-gmm", 1), ("dkm-p", 2), ("ae-gmm", 3), ("x", 4)]
    assert len(caught) == 1 and caught[0].category is RuntimeWarning
    message = str(caught[0].message)
    assert message.startswith(f"{path}: 3 records of methods nobody declared, kept")
    assert "ae-gmm (2), x (1)" in message and "--plugin MODULE" in message
    with pytest.raises(ValueError, match="record\\['method'\\] is 'ae-gmm'; expected one of"):
        ResultsStore(path).append(undeclared_record(5))


def test_duplicate_detection(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "runs.jsonl")
    assert store.records() == [] and store.completed_hashes() == set()
    first, second = make_record(1), make_record(2)
    store.append(first)
    assert store.contains(first["config_hash"])
    assert not store.contains(second["config_hash"])
    assert make_record(1)["config_hash"] == first["config_hash"]  # same configuration, same hash
    store.append(second)
    assert store.completed_hashes() == {first["config_hash"], second["config_hash"]}


APPENDER = textwrap.dedent("""
    import sys
    from dkm.protocol.results import ResultsStore, new_record
    store = ResultsStore(sys.argv[1])
    metrics = {s: {"acc": 0.5, "nmi": 0.5, "ari": 0.5} for s in ("validation", "test")}
    for seed in range(int(sys.argv[2])):
        store.append(new_record("usps", "km", seed, {"tag": sys.argv[3]}, metrics=metrics,
                                provenance={"padding": "x" * 200_000}))
""")


def _appender(path: Path, count: int, tag: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(count), tag], env=env)


def test_killed_appender_leaves_complete_lines_readable(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    process = _appender(path, 10_000, "killed")
    deadline = time.monotonic() + 30
    while (not path.exists() or path.read_bytes().count(b"\n") < 3) and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    data = path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1].split(b"\n")[:-1]
    assert len(complete) >= 3
    assert all(json.loads(line)["params"] == {"tag": "killed"} for line in complete)
    store = ResultsStore(path)
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore", RuntimeWarning
        )  # a truncated last line, if the kill cut one
        store.append(make_record(1))
        assert len(store.records()) == len(complete) + 1


def test_concurrent_appenders_do_not_interleave(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    processes = [_appender(path, 15, tag) for tag in ("a", "b")]
    assert all(process.wait(timeout=60) == 0 for process in processes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tags = [record["params"]["tag"] for record in ResultsStore(path).records()]
    assert sorted(tags) == ["a"] * 15 + ["b"] * 15


@pytest.mark.parametrize("method, params, label", [
    ("dkm-p", {"distance": "euclidean"}, "DKM^p"),
    ("dkm-p", {}, "DKM^p"),                       # older records name no distance
    ("dkm-a", {"distance": "cosine"}, "DKM^a_ce"),
    ("ae-km", {}, "AE-KM"),
])
def test_record_label_names_the_distance_only_where_it_is_not_the_papers(method, params, label):
    assert record_label({"method": method, "params": params}) == label


def test_a_results_folder_is_read_with_its_ablations_and_without_small_runs(tmp_path: Path) -> None:
    protocol = ResultsStore(tmp_path / "usps.jsonl")
    study = ResultsStore(tmp_path / "ablations" / "alpha.jsonl")
    ResultsStore(tmp_path / "ablations" / "deeper" / "ignored.jsonl").append(make_record(7))
    (tmp_path / "notes.txt").write_text("not a store")
    full, small = make_record(1), make_record(2, params={"scale": 0.02})
    unnamed = new_record("usps", "km", 3, {}, metrics=scores())  # names no scale
    protocol.append(full)
    protocol.append(small)
    study.append(unnamed)

    assert table_stores(tmp_path) == [protocol.path, study.path]
    assert full_scale_records(tmp_path) == [full, unnamed]
    assert (record_scale(small), record_scale(unnamed)) == (0.02, 1.0)   # absent: the paper's
    assert full_scale_records_by_store(tmp_path) == {protocol.path: [full], study.path: [unnamed]}
    assert table_stores(tmp_path / "missing") == [] == full_scale_records(tmp_path / "missing")
    assert full_scale_records_by_store(tmp_path / "missing") == {}


def test_the_protocol_stores_are_the_named_datasets_stores_in_the_packages_order(tmp_path: Path) -> None:
    for name in ("usps", "mnist", "usps-sharp", "usps-lambda", "my-data"):
        ResultsStore(tmp_path / f"{name}.jsonl").append(make_record(1))
    ResultsStore(tmp_path / "ablations" / "alpha.jsonl").append(make_record(1))
    (tmp_path / "20news.jsonl").mkdir()                  # not a file: not a store

    assert dataset_stores(tmp_path) == {name: tmp_path / f"{name}.jsonl"
                                         for name in ("mnist", "usps", "usps-sharp")}
    assert dataset_stores(tmp_path / "missing") == {}


def _reproducible(record: dict) -> dict:
    """``record`` as a run in the reproducible arithmetic, its provenance saying so."""
    from dkm.reproducibility.arithmetic import reproducible_environment

    return new_record(record["dataset"], record["method"], record["seed"],
                      {**record["params"], "arithmetic": "reproducible"},
                      metrics=record["metrics"],
                      provenance={"arithmetic": {"environment": reproducible_environment({})}})


def test_a_runs_arithmetic_is_part_of_the_run() -> None:
    native = make_record(provenance={"arithmetic": {"environment": {}}})
    reproducible = _reproducible(native)
    assert (record_arithmetic(native), record_arithmetic(reproducible)) == ("native",
                                                                           "reproducible")
    assert native["config_hash"] != reproducible["config_hash"]   # two runs
    with pytest.raises(ValueError, match="'reproducible' or absent"):
        make_record(params={"arithmetic": "native"})           # one spelling per run
    with pytest.raises(ValueError, match="provenance's settings are the native one's"):
        make_record(params={"arithmetic": "reproducible"},
                    provenance={"arithmetic": {"environment": {}}})
    with pytest.raises(ValueError, match="provenance's settings are the reproducible one's"):
        make_record(provenance=reproducible["provenance"])


def test_a_store_keeps_the_runs_of_one_arithmetic(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "usps.jsonl")
    check_store_arithmetic(store, "reproducible")                  # empty: any
    store.append(make_record())
    check_store_arithmetic(store, "native")
    with pytest.raises(ValueError, match=r"native arithmetic.*reproducible one.*--native"):
        check_store_arithmetic(store, "reproducible")


def test_a_stores_runs_in_one_arithmetic_are_read_wherever_the_folder_keeps_them(
        tmp_path: Path) -> None:
    native, other_seed = make_record(1), make_record(2)
    reproducible = _reproducible(native)
    ResultsStore(tmp_path / "usps.jsonl").append(reproducible)
    ResultsStore(tmp_path / "native" / "usps.jsonl").append(native)
    ResultsStore(tmp_path / "mnist.jsonl").append(make_record(1, dataset="mnist"))
    ResultsStore(tmp_path / "native" / "mnist.jsonl").append(other_seed)  # not mnist's folder's

    assert store_records(tmp_path, "usps") == [reproducible]            # the tables' store
    assert store_records(tmp_path, "usps", "reproducible") == [reproducible]
    assert store_records(tmp_path, "usps", "native") == [native]
    assert store_records(tmp_path, "mnist", "reproducible") == []
    assert [r["seed"] for r in store_records(tmp_path, "mnist", "native")] == [1, 2]
    assert store_records(tmp_path, "usps-sharp", "native") == []        # no such store
    with pytest.raises(ValueError, match="arithmetic must be one of"):
        store_records(tmp_path, "usps", "float64")


def test_single_arithmetic_names_the_arithmetics_it_finds_mixed() -> None:
    native = make_record(1)
    assert single_arithmetic([native, make_record(2)]) == "native"
    assert single_arithmetic(iter([_reproducible(native)])) == "reproducible"
    with pytest.raises(ValueError, match="one arithmetic, got native and reproducible"):
        single_arithmetic([native, _reproducible(native)])
    with pytest.raises(ValueError, match="got no record"):
        single_arithmetic([])


def test_every_full_scale_record_is_read_from_the_folders_of_other_stores_not_the_audits(
        tmp_path: Path) -> None:
    tables, other = make_record(1), _reproducible(make_record(1))
    ResultsStore(tmp_path / "usps.jsonl").append(tables)
    ResultsStore(tmp_path / "usps.jsonl").append(make_record(2, params={"scale": 0.02}))
    ResultsStore(tmp_path / "reproducible" / "usps.jsonl").append(other)
    ResultsStore(tmp_path / AUDITS / "usps.jsonl").append(make_record(3))

    assert full_scale_records(tmp_path) == [tables]
    assert full_scale_records(tmp_path, every=True) == [other, tables]   # by store path
    assert full_scale_records(tmp_path / "missing", every=True) == []


def test_a_results_folder_holds_each_run_once_and_its_reruns_are_audits(tmp_path: Path) -> None:
    older, rerun = make_record(1), make_record(1, created="2030-01-01T00:00:00+00:00")
    other = make_record(2)
    ResultsStore(tmp_path / "usps.jsonl").append(older)
    ResultsStore(tmp_path / "usps-lambda.jsonl").append(rerun)
    ResultsStore(tmp_path / "ablations" / "alpha.jsonl").append(other)
    ResultsStore(tmp_path / AUDITS / "usps-lambda.jsonl").append(make_record(2))  # not read

    assert every_store(tmp_path) == [tmp_path / "ablations" / "alpha.jsonl",
                                    tmp_path / "usps-lambda.jsonl", tmp_path / "usps.jsonl"]
    held = held_runs(tmp_path)
    assert held == {older["config_hash"]: (tmp_path / "usps.jsonl", older),   # the older record
                    other["config_hash"]: (tmp_path / "ablations" / "alpha.jsonl", other)}
    assert duplicate_runs(tmp_path) == [[(tmp_path / "usps.jsonl", older),
                                         (tmp_path / "usps-lambda.jsonl", rerun)]]
    assert results_folder(tmp_path / "ablations" / "alpha.jsonl") == tmp_path
    assert results_folder(tmp_path / "usps.jsonl") == tmp_path
    # the runs of a study made in the arithmetic its tables do not read yet
    assert results_folder(tmp_path / "reproducible" / "ablations" / "alpha.jsonl") == tmp_path


def test_the_committed_results_hold_one_record_per_run() -> None:
    import dkm.book.ablations  # noqa: F401  (the studies' methods, until the registry is data)

    duplicates = duplicate_runs(REPO_ROOT / "results")
    described = [f"{records[0][1]['dataset']} {records[0][1]['method']} seed "
                 f"{records[0][1]['seed']}: "
                 + ", ".join(f"{store.relative_to(REPO_ROOT)} (test ACC "
                             f"{100 * record['metrics']['test']['acc']:.2f})"
                             for store, record in records)
                 for records in duplicates]
    assert not duplicates, ("runs with more than one record (keep the oldest; a rerun is an "
                            "audit, in results/audits/): " + "; ".join(described))
