"""Where do bfloat16 products pay, and with or without XLA? The measurement behind
:func:`dkm.training.xla_pays`.

Prints one JSON object per line, each naming the CPU:

* ``{"kind": "matmul", ...}``: 2048 × 2048 products in float32 and bfloat16, compiled by XLA and
  by TensorFlow's own kernels (oneDNN);
* ``{"kind": "step_products", ...}``: the matrix products of one training step alone (the USPS
  network, batch 256, one replica: forward, and both products of the backward pass, each layer),
  in float32 and bfloat16, through TensorFlow's own kernels: how much of a step they are;
* ``{"kind": "phase", ...}``: samples/s of the package's training loop (USPS-sized network,
  batch 256, stacked layout) in each training phase of DKM (pretraining's reconstruction, DKM's
  loss at α = 1000), with the products in float32 and in bfloat16 (the package's
  ``precision``), each with XLA and without, each in a process of its own (XLA's and oneDNN's
  thread pools, once started, slow each other down).

    python benchmarks/probe_bfloat16.py [--phase pretraining dkm] [--replicas 1] [--steps 20]
    python benchmarks/probe_bfloat16.py --step-products
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

import tensorflow as tf

from dkm.autoencoder import PRODUCTS, Architecture
from dkm.protocol.provenance import cpu_identity

# sibling scripts: benchmarks/ is on the path
from bench_speed import BATCH, best_seconds, matmul_gflops, time_phase

REPEATS = 3


def step_products_ms(dtype: tf.DType, architecture: Architecture, repeats: int = 5,
                     steps: int = 50) -> tuple[float, float]:
    """Milliseconds that one training step's matrix products take alone, best of ``repeats``
    windows of ``steps``, and their GFLOP (``x W``, ``dy Wᵀ`` and ``xᵀ dy`` of every layer, one
    replica, as the package's batched products)."""
    shapes = [shape for i, o in architecture.layer_shapes
              for shape in (((1, BATCH, i), (1, i, o)), ((1, BATCH, o), (1, o, i)),
                            ((1, i, BATCH), (1, BATCH, o)))]
    pairs = [(tf.cast(tf.random.normal(a), dtype), tf.cast(tf.random.normal(b), dtype))
             for a, b in shapes]

    @tf.function
    def step():
        return tf.add_n([tf.cast(tf.linalg.matmul(a, b)[0, 0, 0], tf.float32) for a, b in pairs])

    def window():
        for _ in range(steps):
            step()

    best = best_seconds(window, repeats) / steps
    return 1000 * best, sum(2 * a[1] * a[2] * b[2] for a, b in shapes) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase", nargs="+", default=["pretraining", "dkm"],
                        choices=["pretraining", "dkm"])
    parser.add_argument("--replicas", nargs="+", type=int, default=[1])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--step-products", action="store_true",
                        help="time only one training step's products, in both precisions")
    args = parser.parse_args()
    cpu = cpu_identity()
    if args.step_products:
        for dtype in (tf.float32, tf.bfloat16):
            ms, gflop = step_products_ms(dtype, Architecture(256, 10))
            print(json.dumps({"kind": "step_products", "cpu": cpu, "dtype": dtype.name,
                              "network": "usps", "batch": BATCH, "ms": round(ms, 2),
                              "gflop": round(gflop, 2), "gflops": round(gflop / ms * 1000)}),
                  flush=True)
        return
    for dtype in (tf.float32, tf.bfloat16):
        for jit_compile in (True, False):
            print(json.dumps({"kind": "matmul", "cpu": cpu, "dtype": dtype.name,
                              "xla": jit_compile,
                              "gflops": round(matmul_gflops(repeats=10, dtype=dtype,
                                                            jit_compile=jit_compile))}),
                  flush=True)
    for replicas in args.replicas:
        for phase in args.phase:
            for products in PRODUCTS:
                for jit_compile in (True, False):
                    job = [phase, products, str(jit_compile), str(replicas), str(args.steps)]
                    rate = float(subprocess.run([sys.executable, __file__, "--child", *job],
                                                check=True, capture_output=True,
                                                text=True).stdout.split()[-1])
                    print(json.dumps({"kind": "phase", "cpu": cpu, "phase": phase,
                                      "precision": products, "xla": jit_compile,
                                      "replicas": replicas, "samples_per_s": round(rate)}),
                          flush=True)

if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "--child":
        phase, products, jit_compile, replicas, steps = sys.argv[2:]
        print(time_phase("usps", phase, int(replicas), int(steps), REPEATS, products=products,
                         jit_compile=jit_compile == "True")["samples_per_s"])
    else:
        main()
