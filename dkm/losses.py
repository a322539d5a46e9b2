"""Distances, the stable soft assignment and the Deep k-Means loss.

All functions work on tensors with a leading replica axis ``S`` (see
:mod:`dkm.autoencoder`): embeddings ``h`` of shape ``(S, B, p)`` and
representatives ``r`` of shape ``(S, K, p)``.
"""
from __future__ import annotations

from typing import Callable

import tensorflow as tf

Distance = Callable[[tf.Tensor, tf.Tensor], tf.Tensor]


def squared_euclidean(h: tf.Tensor, r: tf.Tensor) -> tf.Tensor:
    """Squared Euclidean distances ``‖h_b − r_k‖²`` of shape ``(S, B, K)``.

    Computed from the differences rather than ``‖h‖² − 2h·r + ‖r‖²``, which
    loses precision by cancellation exactly where a large α magnifies it.
    """
    diff = h[:, :, None, :] - r[:, None, :, :]
    return tf.reduce_sum(tf.square(diff), axis=-1)


def cosine_distance(h: tf.Tensor, r: tf.Tensor, eps: float = 1e-12) -> tf.Tensor:
    """Cosine distances ``1 − cos(h_b, r_k)`` of shape ``(S, B, K)``.

    A zero vector has no direction; ``eps`` keeps its distance finite (1).
    """
    h_unit = h * tf.math.rsqrt(tf.reduce_sum(tf.square(h), -1, keepdims=True) + eps)
    r_unit = r * tf.math.rsqrt(tf.reduce_sum(tf.square(r), -1, keepdims=True) + eps)
    return 1.0 - tf.matmul(h_unit, r_unit, transpose_b=True)


DISTANCES: dict[str, Distance] = {
    "euclidean": squared_euclidean,
    "cosine": cosine_distance,
}


def get_distance(name: str) -> Distance:
    """The distance function called ``name`` (``"euclidean"`` or ``"cosine"``)."""
    try:
        return DISTANCES[name]
    except KeyError:
        raise ValueError(
            f"unknown distance {name!r}; choose one of {sorted(DISTANCES)}"
        ) from None


def soft_assignment(distances: tf.Tensor, alpha: tf.Tensor | float) -> tf.Tensor:
    """The paper's ``G_k = softmax_k(−α f(h, r_k))``, finite for any α ≥ 0.

    The logits are shifted by the per-sample minimum distance before the
    exponential: the closest representative gets ``exp(0) = 1`` and the
    normaliser is at least 1, so nothing underflows to ``0/0`` even at
    α = 1000 and beyond. The shift does not change the value of the softmax
    nor its gradient (the softmax is invariant to a per-row constant).
    """
    shifted = distances - tf.reduce_min(distances, axis=-1, keepdims=True)
    # A Python α becomes a constant of the distances' dtype directly: through
    # tf.cast it would be rounded to float32 first.
    alpha = tf.cast(alpha, distances.dtype) if tf.is_tensor(alpha) \
        else tf.constant(alpha, distances.dtype)
    logits = -alpha * shifted
    weights = tf.exp(logits)
    return weights / tf.reduce_sum(weights, axis=-1, keepdims=True)


def reconstruction_error(x: tf.Tensor, x_hat: tf.Tensor) -> tf.Tensor:
    """``g(x, A(x))``: squared Euclidean error summed over features, ``(S, B)``."""
    return tf.reduce_sum(tf.square(x - x_hat), axis=-1)


def dkm_clustering_term(distances: tf.Tensor, alpha: tf.Tensor | float) -> tf.Tensor:
    """``Σ_k f(h, r_k) G_k(h, α)`` per sample, shape ``(S, B)``.

    No stop-gradient: gradients flow through the distances and through the
    softmax weights, into both the network and the representatives.
    """
    return tf.reduce_sum(distances * soft_assignment(distances, alpha), axis=-1)


def mean_squared_error(x: tf.Tensor, x_hat: tf.Tensor) -> tf.Tensor:
    """Squared error averaged over features, ``(S, B)``: Keras' ``"mse"`` per sample.

    IDEC's code (which the paper ran) uses this reconstruction loss; its γ
    values are relative to it, not to the summed error ``g``.
    """
    return tf.reduce_mean(tf.square(x - x_hat), axis=-1)


def student_t_assignment(distances: tf.Tensor) -> tf.Tensor:
    """IDEC's soft assignment ``q_ik ∝ (1 + ‖h_i − μ_k‖²)^(−1)`` (one degree of freedom).

    ``distances`` are squared Euclidean distances ``(..., K)``; each row of
    the result sums to one.
    """
    kernel = 1.0 / (1.0 + distances)
    return kernel / tf.reduce_sum(kernel, axis=-1, keepdims=True)


def target_distribution(q: tf.Tensor) -> tf.Tensor:
    """IDEC's target ``p_ik ∝ q_ik² / f_k`` with ``f_k = Σ_i q_ik``.

    ``q`` has shape ``(S, N, K)`` and must hold the *whole* dataset: the
    cluster frequencies ``f_k`` sum over the sample axis ``N``.
    """
    weight = tf.square(q) / tf.reduce_sum(q, axis=1, keepdims=True)
    return weight / tf.reduce_sum(weight, axis=-1, keepdims=True)


def kl_divergence(p: tf.Tensor, q: tf.Tensor) -> tf.Tensor:
    """``KL(p ‖ q) = Σ_k p_k log(p_k / q_k)`` per sample, ``(S, B)``; ``0 log 0 = 0``."""
    return tf.reduce_sum(tf.math.xlogy(p, p) - p * tf.math.log(q), axis=-1)
