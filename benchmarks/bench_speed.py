"""Training speed of every method against this machine's matmul limit, and the protocol's cost.

For each dataset shape (the paper's sizes, random data: speed does not depend on the values),
each method's training phase and each number of stacked replicas S, times compiled training
steps (batch 256) and prints one JSON object per line:

* ``{"kind": "matmul", ...}``: float32 matmul throughput measured in the same run;
* ``{"kind": "phase", ...}``: seconds per step, samples/s (a sample of each replica counts, so
  S replicas at 1,000 samples/s each make 1,000 · S), seconds per epoch per replica, achieved
  GFLOP/s (nominal 6 × parameters FLOPs per sample; DCN's extra forward pass and IDEC's target
  updates make their real count higher) and its fraction of the matmul peak;
* ``{"kind": "replica_ratio", ...}``: samples/s of the largest S over that of S = 1, per layout
  (``--layout``: ``stacked`` batches the S networks' products, ``sequential`` runs each replica's
  steps in turn in the same compiled call; the default is the device's, as in training): 1 means
  that training S seeds as one computation costs nothing against running them one after the
  other, 5 that it is five times faster;
* ``{"kind": "projection", ...}``: the full protocol's wall time on this machine (10 seeds, the
  paper's eight methods at their epochs, shared pretraining), from the measured epoch times, with
  the fastest measured S and layout.

    python benchmarks/bench_speed.py [--shape usps mnist] [--replicas 1 10] [--steps 40]
                                     [--layout stacked sequential]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Callable

import numpy as np
import tensorflow as tf

from dkm.autoencoder import Architecture, Autoencoder
from dkm.cli import PAPER_METHODS
from dkm.data import PAPER_STATISTICS
from dkm.methods.dcn import DCNObjective, random_assignments
from dkm.methods.dkm import DKMObjective, uniform_representatives
from dkm.methods.idec import IDECObjective
from dkm.protocol import registry
from dkm.methods.idec import update_interval_for
from dkm.protocol.provenance import cpu_identity
from dkm.replicas import LAYOUTS, default_layout, make_trainer
from dkm.training import Adam, BatchSampler, Reconstruction

BATCH = 256
SEEDS_IN_PROTOCOL = 10


class PlainSGD(Adam):
    """``θ ← θ − 10⁻³ g``: a diagnostic optimiser that touches three arrays per weight, not seven.

    With ``--optimizer sgd`` the benchmark tells how much of a speed difference comes from
    Adam's memory traffic rather than from the matrix products.
    """

    def apply(self, grads, variables, active=None, fused=False):  # one pass per weight anyway
        for grad, var in zip(grads, variables):
            var.assign_sub(self.learning_rate * grad)


OPTIMIZERS = {"adam": Adam, "sgd": PlainSGD}


def matmul_gflops(size: int = 2048, repeats: int = 20, dtype: tf.DType = tf.float32,
                  jit_compile: bool | None = None) -> float:
    """Matmul throughput of this machine in ``dtype`` (best of a few runs), GFLOP/s.

    ``jit_compile`` as for ``tf.function``: None leaves the choice to TensorFlow (its own
    kernels here), True compiles the products with XLA.
    """
    a = tf.cast(tf.random.normal((size, size)), dtype)
    b = tf.cast(tf.random.normal((size, size)), dtype)

    @tf.function(jit_compile=jit_compile)
    def chain(x):
        for _ in range(repeats):
            x = tf.matmul(x, b) * tf.cast(1e-3, dtype)
        return x

    return 2 * size**3 * repeats / best_seconds(lambda: chain(a).numpy(), 3) / 1e9


def best_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Seconds of the fastest of ``repeats`` calls of ``fn``, after one call to compile and warm up."""
    fn()
    fastest = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        fastest = min(fastest, time.perf_counter() - start)
    return fastest


def objective_for(phase: str, autoencoder: Autoencoder, data: tf.Tensor, shape: str,
                  seeds: list[int]):
    """The training objective of ``phase`` on ``S`` fresh replicas."""
    n, k = int(data.shape[0]), PAPER_STATISTICS[shape]["classes"]
    centers = uniform_representatives(seeds, k, k)
    if phase == "pretraining":
        return Reconstruction()
    if phase == "dkm":
        objective = DKMObjective(centers, 1.0)
        objective.set_alpha(1000.0)
        return objective
    if phase == "dcn":
        return DCNObjective(autoencoder, centers, random_assignments(seeds, k, n), 0.1)
    if phase == "idec":
        # tol = -1: no replica ever stops, every step does the full work.
        return IDECObjective(autoencoder, data, centers, 0.1, update_interval_for(shape, n), tol=-1.0)
    raise ValueError(phase)


