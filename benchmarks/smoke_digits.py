"""Training smoke test on real data, with its figures printed as JSON.

DKM^p and DKM^a on scikit-learn's bundled digits (1,797 × 64, pixels / 16)
with the paper's architecture, at the reduced epochs the unit tests use:
DKM^p 10 pretraining + 20 fine-tuning epochs (λ = 1); DKM^a the 40 α values
at one epoch each (λ = 1e-3: digits' reconstruction error is small, so the
paper's λ for USPS/MNIST lets the clustering term collapse the embedding).

    python benchmarks/smoke_digits.py [--seeds 0 1 2]
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.datasets import load_digits

from dkm import DeepKMeans
from dkm.annealing import constant, paper_annealing
from dkm.metrics import evaluate

CONFIGS = {
    "dkm-p": dict(variant="p", lam=1.0, pretrain_epochs=10, schedule=constant(1000.0, 20)),
    "dkm-a": dict(variant="a", lam=1e-3, schedule=paper_annealing(epochs_per_alpha=1)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    X, y = load_digits(return_X_y=True)
    X = (X / 16).astype(np.float32)
    for name, params in CONFIGS.items():
        for seed in args.seeds:
            start = time.perf_counter()
            model = DeepKMeans(n_clusters=10, random_state=seed, progress=False, **params).fit(X)
            loss = model.history_["loss"]
            print(json.dumps({
                "method": name, "seed": seed, **{k: round(v, 4) for k, v in evaluate(y, model.labels_).items()},
                "loss_first_epoch": round(float(loss[0]), 4), "loss_last_epoch": round(float(loss[-1]), 4),
                "seconds": round(time.perf_counter() - start, 1),
            }))


if __name__ == "__main__":
    main()
