"""Would bfloat16 matrix products speed training up on this CPU? A probe, not an option of the package.

Issue 7 allows mixed precision only if it leaves the metrics unchanged within the seed-to-seed
spread. Before any such validation, this measures what there is to gain, printing one JSON
object per line:

* ``{"kind": "matmul", ...}``: 2048 × 2048 products in float32 and bfloat16, compiled by XLA and
  by TensorFlow's own kernels (oneDNN, which uses AMX tiles where the processor has them);
* ``{"kind": "pretraining", ...}``: samples/s of the package's training loop (USPS-sized network,
  pretraining, batch 256, stacked layout) in float32 with XLA (the package's default) and
  without, and with the products in bfloat16 (weights, Adam and the loss stay float32) without
  XLA, whose CPU backend does not use AMX for bfloat16.

    python benchmarks/probe_bfloat16.py [--replicas 1 10] [--steps 20]
"""
from __future__ import annotations

import argparse
import json

import numpy as np
import tensorflow as tf

from dkm.autoencoder import Architecture, Autoencoder
from dkm.data import PAPER_STATISTICS
from dkm.training import Adam, BatchSampler, Reconstruction, Trainer

from bench_speed import best_seconds, matmul_gflops  # a sibling script: benchmarks/ is on the path


class Bfloat16Products(Autoencoder):
    """The autoencoder with every matrix product in bfloat16 (inputs cast, result cast back)."""

    def _dense_stack(self, h, first, last, linear_last):
        for layer in range(first, last):
            product = tf.matmul(tf.cast(h, tf.bfloat16), tf.cast(self.params[2 * layer], tf.bfloat16))
            h = tf.cast(product, tf.float32) + self.params[2 * layer + 1]
            if not (linear_last and layer == last - 1):
                h = tf.nn.relu(h)
        return h


def pretraining_samples_per_s(network: type[Autoencoder], jit_compile: bool, replicas: int,
                              steps: int) -> float:
    stats = PAPER_STATISTICS["usps"]
    n, d, k = stats["samples"], stats["dimensions"], stats["classes"]
    seeds = list(range(replicas))
    data = tf.constant(np.random.default_rng(0).uniform(-1, 1, (n, d)), tf.float32)
    trainer = Trainer(network(Architecture(d, k), seeds), Reconstruction(), data, Adam(),
                      jit_compile=jit_compile, layout="stacked")
    sampler = BatchSampler(n, 256, seeds, "pretrain")
    seconds = best_seconds(lambda: trainer.run_epoch(sampler.next_epoch()[:, :steps]), 2)
    return replicas * 256 * steps / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", nargs="+", type=int, default=[1, 10])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    for dtype in (tf.float32, tf.bfloat16):
        for jit_compile in (True, False):
            print(json.dumps({"kind": "matmul", "dtype": dtype.name, "xla": jit_compile,
                              "gflops": round(matmul_gflops(repeats=10, dtype=dtype,
                                                            jit_compile=jit_compile))}),
                  flush=True)
    for replicas in args.replicas:
        for name, network, jit_compile in (("float32", Autoencoder, True),
                                           ("float32", Autoencoder, False),
                                           ("bfloat16 products", Bfloat16Products, False)):
            rate = pretraining_samples_per_s(network, jit_compile, replicas, args.steps)
            print(json.dumps({"kind": "pretraining", "precision": name, "xla": jit_compile,
                              "replicas": replicas, "samples_per_s": round(rate)}), flush=True)


if __name__ == "__main__":
    main()
