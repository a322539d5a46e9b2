"""Which of a fit's matrix products round otherwise when Eigen reads another L1 cache size?

In the reproducible arithmetic TensorFlow's products sum in blocks sized by the cache sizes the
mode pins (``dkm.arithmetic.REPRODUCIBLE_CACHE_SIZES``); before the pin they were the CPU's. This
script computes, in the mode, the products a fit of each of the paper's networks makes (and the
small fit's of ``tests/small_fit.py``), once with the mode's sizes and once with ``--cache-sizes``
(default: the 48 KiB of L1 data cache of the AVX-512 CPUs, through
``benchmarks/with_cache_sizes.py``), each in a process of its own, and says which differ:

* a training step's products, compiled with XLA as the epochs are: for each shape of a layer of
  the encoder or the decoder, and of the product of the embeddings with the centres, the forward
  product and both gradients' (the input's and the weights'), on a batch of the protocol's size;
* the embedding of the whole dataset (``dkm.training.embed``, the package's own code: chunks of
  1,024 points and the last one, through TensorFlow's own kernels), which k-means starts from.

The inputs are random numbers of the networks' shapes (the datasets' sizes from
``dkm.data.PAPER_STATISTICS``). Appends one line to ``--json`` (default
``benchmarks/results/cache-size-products.jsonl``): the CPU, both sizes and each product's
shape with whether it differs.

    python benchmarks/cache_size_products.py
"""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TOLD = (48 * 1024, 512 * 1024, 256 * 1024 * 1024)


def networks() -> dict[str, tuple[int, int, tuple[int, ...], int]]:
    """Each network's input dimension, embedding dimension, hidden sizes and dataset size."""
    from dkm.autoencoder import PAPER_HIDDEN_SIZES
    from dkm.data import PAPER_LABELS, PAPER_STATISTICS

    paper = {PAPER_LABELS[name]: (s["dimensions"], s["classes"], PAPER_HIDDEN_SIZES, s["samples"])
             for name, s in PAPER_STATISTICS.items() if name != "rcv1"}
    # tests/small_fit.py: 500 of scikit-learn's 8×8 digits, hidden sizes (32, 32, 64)
    return {**paper, "small fit": (64, 10, (32, 32, 64), 500)}


def digests() -> dict[str, str]:
    """Every product's digest in this process, keyed by network, phase, shape and part."""
    import numpy as np
    import tensorflow as tf

    from dkm.autoencoder import Architecture, Autoencoder
    from dkm.cache_sizes import tensorflow_cache_sizes
    from dkm.methods.common import LoopConfig
    from dkm.training import embed

    def layer(x, w, dy):
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = tf.matmul(x, w)
        return (y, *tape.gradient(y, [x, w], output_gradients=dy))

    step = tf.function(layer, jit_compile=True)
    batch = LoopConfig.batch_size
    rng = np.random.default_rng(0)
    found = {"cache sizes": json.dumps(tensorflow_cache_sizes())}
    for name, (d, p, hidden, n) in networks().items():
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path,
                        default=REPO_ROOT / "benchmarks" / "results" / "cache-size-products.jsonl",
                        help="append the comparison here")
    parser.add_argument("--cache-sizes", type=int, nargs=3, metavar=("L1", "L2", "L3"),
                        default=DEFAULT_TOLD, help="the other sizes, bytes")
    parser.add_argument("--digests", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.digests:  # a child: the products in this process's arithmetic and sizes
        import dkm.arithmetic

        if dkm.arithmetic.current_arithmetic() != "reproducible":
            dkm.arithmetic.use_reproducible_arithmetic()
        print(json.dumps(digests()))
        return

    from dkm.protocol.provenance import cpu_identity
    from with_cache_sizes import run_script

    pinned_run, told_run = (json.loads(run_script(Path(__file__), "--digests", cache_sizes=sizes))
                            for sizes in (None, args.cache_sizes))
    products = []
    for key in pinned_run:
        if key == "cache sizes":
            continue
        network, phase, shape, part = key.split("|")
        products.append({"network": network, "phase": phase, "shape": shape, "part": part,
                         "differs": pinned_run[key] != told_run[key]})
    line = {"cpu": cpu_identity(), "pinned": json.loads(pinned_run["cache sizes"]),
            "told": json.loads(told_run["cache sizes"]), "products": products}
    with open(args.json, "a") as out:
        out.write(json.dumps(line) + "\n")
    differing = [p for p in products if p["differs"]]
    print(f"{line['cpu']}: {len(differing)} of {len(products)} computations differ between "
          f"{line['pinned']} and {line['told']}")
    for p in differing:
        print(f"  {p['network']}, {p['phase']}, {p['shape']} {p['part']}".rstrip())


if __name__ == "__main__":
    main()
