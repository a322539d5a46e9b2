"""The matrix products a fit of each network computes, digested: what the cache-size tests compare.

``python tests/products.py [NETWORK ...]`` computes, in the reproducible arithmetic
(:mod:`dkm.reproducibility.arithmetic`), on random numbers of each network's shapes (the paper's MNIST, USPS and
20NEWS networks, and ``"small fit"``, ``tests/small_fit.py``'s; all by default):

* a training step's products at the protocol's batch size, compiled with XLA as the epochs are:
  for each shape of a layer of the encoder or the decoder, and of the product of the embeddings
  with the centres, the forward product and both gradients' (the input's and the weights');
* the embedding of a dataset of the network's size by :func:`dkm.training.embed` (the package's
  own code: chunks of 1,024 points and the last one, through TensorFlow's own kernels).

It prints, as JSON, each computation's SHA-256 (keyed ``network|phase|shape|part``), the cache
sizes the products blocked by and the CPU; TensorFlow runs on the mode's threads unless
``TF_NUM_INTRAOP_THREADS`` names a number (the fixture was made on the mode's). ``tests/test_arithmetic.py`` compares USPS's and the
small fit's with ``tests/fixtures/reproducible-products.json`` (``python tests/products.py USPS
"small fit" > tests/fixtures/reproducible-products.json`` writes it), and
``benchmarks/cache_size_products.py`` compares them under other cache sizes.
"""
from __future__ import annotations

import hashlib
import json
import sys
import zlib


def networks() -> dict[str, tuple[int, int, tuple[int, ...], int]]:
    """Each network's input dimension, embedding dimension, hidden sizes and dataset size."""
    from dkm.autoencoder import PAPER_HIDDEN_SIZES
    from dkm.data import PAPER_LABELS, PAPER_STATISTICS

    paper = {PAPER_LABELS[name]: (s["dimensions"], s["classes"], PAPER_HIDDEN_SIZES, s["samples"])
             for name, s in PAPER_STATISTICS.items() if name != "rcv1"}
    # tests/small_fit.py: 500 of scikit-learn's 8×8 digits, hidden sizes (32, 32, 64)
    return {**paper, "small fit": (64, 10, (32, 32, 64), 500)}


def digests(names: list[str]) -> dict[str, str]:
    """Every computation's digest for the networks named, keyed by network, phase, shape and part."""
    import numpy as np
    import tensorflow as tf

    from dkm.autoencoder import Architecture, Autoencoder
    from dkm.methods.common import LoopConfig
    from dkm.training import embed

    def layer(x, w, dy):
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = tf.matmul(x, w)
        return (y, *tape.gradient(y, [x, w], output_gradients=dy))

    step = tf.function(layer, jit_compile=True)  # traced once per shape, as the epochs are
    tf.get_logger().setLevel("ERROR")  # which tf.function would warn of
    batch = LoopConfig.batch_size
    found, shapes_of = {}, networks()
    for name in names:
        d, p, hidden, n = shapes_of[name]
        rng = np.random.default_rng(zlib.crc32(name.encode()))  # the same numbers in any selection
        sizes = (d, *hidden, p)
        # the encoder's layers, the decoder's and the centres' product, each shape once
        shapes = dict.fromkeys([*zip(sizes, sizes[1:]), *zip(sizes[::-1], sizes[-2::-1]), (p, p)])
        for i, o in shapes:  # replica axis first, as the package stacks its networks
            x, w, dy = (tf.constant(rng.standard_normal(s, dtype=np.float32))
                        for s in ((1, batch, i), (1, i, o), (1, batch, o)))
            for part, value in zip(("forward", "input gradient", "weight gradient"),
                                   step(x, w, dy)):
                found[f"{name}|training step|{batch}×{i}·{i}×{o}|{part}"] = (
                    hashlib.sha256(value.numpy().tobytes()).hexdigest())
        network = Autoencoder(Architecture(d, p, hidden), [0])
        data = tf.constant(rng.random((n, d), dtype=np.float32))
        found[f"{name}|embedding|{n}×{d}|"] = hashlib.sha256(embed(network, data).tobytes()).hexdigest()
    return found


def main(names: list[str]) -> None:
    from dkm.reproducibility.arithmetic import current_arithmetic, use_reproducible_arithmetic

    if current_arithmetic() != "reproducible":
        use_reproducible_arithmetic()
    from dkm.reproducibility.cache_sizes import tensorflow_cache_sizes
    from dkm.protocol.environment import deciding_versions
    from dkm.protocol.provenance import cpu_identity

    known = list(networks())
    unknown = set(names) - set(known)
    if unknown:
        raise SystemExit(f"unknown networks {sorted(unknown)}; known: {known}")
    print(json.dumps({"digests": digests(names or known),
                      "cache_sizes": list(tensorflow_cache_sizes()), "cpu": cpu_identity(),
                      "versions": deciding_versions()},
                     indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