def time_phase(shape: str, phase: str, replicas: int, steps: int, repeats: int,
               optimizer: str = "adam", layout: str = "stacked", products: str = "float32",
               jit_compile: bool = True) -> dict:
    """Best seconds per step of ``phase`` with ``replicas`` replicas run in ``layout``, the
    products in ``products`` (:class:`dkm.autoencoder.Autoencoder`), XLA-compiled or not."""
    stats = PAPER_STATISTICS[shape]
    n, d, k = stats["samples"], stats["dimensions"], stats["classes"]
    seeds = list(range(replicas))
    data = tf.constant(np.random.default_rng(0).uniform(-1, 1, (n, d)), tf.float32)
    architecture = Architecture(d, k)
    autoencoder = Autoencoder(architecture, seeds, products=products)
    trainer = make_trainer(autoencoder, objective_for(phase, autoencoder, data, shape, seeds),
                           data, OPTIMIZERS[optimizer](), jit_compile=jit_compile, layout=layout)
    sampler = BatchSampler(n, BATCH, seeds, "finetune")
    if phase == "idec":  # a window holding exactly one target update
        steps = update_interval_for(shape, n)
    steps = min(steps, sampler.steps_per_epoch)
    seconds = best_seconds(lambda: trainer.run_epoch(sampler.next_epoch()[:, :steps]),
                           repeats) / steps
    samples_per_s = replicas * BATCH / seconds
    return {
        "kind": "phase", "shape": shape, "phase": phase, "replicas": replicas, "layout": layout,
        "optimizer": optimizer,
        "parameters": architecture.n_parameters, "steps_timed": steps,
        "seconds_per_step": seconds,
        "seconds_per_epoch_per_replica": seconds * sampler.steps_per_epoch / replicas,
        "samples_per_s": round(samples_per_s),
        "gflops": round(samples_per_s * 6 * architecture.n_parameters / 1e9, 1),
    }


def protocol_epochs() -> dict[str, int]:
    """Epochs of each training phase of the paper's eight methods, per seed (most, for IDEC)."""
    epochs = {"pretraining": 0, "dkm": 0, "dcn": 0, "idec": 0}
    for name in PAPER_METHODS:
        config = registry.get(name).default_config()
        epochs["pretraining"] = max(epochs["pretraining"], getattr(config, "pretrain_epochs", 0))
        family = name.split("-")[0]
        if family == "dkm":
            epochs["dkm"] += len(config.schedule.per_epoch())
        elif family in ("dcn", "idec"):
            epochs[family] += config.epochs
    return epochs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", nargs="+", default=["usps", "mnist"], choices=list(PAPER_STATISTICS))
    parser.add_argument("--phase", nargs="+", default=["pretraining", "dkm", "dcn", "idec"])
    parser.add_argument("--replicas", nargs="+", type=int, default=[1, 10])
    parser.add_argument("--steps", type=int, default=40, help="steps per timed window (IDEC: its update interval)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--optimizer", choices=sorted(OPTIMIZERS), default="adam",
                        help="sgd: a diagnostic without Adam's memory traffic")
    parser.add_argument("--layout", nargs="+", choices=LAYOUTS, default=[default_layout()],
                        help="how the replicas run (default: this device's, as in training)")
    args = parser.parse_args()

    peak = matmul_gflops()
    emit({"kind": "matmul", "machine": platform.processor() or platform.machine(),
          "cpu": cpu_identity(),
          "tensorflow": tf.__version__, "xla_flags": os.environ.get("XLA_FLAGS", ""),
          "devices": [d.name for d in tf.config.list_logical_devices()],
          "matmul_gflops": round(peak, 1)})
    for shape in args.shape:
        rows = {}
        for phase in args.phase:
            for layout in args.layout:
                for replicas in args.replicas:
                    row = time_phase(shape, phase, replicas, args.steps, args.repeats,
                                     args.optimizer, layout)
                    row["fraction_of_matmul_peak"] = round(row["gflops"] / peak, 3)
                    rows[phase, layout, replicas] = row
                    emit(row)
                low, high = min(args.replicas), max(args.replicas)
                if low != high:
                    emit({"kind": "replica_ratio", "shape": shape, "phase": phase,
                          "layout": layout, "replicas": [low, high],
                          "ratio": round(rows[phase, layout, high]["samples_per_s"]
                                         / rows[phase, layout, low]["samples_per_s"], 3)})
        emit(projection(shape, rows))


def projection(shape: str, rows: dict) -> dict:
    """Protocol wall time for ``shape`` from the fastest measured per-replica epoch time."""
    epochs = protocol_epochs()
    seconds = 0.0
    for phase, count in epochs.items():
        times = [r["seconds_per_epoch_per_replica"] for (p, *_), r in rows.items() if p == phase]
        if times:
            seconds += count * min(times) * SEEDS_IN_PROTOCOL
    measured = sorted({p for p, *_ in rows})
    return {"kind": "projection", "shape": shape, "seeds": SEEDS_IN_PROTOCOL,
            "epochs_per_seed": epochs, "phases_measured": measured,
            "training_hours": round(seconds / 3600, 2)}


def emit(row: dict) -> None:
    print(json.dumps({k: round(v, 5) if isinstance(v, float) else v for k, v in row.items()}),
          flush=True)


if __name__ == "__main__":
    main()
