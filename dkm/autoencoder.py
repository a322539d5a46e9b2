"""The ``d-500-500-2000-K`` autoencoder shared by every deep method of the paper.

The weights carry a leading *replica* axis ``S``: ``S`` independent networks
(one per seed) are stored as stacked tensors and evaluated with batched matrix
products, so that several seeds train in one compiled computation. A single
run is simply ``S = 1``.

Architecture (the paper's Section 4.3 and the authors' code): fully connected encoder
``d-500-500-2000-p`` and its mirror image as decoder; ReLU on every hidden
layer, linear embedding and output layers; Glorot-uniform kernels and zero
biases; no batch normalisation, dropout or weight decay.

The matrix products run in float32 by default, or in bfloat16
(``products="bfloat16"``): inputs and weights are rounded to bfloat16 for the
product, which the kernels accumulate in float32, and its result is cast back
to float32; weights, biases, activations and the optimiser's state stay
float32, and gradients reach the float32 weights through the casts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
import tensorflow as tf

PAPER_HIDDEN_SIZES: tuple[int, ...] = (500, 500, 2000)

Products = Literal["float32", "bfloat16"]
#: The precisions the matrix products can run in.
PRODUCTS: tuple[str, ...] = ("float32", "bfloat16")


@dataclass(frozen=True)
class Architecture:
    """Layer sizes of a symmetric autoencoder.

    Parameters
    ----------
    input_dim : int
        Number of input features ``d``.
    embedding_dim : int
        Size ``p`` of the embedding; the paper uses the number of clusters.
    hidden_sizes : tuple of int
        Encoder hidden layers; the decoder mirrors them.
    """

    input_dim: int
    embedding_dim: int
    hidden_sizes: tuple[int, ...] = PAPER_HIDDEN_SIZES

    def __post_init__(self) -> None:
        sizes = (self.input_dim, self.embedding_dim, *self.hidden_sizes)
        if any(int(s) != s or s < 1 for s in sizes):
            raise ValueError(f"layer sizes must be positive integers, got {sizes}")

    @property
    def encoder_sizes(self) -> tuple[int, ...]:
        """Sizes from the input to the embedding, both included."""
        return (self.input_dim, *self.hidden_sizes, self.embedding_dim)

    @property
    def layer_shapes(self) -> list[tuple[int, int]]:
        """``(fan_in, fan_out)`` of every dense layer, encoder then decoder."""
        enc = self.encoder_sizes
        dec = enc[::-1]
        return list(zip(enc[:-1], enc[1:])) + list(zip(dec[:-1], dec[1:]))

    @property
    def n_parameters(self) -> int:
        """Number of weights and biases of one replica."""
        return sum(i * o + o for i, o in self.layer_shapes)

    @property
    def n_encoder_layers(self) -> int:
        return len(self.encoder_sizes) - 1


def glorot_uniform_weights(
    architecture: Architecture, seeds: Sequence[int]
) -> list[np.ndarray]:
    """Seeded Glorot-uniform kernels and zero biases, stacked over replicas.

    Parameters
    ----------
    architecture : Architecture
        The layer sizes.
    seeds : sequence of int
        One seed per replica; replica ``s`` is drawn from its own generator,
        so that a replica's weights do not depend on the other replicas.

    Returns
    -------
    list of numpy.ndarray
        ``[W_1, b_1, W_2, b_2, ...]`` with shapes ``(S, fan_in, fan_out)`` and
        ``(S, 1, fan_out)``.
    """
    per_replica = []
    for seed in seeds:
        rng = np.random.default_rng([int(seed), 0x0A1E])
        arrays = []
        for fan_in, fan_out in architecture.layer_shapes:
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            arrays.append(rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32))
            arrays.append(np.zeros((1, fan_out), np.float32))
        per_replica.append(arrays)
    return [np.stack(group) for group in zip(*per_replica)]


def _product(h: tf.Tensor, kernel: tf.Tensor | tf.Variable, products: Products) -> tf.Tensor:
    if products == "float32":
        return tf.matmul(h, kernel)
    product = tf.matmul(tf.cast(h, tf.bfloat16), tf.cast(kernel, tf.bfloat16))
    return tf.cast(product, tf.float32)


def _dense_stack(params: Sequence[tf.Tensor | tf.Variable], h: tf.Tensor, first: int, last: int,
                 products: Products) -> tf.Tensor:
    """Layers ``first`` to ``last - 1`` of the network: ReLU after every one but the last."""
    for layer in range(first, last):
        h = _product(h, params[2 * layer], products) + params[2 * layer + 1]
        if layer < last - 1:
            h = tf.nn.relu(h)
    return h


@tf.function(reduce_retracing=True, autograph=False)
def _encode_all(weights: Sequence[tf.Tensor], x: tf.Tensor, n_encoder_layers: int,
                products: Products) -> tf.Tensor:
    replicas = tf.shape(weights[0])[:1]
    h = tf.broadcast_to(x[None], tf.concat([replicas, tf.shape(x)], axis=0))
    return _dense_stack(weights, h, 0, n_encoder_layers, products)


class Autoencoder(tf.Module):
    """``S`` replicas of the symmetric MLP autoencoder, as stacked variables.

    Parameters
    ----------
    architecture : Architecture
        The layer sizes.
    seeds : sequence of int
        One seed per replica (Glorot initialisation).
    weights : list of numpy.ndarray, optional
        Initial values, e.g. from a pretrained model; overrides ``seeds``.
    products : {"float32", "bfloat16"}, default="float32"
        The precision of the matrix products (see the module's docstring).
    """

    def __init__(
        self,
        architecture: Architecture,
        seeds: Sequence[int],
        weights: list[np.ndarray] | None = None,
        products: Products = "float32",
    ) -> None:
        super().__init__(name="autoencoder")
        if products not in PRODUCTS:
            raise ValueError(f"products must be one of {', '.join(map(repr, PRODUCTS))}, "
                             f"got {products!r}")
        self.architecture = architecture
        self.products = products
        values = weights if weights is not None else glorot_uniform_weights(architecture, seeds)
        expected = 2 * len(architecture.layer_shapes)
        if len(values) != expected:
            raise ValueError(f"expected {expected} weight arrays, got {len(values)}")
        self.n_replicas = int(values[0].shape[0])
        self.params = [
            tf.Variable(np.asarray(v, np.float32), name=f"p{i}") for i, v in enumerate(values)
        ]

    def encode(self, x: tf.Tensor) -> tf.Tensor:
        """Embeddings ``h(x)``; ``x`` has shape ``(S, B, d)``, result ``(S, B, p)``."""
        return _dense_stack(self.params, x, 0, self.architecture.n_encoder_layers, self.products)

    def encode_all(self, x: tf.Tensor) -> tf.Tensor:
        """Embeddings of the same points ``x`` ``(B, d)`` by every replica, ``(S, B, p)``.

        Compiled once for all networks of a process (the weights' values are
        its arguments), so that building many networks does not retrace it.
        """
        weights = [p.read_value() for p in self.params]
        return _encode_all(weights, x, self.architecture.n_encoder_layers, self.products)

    def decode(self, h: tf.Tensor) -> tf.Tensor:
        """Reconstructions ``A(x)`` from embeddings of shape ``(S, B, p)``."""
        n = self.architecture.n_encoder_layers
        return _dense_stack(self.params, h, n, 2 * n, self.products)

    def one_replica(self) -> "Autoencoder":
        """A new one-replica network of the same architecture (zero weights)."""
        return Autoencoder(self.architecture, [0],
                           [np.zeros((1, *p.shape[1:]), np.float32) for p in self.params],
                           self.products)

    def get_weights(self) -> list[np.ndarray]:
        """Current weights as read-only NumPy arrays (replica axis first).

        The arrays share the memory of the values read instead of copying them,
        so that the end of a fit does not hold the network's weights twice.
        They keep those values if the network trains on: TensorFlow copies a
        variable before updating it while a value read from it is alive.
        """
        arrays = [np.asarray(p.read_value()) for p in self.params]
        for array in arrays:
            array.flags.writeable = False
        return arrays
