"""The precision of the networks' matrix products: float32 (the default, the records') and
bfloat16, through the autoencoder, the estimators, the protocol's records and the command line."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from dkm.autoencoder import Architecture, Autoencoder
from dkm.data import load
from dkm.methods.common import LoopConfig
from dkm.methods.dkm import DeepKMeans
from dkm.methods.pretraining import pretraining_key
from dkm.protocol.experiments import configure, data_fingerprint, run_params, run_seeds
from dkm.training import Adam, Reconstruction, xla_pays

TINY = LoopConfig(hidden_sizes=(32, 32, 64), progress=False)
BFLOAT16 = dataclasses.replace(TINY, precision="bfloat16")


@pytest.fixture(scope="module")
def digits():
    return load("digits")


def test_bfloat16_products_round_what_float32_computes():
    architecture = Architecture(64, 10, (32, 32, 64))
    x = tf.constant(np.random.default_rng(0).uniform(0, 1, (1, 50, 64)), tf.float32)
    exact = Autoencoder(architecture, [3]).encode(x).numpy()
    rounded = Autoencoder(architecture, [3], products="bfloat16").encode(x).numpy()
    assert rounded.dtype == np.float32
    assert not np.array_equal(exact, rounded)
    # bfloat16 keeps 8 significant bits: a relative error of a few times 2^-8 over four layers
    assert np.max(np.abs(rounded - exact)) < 0.05 * np.max(np.abs(exact))


def test_an_unknown_precision_is_refused():
    with pytest.raises(ValueError, match="products must be one of 'float32', 'bfloat16', "
                                         "got 'float16'"):
        Autoencoder(Architecture(4, 2, (3,)), [0], products="float16")
    with pytest.raises(ValueError, match="precision"):
        DeepKMeans(2, precision="float16", progress=False).fit(np.eye(4, dtype=np.float32))


def test_bfloat16_epochs_run_on_tensorflows_kernels_on_a_cpu():
    assert xla_pays("float32")
    assert xla_pays("bfloat16") == bool(tf.config.list_physical_devices("GPU"))
    architecture = Architecture(8, 2, (4,))
    data = tf.constant(np.zeros((10, 8), np.float32))
    for loop in (TINY, BFLOAT16):
        network = loop.autoencoder(architecture, [0])
        trainer = loop.trainer(network, Reconstruction(), data, Adam())
        assert network.products == loop.precision
        assert trainer.jit_compile == xla_pays(loop.precision)


def test_a_bfloat16_estimator_embeds_as_it_trained_and_differs_from_float32(digits):
    X = digits.X[:300]
    settings = dict(variant="p", pretrain_epochs=2, schedule=[1000.0] * 2,
                    hidden_sizes=(32, 32, 64), random_state=0, progress=False)
    rounded = DeepKMeans(10, precision="bfloat16", **settings).fit(X)
    exact = DeepKMeans(10, **settings).fit(X)
    np.testing.assert_array_equal(rounded.transform(X), rounded.embedding_)
    np.testing.assert_array_equal(rounded.predict(X), rounded.labels_)
    assert not np.array_equal(rounded.embedding_, exact.embedding_)


def test_the_precision_names_a_pretraining_and_a_record_only_when_bfloat16(digits):
    architecture = TINY.architecture(digits.n_features, digits.n_clusters)
    assert (pretraining_key(digits.X, architecture, 5, TINY)
            != pretraining_key(digits.X, architecture, 5, BFLOAT16))
    fingerprint = data_fingerprint(digits)
    for method in ("dkm-p", "km"):
        config = configure(method, digits)
        exact = run_params(method, config, TINY, 1.0, fingerprint)
        rounded = run_params(method, config, BFLOAT16, 1.0, fingerprint)
        assert "precision" not in exact  # float32's records keep the hashes they had
        # KM trains no network: its runs are the same in either precision
        assert rounded == ({**exact, "precision": "bfloat16"} if method == "dkm-p" else exact)


def test_a_bfloat16_run_is_recorded_as_such(digits):
    exact, = run_seeds(digits, "dkm-p", [8905], scale=0.02, loop=TINY)
    rounded, = run_seeds(digits, "dkm-p", [8905], scale=0.02, loop=BFLOAT16)
    assert rounded["params"]["precision"] == "bfloat16"
    assert rounded["config_hash"] != exact["config_hash"]


def test_the_command_line_refuses_bfloat16_with_the_reproducible_arithmetic(cli, tmp_path,
                                                                            monkeypatch):
    from dkm import cli as command_line

    monkeypatch.setattr(command_line, "use_reproducible_arithmetic", lambda: None)
    completed = cli("run", "--dataset", "digits", "--method", "dkm-p", "--precision", "bfloat16",
                    "--reproducible", "--results", str(tmp_path / "x.jsonl"))
    assert completed.returncode == 2
    assert ("--precision bfloat16 needs the instructions that the reproducible arithmetic caps "
            "away (AVX2 has no bfloat16 products); add --native") in completed.stderr
