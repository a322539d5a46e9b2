"""The DKM loss and its soft assignment against a direct NumPy computation."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from dkm.losses import (
    cosine_distance,
    dkm_clustering_term,
    get_distance,
    reconstruction_error,
    soft_assignment,
    squared_euclidean,
)

RNG = np.random.default_rng(0)


def numpy_softmax_assignment(d: np.ndarray, alpha: float) -> np.ndarray:
    """G_k computed in float64 with log-sum-exp, the reference."""
    logits = -alpha * d.astype(np.float64)
    logits -= logits.max(axis=-1, keepdims=True)
    w = np.exp(logits)
    return w / w.sum(axis=-1, keepdims=True)


def test_squared_euclidean_matches_numpy():
    h = RNG.normal(size=(2, 5, 3)).astype(np.float32)
    r = RNG.normal(size=(2, 4, 3)).astype(np.float32)
    expected = ((h[:, :, None, :] - r[:, None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(squared_euclidean(h, r).numpy(), expected, rtol=1e-6)


def test_cosine_distance_matches_numpy():
    h = RNG.normal(size=(1, 6, 3)).astype(np.float32)
    r = RNG.normal(size=(1, 2, 3)).astype(np.float32)
    hn = h / np.linalg.norm(h, axis=-1, keepdims=True)
    rn = r / np.linalg.norm(r, axis=-1, keepdims=True)
    expected = 1 - np.einsum("sbp,skp->sbk", hn, rn)
    np.testing.assert_allclose(cosine_distance(h, r).numpy(), expected, atol=1e-6)


def test_cosine_distance_of_zero_vector_is_finite():
    d = cosine_distance(np.zeros((1, 1, 3), np.float32), np.ones((1, 2, 3), np.float32))
    np.testing.assert_allclose(d.numpy(), 1.0)


def test_unknown_distance_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown distance 'manhattan'"):
        get_distance("manhattan")


@pytest.mark.parametrize("alpha", [0.0, 0.1, 1.0, 28.13, 1000.0, 1e6])
def test_soft_assignment_matches_numpy_and_stays_finite(alpha):
    d = (RNG.random((2, 50, 10)) * 20).astype(np.float32)
    g = soft_assignment(d, alpha).numpy()
    assert np.isfinite(g).all()
    np.testing.assert_allclose(g.sum(-1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(g, numpy_softmax_assignment(d, alpha), atol=1e-6)


def test_naive_softmax_would_fail_where_the_stable_one_does_not():
    """At α = 1000, exp(-α d) underflows for d > ~0.09: the naive form is 0/0."""
    d = np.array([[[0.5, 0.7, 2.0]]], np.float32)
    with np.errstate(invalid="ignore"):
        naive = np.exp(-1000 * d) / np.exp(-1000 * d).sum(-1, keepdims=True)
    assert np.isnan(naive).all()
    np.testing.assert_allclose(soft_assignment(d, 1000.0).numpy(), [[[1.0, 0.0, 0.0]]])


def test_clustering_term_matches_numpy_including_large_alpha():
    h = RNG.normal(size=(1, 30, 4)).astype(np.float32)
    r = RNG.normal(size=(1, 5, 4)).astype(np.float32)
    d = ((h[:, :, None, :] - r[:, None, :, :]) ** 2).sum(-1).astype(np.float64)
    for alpha in (0.5, 1000.0):
        expected = (d * numpy_softmax_assignment(d, alpha)).sum(-1)
        got = dkm_clustering_term(squared_euclidean(h, r), alpha).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-5)
    # α = 1000 is k-means: the distance to the closest representative.
    np.testing.assert_allclose(got, d.min(-1), rtol=1e-5)


def test_reconstruction_error_is_the_sum_of_squares_over_features():
    x = RNG.normal(size=(1, 3, 7)).astype(np.float32)
    x_hat = RNG.normal(size=(1, 3, 7)).astype(np.float32)
    np.testing.assert_allclose(
        reconstruction_error(x, x_hat).numpy(), ((x - x_hat) ** 2).sum(-1), rtol=1e-6
    )


@pytest.mark.parametrize("alpha", [0.3, 5.0, 1000.0])
def test_gradient_matches_finite_differences(alpha):
    """The gradient flows through the distances and the softmax (no stop-gradient)."""
    h0 = RNG.normal(size=(1, 4, 3))
    r0 = RNG.normal(size=(1, 3, 3))
    if alpha == 1000.0:  # keep the closest representative well separated
        h0 = r0[:, [0, 1, 2, 0], :] + 0.05 * RNG.normal(size=(1, 4, 3))
    h = tf.Variable(h0, dtype=tf.float64)
    r = tf.Variable(r0, dtype=tf.float64)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(dkm_clustering_term(squared_euclidean(h, r), alpha))
    grad_h, grad_r = tape.gradient(loss, [h, r])

    def loss_at(hv, rv):
        d = ((hv[:, :, None, :] - rv[:, None, :, :]) ** 2).sum(-1)
        return (d * numpy_softmax_assignment(d, alpha)).sum()

    eps = 1e-6
    for var, value, grad in ((h, h0, grad_h), (r, r0, grad_r)):
        numeric = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            up, down = value.copy(), value.copy()
            up[idx] += eps
            down[idx] -= eps
            args_up = (up, r0) if var is h else (h0, up)
            args_down = (down, r0) if var is h else (h0, down)
            numeric[idx] = (loss_at(*args_up) - loss_at(*args_down)) / (2 * eps)
        np.testing.assert_allclose(grad.numpy(), numeric, rtol=1e-4, atol=1e-6)


def test_gradient_includes_the_softmax_path():
    """With a stop-gradient on G the gradient would differ at moderate α."""
    h = tf.Variable(RNG.normal(size=(1, 6, 2)))
    r = tf.constant(RNG.normal(size=(1, 3, 2)))
    with tf.GradientTape(persistent=True) as tape:
        d = squared_euclidean(h, r)
        full = tf.reduce_sum(dkm_clustering_term(d, 2.0))
        stopped = tf.reduce_sum(d * tf.stop_gradient(soft_assignment(d, 2.0)))
    assert not np.allclose(tape.gradient(full, h).numpy(), tape.gradient(stopped, h).numpy())


def test_soft_assignment_keeps_a_python_alpha_in_float64():
    from dkm.losses import soft_assignment

    distances = np.array([[0.3, 1.7, 2.9]])
    alpha = 0.1  # not representable in float32
    expected = np.exp(-alpha * (distances - distances.min()))
    expected /= expected.sum()
    got = soft_assignment(tf.constant(distances, tf.float64), alpha).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-14)
