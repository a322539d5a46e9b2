"""python -m dkm audit: a record rebuilt from its fields and rerun, compared bit for bit, and the
reasons it names when the numbers differ."""
from __future__ import annotations

import json
import math

import pytest

from dkm.methods.common import LoopConfig
from dkm.protocol.audit import audit_record, differences, rerun

SMALL = LoopConfig(hidden_sizes=(32, 32, 64), progress=False)

AVX512 = {"vector_extensions": ["avx2", "avx512f"], "environment": {}, "onednn": True,
          "intra_op_threads": 0, "inter_op_threads": 0}
AVX2 = {"vector_extensions": ["avx2"], "environment": {"OMP_NUM_THREADS": "1"}, "onednn": False,
        "intra_op_threads": 0, "inter_op_threads": 0}
@pytest.fixture(scope="module")
def digits():
    from dkm.data import load

    return load("digits")


HERE = {"cpu": "AuthenticAMD family 25 model 1 stepping 1, avx2", "arithmetic": AVX2,
        "tensorflow": "2.21.0", "numpy": "2.4.6", "git_commit": "b" * 40}


def test_differences_name_the_instruction_sets_the_settings_the_libraries_and_the_code():
    recorded = {"cpu": "AuthenticAMD family 25 model 17 stepping 1, avx512f", "arithmetic": AVX512,
                "tensorflow": "2.20.0", "numpy": "2.4.6", "git_commit": "a" * 40}
    assert differences(recorded, HERE) == (
        "vector instruction sets: recorded on AuthenticAMD family 25 model 17 stepping 1, "
        "avx512f (avx2 avx512f), rerun on AuthenticAMD family 25 model 1 stepping 1, avx2 (avx2)",
        "settings: OMP_NUM_THREADS unset → 1",
        "TensorFlow's oneDNN kernels: on → off",
        "TensorFlow 2.21.0 here, 2.20.0 in the record",
        "code: aaaaaaaaaaaa → bbbbbbbbbbbb",
    )
    assert differences(HERE, HERE) == ()
    # a record made before records said whether oneDNN ran: nothing to compare
    unsaid = {**recorded, "arithmetic": {k: v for k, v in AVX512.items() if k != "onednn"}}
    assert "TensorFlow's oneDNN kernels: on → off" not in differences(unsaid, HERE)


def test_differences_name_tensorflows_threads_as_the_number_each_run_had():
    recorded = {**HERE, "device": "CPU: AMD EPYC (4 cores)"}  # 0: one thread per core
    here = {**HERE, "arithmetic": {**AVX2, "intra_op_threads": 2,
                                   "environment": {**AVX2["environment"],
                                                   "TF_NUM_INTRAOP_THREADS": "2"}}}
    assert differences(recorded, here) == ("TensorFlow's intra-op threads: 4 → 2",)
    assert differences({**recorded, "device": "CPU: AMD EPYC (2 cores)"}, here) == ()


def test_differences_name_the_cache_sizes_the_products_blocked_by_where_both_records_do():
    pinned = {**HERE, "arithmetic": {**AVX2, "cache_sizes": [32768, 524288, 268435456]}}
    other = {**HERE, "arithmetic": {**AVX2, "cache_sizes": [49152, 524288, 268435456]}}
    assert differences(pinned, other) == (
        "the cache sizes TensorFlow's matrix products blocked by: "
        "32768/524288/268435456 → 49152/524288/268435456",)
    assert differences(HERE, other) == ()  # made before records named them


def test_a_record_without_its_arithmetic_names_only_its_cpu():
    older = {"device": "CPU: AMD EPYC (2 cores)", "git_commit": "b" * 40}
    assert differences(older, HERE) == (
        "the record names only its CPU (CPU: AMD EPYC (2 cores)), not its vector instruction "
        "sets; rerun on AuthenticAMD family 25 model 1 stepping 1, avx2",)


def test_the_verdict_compares_every_score_bit_for_bit(digits):
    from dkm.protocol.experiments import run_seeds

    record, = run_seeds(digits, "km", [3], scale=0.02, loop=SMALL)
    nudged = json.loads(json.dumps(record))
    nmi = record["metrics"]["validation"]["nmi"]
    nudged["metrics"]["validation"]["nmi"] = math.nextafter(nmi, 1.0)  # one bit more
    nudged["provenance"] = {**record["provenance"], "git_commit": "c" * 40}
    audit = audit_record(nudged, digits, train=lambda r, d: record)
    assert audit.verdict == "last bits" and audit.reason.startswith("code: cccccccccccc")
    assert audit.score_differences == (
        f"metrics validation nmi: {math.nextafter(nmi, 1.0)!r} → {nmi!r}",)
    nudged["metrics"]["test"]["acc"] += 0.01
    assert audit_record(nudged, digits, train=lambda r, d: record).verdict == "different"
    same = audit_record(record, digits, train=lambda r, d: record)
    assert (same.verdict, same.reason) == ("same", "same bits")
    assert same.summary()["recorded_test"] == record["metrics"]["test"]


