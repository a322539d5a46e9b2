"""The reproducible arithmetic (dkm.reproducibility.arithmetic): its settings, its pinned cache sizes, a fit and
a network's products that every machine the tests run on must compute bit for bit, and the
thread count that must not change a fit.

The fits are ``tests/small_fit.py``'s, each in a process of its own (the ``small_fit`` fixture);
``python tests/small_fit.py reproducible > tests/fixtures/reproducible-dkm-p.json`` writes the
fixture (with the CPU it was made on). The products are ``tests/products.py``'s (the
``products`` fixture), whose docstring says how their fixture is written: the small fit's
products block alike with the L2 sizes of today's CPUs, a full-scale network's do not.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dkm.reproducibility.arithmetic import (REPRODUCIBLE_CACHE_SIZES, REPRODUCIBLE_INTRA_OP_THREADS,
                            REPRODUCIBLE_ISA, intra_op_threads,
                            is_reproducible, recorded_arithmetic, recorded_intra_op_threads,
                            reproducible_environment, use_reproducible_arithmetic)
from dkm.protocol.environment import version_differences

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "reproducible-dkm-p.json"
PRODUCTS_FIXTURE = REPO_ROOT / "tests" / "fixtures" / "reproducible-products.json"


def test_the_environment_caps_onednn_and_xla_and_keeps_other_xla_flags():
    environment = reproducible_environment(
        {"XLA_FLAGS": "--xla_cpu_enable_fast_math=false --xla_cpu_max_isa=AVX512 "
                      "--xla_cpu_enable_platform_dependent_math=true"})
    assert environment == {
        "TF_ENABLE_ONEDNN_OPTS": "0",
        "ONEDNN_MAX_CPU_ISA": REPRODUCIBLE_ISA,
        "XLA_FLAGS": "--xla_cpu_enable_fast_math=false --xla_cpu_max_isa=AVX2 "
                     "--xla_cpu_enable_platform_dependent_math=false",
        "OMP_NUM_THREADS": "1",
        "TF_NUM_INTRAOP_THREADS": str(REPRODUCIBLE_INTRA_OP_THREADS)}
    assert is_reproducible(environment)
    assert not is_reproducible({**environment, "XLA_FLAGS": ""})  # XLA not capped
    assert not is_reproducible({**environment, "XLA_FLAGS": "--xla_cpu_max_isa=AVX2"})
    assert not is_reproducible({**environment, "TF_ENABLE_ONEDNN_OPTS": "1"})
    assert not is_reproducible({**environment, "OMP_NUM_THREADS": "2"})
    assert not is_reproducible({})


def test_tensorflows_threads_are_fixed_unless_named_and_a_record_says_how_many_it_ran():
    assert REPRODUCIBLE_INTRA_OP_THREADS == 2  # the USPS protocol's records ran two
    assert reproducible_environment({"TF_NUM_INTRAOP_THREADS": "1"})["TF_NUM_INTRAOP_THREADS"] == "1"
    assert intra_op_threads({"TF_NUM_INTRAOP_THREADS": "3"}) == 3
    assert intra_op_threads({}) == len(os.sched_getaffinity(0))
    named = {"arithmetic": {"intra_op_threads": 2, "environment": {}}, "device": "CPU: x (8 cores)"}
    assert recorded_intra_op_threads(named) == 2
    # records made before provenance named the number: the variable where set, else the cores
    older = {"arithmetic": {"intra_op_threads": 0, "environment": {}}, "device": "CPU: x (4 cores)"}
    assert recorded_intra_op_threads(older) == 4
    older["arithmetic"]["environment"]["TF_NUM_INTRAOP_THREADS"] = "1"
    assert recorded_intra_op_threads(older) == 1
    assert recorded_intra_op_threads({"device": "GPU: y"}) is None


def test_a_provenance_names_the_arithmetic_of_its_run():
    assert recorded_arithmetic({"arithmetic": {
        "environment": reproducible_environment({})}}) == "reproducible"
    assert recorded_arithmetic({"arithmetic": {"environment": {}}}) == "native"
    assert recorded_arithmetic({}) == "native"   # made before it was named


def test_it_must_be_chosen_before_tensorflow_starts(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", object())
    with pytest.raises(RuntimeError, match="before TensorFlow is imported; start Python with "
                                           "TF_ENABLE_ONEDNN_OPTS='0' ONEDNN_MAX_CPU_ISA='AVX2'"):
        use_reproducible_arithmetic()


def test_a_cpu_without_avx2_is_refused(monkeypatch):
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    monkeypatch.setattr(os, "environ", {})
    with pytest.raises(RuntimeError, match="no AVX2"):
        use_reproducible_arithmetic("processor : 0\nflags : fpu sse4_2 avx\n")
    assert os.environ == {}


def _comparable(fit: dict) -> dict:
    return {k: v for k, v in fit.items() if k not in ("cpu", "versions")}


def _other_bits(made: dict, fixture: dict) -> str:
    """Why this machine computes other bits than a fixture, as far as the two say: the packages
    that decide the numbers (the lock's, which `make test` installs), else the CPU."""
    versions = version_differences(fixture["versions"], made["versions"], "the fixture")
    if versions:
        return (f"the packages differ from the fixture's ({'; '.join(versions)}): install the "
                "lock's versions (`make test` does)")
    return (f"this CPU ({made['cpu']}) computes other bits than the fixture's "
            f"({fixture['cpu']}) with the fixture's packages")


def test_a_fixtures_failure_says_whether_the_packages_or_the_cpu_differ():
    fixture = {"cpu": "AuthenticAMD family 25 model 1 stepping 1, avx2",
               "versions": {"tensorflow": "2.21.0", "numpy": "2.4.6"}}
    moved = {"cpu": fixture["cpu"], "versions": {"tensorflow": "2.22.0", "numpy": "2.4.6"}}
    assert _other_bits(moved, fixture).startswith(
        "the packages differ from the fixture's (TensorFlow 2.22.0 here, 2.21.0 in the fixture)")
    other_cpu = {"cpu": "GenuineIntel family 6 model 207 stepping 2, avx512f",
                 "versions": fixture["versions"]}
    assert _other_bits(other_cpu, fixture) == (
        "this CPU (GenuineIntel family 6 model 207 stepping 2, avx512f) computes other bits "
        "than the fixture's (AuthenticAMD family 25 model 1 stepping 1, avx2) with the "
        "fixture's packages")


def test_the_reproducible_fit_is_the_fixtures_bit_for_bit(small_fit):
    # the fixture was made with one thread of each kind; this fit asks for two of each
    fixture = json.loads(FIXTURE.read_text())
    fit = small_fit("reproducible", TF_NUM_INTRAOP_THREADS="2", OMP_NUM_THREADS="2")
    assert is_reproducible(fit["environment"])
    assert fit["cache_sizes"] == fixture["cache_sizes"] == list(REPRODUCIBLE_CACHE_SIZES)
    assert _comparable(fit) == _comparable(fixture), (
        f"in the reproducible arithmetic {_other_bits(fit, fixture)}")


def _products_against_fixture(products, **told) -> tuple[dict, dict, list[str]]:
    """The fixture's products, the same products made here (``told``: the ``products``
    fixture's ``cache_sizes``) on the mode's threads, as the fixture's were, and the keys of
    those whose bits differ."""
    fixture = json.loads(PRODUCTS_FIXTURE.read_text())
    networks = sorted({key.split("|")[0] for key in fixture["digests"]})
    made = products(*networks, TF_NUM_INTRAOP_THREADS=str(REPRODUCIBLE_INTRA_OP_THREADS), **told)
    return fixture, made, [key for key, digest in fixture["digests"].items()
                           if made["digests"][key] != digest]


def test_the_reproducible_products_are_the_fixtures_bit_for_bit(products):
    fixture, made, differing = _products_against_fixture(products)
    assert made["cache_sizes"] == fixture["cache_sizes"] == list(REPRODUCIBLE_CACHE_SIZES)
    assert not differing, (f"in the reproducible arithmetic {_other_bits(made, fixture)}: "
                           f"{differing}")


def test_the_cache_sizes_decide_how_the_products_block(products):
    # told another CPU's sizes (48 KiB of L1, 1 MiB of L2), the pin changes the blocking the
    # fixture's bits come from: the small fit's embedding (the L1) and a full-scale network's
    # weight gradients (the L2) round otherwise; so a CPU whose sizes the pin missed would fail
    # the test above
    _, told, differing = _products_against_fixture(products,
                                                   cache_sizes=(49152, 1048576, 33554432))
    assert told["cache_sizes"] == [49152, 1048576, 33554432]
    assert "small fit|embedding|500×64|" in differing
    assert any(key.startswith("USPS|training step") and key.endswith("weight gradient")
               for key in differing)
    assert not any(key.endswith(("forward", "input gradient")) for key in differing)


def test_a_process_started_in_the_mode_pins_the_cache_sizes_before_its_first_product():
    # its parent set the variables (a Dask worker's, say), and the protocol's training calls
    # pin_reproducible_cache_sizes; the native arithmetic leaves Eigen to read the CPU's, or,
    # where TensorFlow runs its oneDNN kernels (CPUs with VNNI, bfloat16 or AMX instructions),
    # never multiplies through Eigen, which then reads no size at all
    program = ("import tensorflow as tf; from dkm.reproducibility import pin_reproducible_cache_sizes;"
               "from dkm.reproducibility.cache_sizes import tensorflow_cache_sizes;"
               "from dkm.protocol.provenance import arithmetic_settings;"
               "pin_reproducible_cache_sizes();"
               "tf.matmul(tf.ones((64, 400)), tf.ones((400, 64)));"
               "print(arithmetic_settings()['onednn']); print(tensorflow_cache_sizes())")
    sizes = {}
    for mode, variables in (("reproducible", reproducible_environment({})), ("native", {})):
        env = {k: v for k, v in os.environ.items()
               if k not in reproducible_environment({}) or k == "TF_NUM_INTRAOP_THREADS"}
        done = subprocess.run([sys.executable, "-c", program], cwd=REPO_ROOT, text=True,
                              env={**env, **variables, "PYTHONPATH": str(REPO_ROOT)},
                              capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        sizes[mode] = done.stdout.split("\n")[-3:-1]  # oneDNN on, the sizes
    assert sizes["reproducible"] == ["False", str(REPRODUCIBLE_CACHE_SIZES)]
    onednn, native_sizes = sizes["native"]
    assert native_sizes == "None" if onednn == "True" else native_sizes.startswith("(")


def test_one_or_two_intra_op_threads_give_the_same_fit(small_fit):
    one, two = (small_fit("native", TF_NUM_INTRAOP_THREADS=str(n), OMP_NUM_THREADS="1")
                for n in (1, 2))
    assert _comparable(one) == _comparable(two)
