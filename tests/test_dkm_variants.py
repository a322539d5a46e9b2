"""DKM's ablation switches (dkm.book.ablations): the hard-assignment limit, weight decay and α
rescaling."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from sklearn.datasets import load_digits

from dkm.autoencoder import Architecture, Autoencoder
from dkm.methods.common import LoopConfig
from dkm.annealing import constant
from dkm.book.ablations import _switches
from dkm.book.ablations._switches import DKMAblationConfig, DKMAblationObjective
from dkm.methods.template import fit_deep_method

TINY = Architecture(input_dim=4, embedding_dim=2, hidden_sizes=(8, 8, 8))
LOOP = LoopConfig(hidden_sizes=(32, 32, 64), batch_size=128, progress=False, jit_compile=False)


def _batch(seed: int = 0):
    rng = np.random.default_rng(seed)
    autoencoder = Autoencoder(TINY, [0, 1])
    x = tf.constant(rng.normal(size=(2, 5, 4)).astype(np.float32))
    h = autoencoder.encode(x)
    return autoencoder, rng.normal(size=(2, 3, 2)).astype(np.float32), x, h


def test_hard_assignment_is_the_distance_to_the_nearest_representative():
    autoencoder, representatives, x, h = _batch()
    hard = DKMAblationObjective(representatives, 0.5, assignment="hard")
    soft = DKMAblationObjective(representatives, 0.5)
    soft.set_alpha(1e4)
    distances = ((h.numpy()[:, :, None] - representatives[:, None]) ** 2).sum(-1)
    _, hard_terms = hard.per_sample_loss(x, autoencoder.decode(h), h, None)
    _, soft_terms = soft.per_sample_loss(x, autoencoder.decode(h), h, None)
    np.testing.assert_allclose(hard_terms["clustering"].numpy(), distances.min(-1), rtol=1e-5)
    # the soft term at a large α is the same limit
    np.testing.assert_allclose(soft_terms["clustering"].numpy(), distances.min(-1), rtol=1e-3)
    with tf.GradientTape() as tape:
        loss, _ = hard.per_sample_loss(x, autoencoder.decode(h), h, None)
        total = tf.reduce_sum(loss)
    moved = np.abs(tape.gradient(total, hard.representatives).numpy()).sum(-1) > 0
    nearest = distances.argmin(-1)
    for s in range(2):  # only representatives that are some sample's nearest get a gradient
        np.testing.assert_array_equal(moved[s], np.isin(np.arange(3), nearest[s]))


def test_weight_decay_adds_the_squared_kernels_of_each_replica():
    autoencoder, representatives, x, h = _batch()
    x_hat = autoencoder.decode(h)
    plain, _ = DKMAblationObjective(representatives, 0.5).per_sample_loss(x, x_hat, h, None)
    decayed, _ = DKMAblationObjective(representatives, 0.5, weight_decay=0.01,
                              autoencoder=autoencoder).per_sample_loss(x, x_hat, h, None)
    kernels = [w.numpy() for w in autoencoder.params if w.shape.rank == 3]
    penalty = sum((w**2).sum(axis=(1, 2)) for w in kernels)
    np.testing.assert_allclose((decayed - plain).numpy(), np.repeat(0.01 * penalty[:, None], 5, 1),
                               rtol=1e-4)


def test_weight_decay_needs_the_network():
    _, representatives, _, _ = _batch()
    with pytest.raises(ValueError, match="autoencoder"):
        DKMAblationObjective(representatives, 0.5, weight_decay=0.1)


@pytest.mark.parametrize("field, value", [("assignment", "argmin"), ("weight_decay", -1.0)])
def test_dkm_config_rejects_bad_switches(field, value):
    with pytest.raises(ValueError, match=field):
        DKMAblationConfig(**{field: value})


def test_hard_dkm_with_weight_decay_trains():
    X = load_digits().data[:300].astype(np.float32) / 16.0
    plain = fit_deep_method(X, 5, [4], DKMAblationConfig(pretrain_epochs=1).scaled(0.02), LOOP)
    config = DKMAblationConfig(pretrain_epochs=1, assignment="hard", weight_decay=1e-3).scaled(0.02)
    result = fit_deep_method(X, 5, [4], config, LOOP)
    assert result.labels.shape == (1, 300)
    assert np.isfinite(result.history["loss"]).all()
    assert result.history["loss"][0, -1] != plain.history["loss"][0, -1]


def test_set_alpha_takes_one_value_or_one_per_replica():
    _, representatives, _, _ = _batch()
    objective = DKMAblationObjective(representatives, 0.5)
    objective.set_alpha(3.0)
    np.testing.assert_array_equal(objective.alpha.numpy().ravel(), [3.0, 3.0])
    objective.set_alpha([1.0, 7.0])
    np.testing.assert_array_equal(objective.alpha.numpy().ravel(), [1.0, 7.0])
    assert objective.alpha.shape == (2, 1, 1)


def test_alpha_rescaling_needs_the_soft_assignment():
    with pytest.raises(ValueError, match="alpha_rescaling"):
        DKMAblationConfig(alpha_rescaling=True, assignment="hard")


def _scripted_norms(monkeypatch, norms):
    """Make the rescaling read these mean embedding norms ``(S,)``, one per call, in order."""
    calls = iter(np.asarray(norms, np.float32))
    monkeypatch.setattr(_switches, "mean_embedding_norm", lambda autoencoder, data: next(calls))


def test_alpha_rescaling_multiplies_alpha_by_the_squared_norm_ratio(monkeypatch):
    X = load_digits().data[:300].astype(np.float32) / 16.0
    # the start, then after epochs 1 and 2 (the α of epochs 2 and 3); replica 1 does not shrink
    _scripted_norms(monkeypatch, [[2.0, 4.0], [1.0, 4.0], [0.5, 4.0]])
    config = DKMAblationConfig(pretrain_epochs=1, schedule=constant(10.0, 3), alpha_rescaling=True)
    result = fit_deep_method(X, 5, [4, 5], config, LOOP)
    np.testing.assert_allclose(result.history["alpha"], [[10.0, 40.0, 160.0],
                                                         [10.0, 10.0, 10.0]])


def test_alpha_rescaling_at_a_constant_norm_changes_nothing(monkeypatch):
    X = load_digits().data[:300].astype(np.float32) / 16.0
    config = DKMAblationConfig(pretrain_epochs=1, schedule=constant(10.0, 3))
    plain = fit_deep_method(X, 5, [4, 5], config, LOOP)
    _scripted_norms(monkeypatch, [[2.0, 3.0]] * 3)
    rescaled = fit_deep_method(X, 5, [4, 5], DKMAblationConfig(**{**config.__dict__, "alpha_rescaling": True}),
                       LOOP)
    np.testing.assert_array_equal(rescaled.labels, plain.labels)
    np.testing.assert_array_equal(rescaled.history["loss"], plain.history["loss"])