@pytest.mark.parametrize("method, overrides", [("dkm-p", {"distance": "cosine"}),
                                               ("dcn-np", {}), ("ae-km", {})])
def test_a_record_rebuilt_from_its_fields_reruns_to_the_same_bits(digits, method, overrides):
    from dkm.protocol.experiments import run_seeds

    record, = run_seeds(digits, method, [5], scale=0.02, loop=SMALL, overrides=overrides,
                        tradeoff=0.5 if method != "ae-km" else None)
    audit = audit_record(record, digits)
    assert audit.rerun["config_hash"] == record["config_hash"]
    assert audit.verdict == "same", audit.reason


def test_a_record_of_other_data_is_refused(digits):
    from dkm.protocol.experiments import run_seeds

    record, = run_seeds(digits, "km", [3], scale=0.02, loop=SMALL)
    record["params"]["data_fingerprint"] = "0" * 16
    with pytest.raises(ValueError, match="not the data of the record"):
        rerun(record, digits)


def test_audit_reruns_records_in_their_own_arithmetic_and_threads_only(tmp_path, cli, monkeypatch):
    from dkm.reproducibility.arithmetic import reproducible_environment
    from dkm.protocol.results import ResultsStore, new_record

    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "1")  # restored: audit sets the records' number
    store = ResultsStore(tmp_path / "digits.jsonl")
    scores = {"validation": {"acc": 0.5, "nmi": 0.5, "ari": 0.5},
              "test": {"acc": 0.5, "nmi": 0.5, "ari": 0.5}}
    store.append(new_record("digits", "km", 8905, {"arithmetic": "reproducible", "scale": 1.0},
                            metrics=scores, provenance={
                                "arithmetic": {"environment": reproducible_environment({})}}))
    refused = cli("audit", "--results", str(store.path), "--native")
    assert refused.returncode == 2
    assert "made in the reproducible arithmetic" in refused.stderr
    assert "leave --native out" in refused.stderr
    # a record made on four cores without the number named, beside one made on two threads
    unnamed = {k: v for k, v in reproducible_environment({}).items()
               if k != "TF_NUM_INTRAOP_THREADS"}
    store.append(new_record("digits", "km", 291, {"arithmetic": "reproducible", "scale": 1.0},
                            metrics=scores, provenance={"device": "CPU: AMD EPYC (4 cores)",
                                                        "arithmetic": {"environment": unnamed}}))
    mixed = cli("audit", "--results", str(store.path))
    assert mixed.returncode == 2
    assert "ran TensorFlow on 2 and 4 intra-op threads: audit them apart" in mixed.stderr


def test_refit_trains_one_seeds_runs_again_and_keeps_what_their_records_do_not(digits, tmp_path):
    from dkm.protocol.audit import refit
    from dkm.protocol.experiments import run_seeds, split_scores

    records = [run_seeds(digits, method, [5], scale=0.02, loop=SMALL, cache_dir=tmp_path)[0]
               for method in ("km", "dkm-p")]
    fitted = refit(records, digits, cache_dir=tmp_path)
    assert list(fitted) == ["km", "dkm-p"]
    for record in records:   # the recorded runs, bit for bit
        assert split_scores(digits.y, fitted[record["method"]].labels[0]) == record["metrics"]
    assert fitted["dkm-p"].embeddings.shape == (1, digits.n_samples, digits.n_clusters)
    assert {"pretrain_loss", "loss"} <= set(fitted["dkm-p"].history)
    other, = run_seeds(digits, "dkm-p", [6], scale=0.02, loop=SMALL)
    with pytest.raises(ValueError, match="one seed"):
        refit([records[0], other], digits)
    with pytest.raises(ValueError, match="one record per method"):
        refit([records[1], records[1]], digits)


def test_an_audit_in_another_environment_names_the_packages_and_both_versions(digits, tmp_path,
                                                                                 cli):
    from dkm.protocol.experiments import run_seeds
    from dkm.protocol.results import ResultsStore

    record, = run_seeds(digits, "km", [3], scale=0.02, loop=SMALL)
    here = record["provenance"]["tensorflow"]
    older = json.loads(json.dumps(record))
    older["provenance"]["tensorflow"] = "2.20.0"
    older["metrics"]["test"]["acc"] = min(1.0, record["metrics"]["test"]["acc"] + 0.01)
    audit = audit_record(older, digits, train=lambda r, d: record)
    assert audit.verdict == "different"
    assert f"TensorFlow {here} here, 2.20.0 in the record" in audit.reason
    # the command says so before it reruns, and names them again in its verdict
    store = ResultsStore(tmp_path / "digits.jsonl")
    store.append(older)
    done = cli("audit", "--results", str(store.path))
    assert done.returncode == 0, done.stderr
    before = f"the packages differ from the record's (TensorFlow {here} here, 2.20.0 in the record)"
    assert before in done.stderr
    assert done.stdout.startswith("digits km seed 3: different")
    assert f"TensorFlow {here} here, 2.20.0 in the record" in done.stdout
