"""Training speed of the paper's autoencoder against this machine's matmul limit.

Times compiled training epochs (pretraining and DKM fine-tuning) of the
USPS-sized ``256-500-500-2000-10`` autoencoder on 9,298 samples, batch 256,
and prints one JSON object: samples/s, achieved GFLOP/s (≈ 6 × parameters
FLOPs per sample: forward 2, backward 4) and the float32 matmul throughput
measured in the same run. Random data of the USPS shape: speed does not
depend on the values.

    python benchmarks/bench_speed.py [--replicas 1] [--epochs 5] [--samples 9298 --features 256]
"""
from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np
import tensorflow as tf

from dkm.autoencoder import Architecture, Autoencoder
from dkm.methods.dkm import DKMObjective, uniform_representatives
from dkm.training import Adam, BatchSampler, Reconstruction, Trainer


def matmul_gflops(size: int = 2048, repeats: int = 20) -> float:
    """Float32 matmul throughput of this machine (best of a few runs)."""
    a = tf.random.normal((size, size))
    b = tf.random.normal((size, size))

    @tf.function
    def chain(x):
        for _ in range(repeats):
            x = tf.matmul(x, b) * 1e-3
        return x

    chain(a).numpy()
    best = min(_timed(lambda: chain(a).numpy()) for _ in range(3))
    return 2 * size**3 * repeats / best / 1e9


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def time_phase(trainer: Trainer, sampler: BatchSampler, epochs: int) -> float:
    """Best seconds per epoch over ``epochs`` epochs, after one warm-up epoch."""
    trainer.run_epoch(sampler.next_epoch())
    return min(_timed(lambda: trainer.run_epoch(sampler.next_epoch())) for _ in range(epochs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=9298)
    parser.add_argument("--features", type=int, default=256)
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()

    seeds = list(range(args.replicas))
    data = tf.constant(np.random.default_rng(0).uniform(-1, 1, (args.samples, args.features)),
                       tf.float32)
    architecture = Architecture(args.features, args.clusters)
    flops_per_sample = 6 * architecture.n_parameters
    autoencoder = Autoencoder(architecture, seeds)
    optimizer = Adam()
    sampler = BatchSampler(args.samples, 256, seeds, "pretrain")
    objectives = {
        "pretraining": Reconstruction(),
        "dkm_finetuning": DKMObjective(
            uniform_representatives(seeds, args.clusters, args.clusters), 1.0
        ),
    }
    peak = matmul_gflops()
    report = {
        "machine": platform.processor() or platform.machine(),
        "tensorflow": tf.__version__,
        "devices": [d.name for d in tf.config.list_logical_devices()],
        "samples": args.samples, "features": args.features, "replicas": args.replicas,
        "parameters": architecture.n_parameters,
        "matmul_gflops": round(peak, 1),
    }
    for name, objective in objectives.items():
        if isinstance(objective, DKMObjective):
            objective.alpha.assign(1000.0)
        seconds = time_phase(Trainer(autoencoder, objective, data, optimizer), sampler, args.epochs)
        samples = sampler.steps_per_epoch * sampler.batch_size * args.replicas
        gflops = samples * flops_per_sample / seconds / 1e9
        report[name] = {
            "seconds_per_epoch": round(seconds, 3),
            "samples_per_s": round(samples / seconds),
            "samples_per_s_per_replica": round(samples / seconds / args.replicas),
            "gflops": round(gflops, 1),
            "fraction_of_matmul_peak": round(gflops / peak, 3),
        }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
