"""The package's values that ``gpu_standin.py --check`` compares its JAX stand-in with.

For a small network of the paper's shape (two replicas, hidden sizes 32-32-128 instead of
500-500-2000) and random data, writes to an ``.npz`` file:

* the weights, the data, a minibatch, λ per replica and the DKM representatives;
* for pretraining and for DKM at α = 1 and α = 1000: the per-replica losses and the gradients
  of their sum at those weights (through the objective's ``per_sample_loss``, as
  ``Trainer`` differentiates it), and the weights after one compiled epoch of ``Trainer``
  (stacked layout, fresh Adam) over the given minibatches.

    python benchmarks/standin_reference.py OUT.npz
"""
from __future__ import annotations

import argparse

import numpy as np
import tensorflow as tf

from dkm.autoencoder import Architecture, Autoencoder
from dkm.methods.dkm import DKMObjective, uniform_representatives
from dkm.training import Adam, Reconstruction, Trainer

ALPHAS = (1.0, 1000.0)
SEEDS = (3, 4)
LAMBDAS = (1.0, 0.1)


def objective_for(phase_alpha: float | None, representatives: np.ndarray):
    if phase_alpha is None:
        return Reconstruction()
    objective = DKMObjective(representatives, list(LAMBDAS))
    objective.set_alpha(phase_alpha)
    return objective


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    architecture = Architecture(input_dim=64, embedding_dim=5, hidden_sizes=(32, 32, 128))
    data = rng.random((300, architecture.input_dim), dtype=np.float32)
    batch = rng.integers(0, len(data), (len(SEEDS), 32)).astype(np.int32)
    epoch_batches = rng.integers(0, len(data), (len(SEEDS), 4, 32)).astype(np.int32)
    weights = Autoencoder(architecture, SEEDS).get_weights()
    representatives = uniform_representatives(SEEDS, 5, architecture.embedding_dim)
    out = {"data": data, "batch": batch, "epoch_batches": epoch_batches,
           "lam": np.asarray(LAMBDAS, np.float32), "alphas": np.asarray(ALPHAS),
           "representatives": representatives, "n_arrays": len(weights)}
    out |= {f"param_{i}": w for i, w in enumerate(weights)}

    for phase, alpha in [("pretraining", None)] + [(f"dkm_alpha_{a:g}", a) for a in ALPHAS]:
        autoencoder = Autoencoder(architecture, SEEDS, weights)
        objective = objective_for(alpha, representatives)
        variables = autoencoder.params + objective.variables
        x = tf.gather(tf.constant(data), batch)
        with tf.GradientTape() as tape:
            h = autoencoder.encode(x)
            per_sample, _ = objective.per_sample_loss(x, autoencoder.decode(h), h, batch)
            losses = tf.reduce_mean(per_sample, axis=1)
            total = tf.reduce_sum(losses)
        grads = tape.gradient(total, variables)
        out[f"{phase}/loss"] = losses.numpy()
        out |= {f"{phase}/grad_{i}": g.numpy() for i, g in enumerate(grads)}

        trainer = Trainer(autoencoder, objective, tf.constant(data), Adam())  # stacked
        out[f"{phase}/epoch_loss"] = trainer.run_epoch(epoch_batches).loss
        out |= {f"{phase}/after_{i}": v.numpy() for i, v in enumerate(variables)}
    np.savez(args.out, **out)


if __name__ == "__main__":
    main()
