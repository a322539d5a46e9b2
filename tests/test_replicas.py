"""Seeds trained together as one computation (:mod:`dkm.replicas`) give what separate runs
give (issue 7); the layouts' choice by device and their checks.

Each method trains seeds ``[7, 11]`` as one computation (S = 2) in both layouts of the shared
loop (``"stacked"``: batched products; ``"sequential"``: each replica's epoch in turn, in the
same compiled call) and seed ``11`` alone (S = 1), on real data (digits) through the default,
XLA-compiled loop. The replica of seed 11 must match the separate run: same labels, same
training curves and weights to float32 round-off. Measured on this machine: the sequential
layout agrees bit for bit for every method; the stacked one bit for bit for DKM and DCN, and
IDEC's weights differ by at most 6e-8 (its target distribution is computed on the whole data,
where the batched products round differently). The tolerances below leave room for other BLAS
kernels.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import tensorflow as tf
from sklearn.datasets import load_digits

from dkm.autoencoder import Architecture, Autoencoder
from dkm.methods.common import LoopConfig
from dkm.protocol import registry
from dkm.replicas import LAYOUTS, default_layout, default_seeds_per_batch, make_trainer
from dkm.training import Adam, BatchSampler, Reconstruction

LOOP = LoopConfig(hidden_sizes=(32, 32, 64), batch_size=128, progress=False)
K = 6
SCALE = 0.02  # 1 pretraining epoch, then 1 to 4 epochs (DKM^a: its 40 α values, 1 epoch each)
METHODS = ["dkm-p", "dkm-a", "dcn-p", "dcn-np", "idec-p", "idec-np"]


@pytest.fixture(scope="module")
def data():
    X = load_digits().data[:600].astype(np.float32) / 16
    return X


@pytest.mark.parametrize("method", METHODS)
def test_a_replica_of_a_batched_run_equals_the_separate_run(method, data):
    entry = registry.get(method)  # the protocol's route: the method's estimator
    config = entry.default_config().scaled(SCALE)
    if method.startswith("idec"):
        config = dataclasses.replace(config, update_interval=3)
    alone = entry.train(data, K, [11], config, LOOP)

    for layout in LAYOUTS:
        together = entry.train(data, K, [7, 11], config, dataclasses.replace(LOOP, layout=layout))
        np.testing.assert_array_equal(together.labels[1], alone.labels[0], err_msg=layout)
        for name, curve in alone.history.items():
            np.testing.assert_allclose(together.history[name][1], curve[0], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{layout}: {name}")
        for w_together, w_alone in zip(together.weights, alone.weights):
            np.testing.assert_allclose(w_together[1], w_alone[0], rtol=1e-4, atol=1e-6,
                                       err_msg=layout)
        np.testing.assert_allclose(together.centers[1], alone.centers[0], rtol=1e-4, atol=1e-6,
                                   err_msg=layout)


SMALL = Architecture(input_dim=8, embedding_dim=3, hidden_sizes=(16, 16, 32))


def test_default_seeds_per_batch_stacks_on_a_gpu_only(monkeypatch):
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: [])
    assert default_seeds_per_batch(10) == 1
    monkeypatch.setattr(tf.config, "list_physical_devices",
                        lambda kind=None: ["GPU:0"] if kind == "GPU" else [])
    assert default_seeds_per_batch(10) == 10
    with pytest.raises(ValueError, match="at least 1"):
        default_seeds_per_batch(0)


def test_default_layout_is_stacked_on_a_gpu_only(monkeypatch):
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: [])
    assert default_layout() == "sequential"
    monkeypatch.setattr(tf.config, "list_physical_devices",
                        lambda kind=None: ["GPU:0"] if kind == "GPU" else [])
    assert default_layout() == "stacked"


def test_an_unknown_layout_is_refused():
    autoencoder = Autoencoder(SMALL, [0, 1])
    with pytest.raises(ValueError, match="unknown layout 'diagonal'"):
        make_trainer(autoencoder, Reconstruction(), tf.zeros((10, 8)), Adam(), layout="diagonal")


@pytest.mark.parametrize("layout", ["stacked", "sequential"])
def test_replicas_advance_adams_step_count_together(layout):
    # Three steps of two replicas are three steps of Adam, not six, whatever the layout:
    # the bias correction of every replica must see t = 1, 2, 3 as in a run of its own.
    data = np.random.default_rng(0).normal(size=(96, 8)).astype(np.float32)
    adam = Adam()
    trainer = make_trainer(Autoencoder(SMALL, [0, 1]), Reconstruction(), tf.constant(data), adam,
                           layout=layout)
    sampler = BatchSampler(96, 32, [0, 1], "pretrain")
    for epoch in range(2):
        trainer.run_epoch(sampler.next_epoch())
        assert adam.iterations.numpy() == 3.0 * (epoch + 1)


def test_the_sequential_layout_needs_the_objectives_per_replica_state():
    class Bare:  # names no per-replica state
        variables: list = []
        term_names = ("reconstruction",)

    class Unlisted(Reconstruction):  # trains a per-replica variable it does not list
        def __init__(self):
            self.scale = tf.Variable(tf.ones([2, 1]), name="scale")
            self.variables = [self.scale]

    autoencoder = Autoencoder(SMALL, [0, 1])
    data = tf.zeros((10, 8))
    with pytest.raises(TypeError, match="does not name its per-replica state"):
        make_trainer(autoencoder, Bare(), data, Adam(), layout="sequential")
    with pytest.raises(ValueError, match=r"Unlisted trains \['scale:0'\] but does not list"):
        make_trainer(autoencoder, Unlisted(), data, Adam(), layout="sequential")
    make_trainer(autoencoder, Unlisted(), data, Adam(), layout="stacked")  # stacked needs no names
