"""Real data for ``gpu_standin.py --quality``, and the scores of the clusters it returns.

``pack`` writes a dataset as the stand-in reads it: ``X`` (MNIST's pixels as ``uint8``, which
``gpu_standin.py`` divides by 255 back to the package's values; 20NEWS's tf-idf as its nonzeros),
the number of clusters and the paper's λ of DKM^p. ``score`` reads the ``quality_run``,
``alpha_run`` and ``tradeoff_run`` rows that ``gpu_standin.py`` printed and the clusters it
saved, and prints one JSON line per run and seed (``quality``; ``alpha_quality`` with its α and
whether it was rescaled; ``tradeoff_quality`` with its λ, and the validation part's scores under
``validation``): ACC, NMI and ARI on the protocol's test part (``dkm.splits``, as the records
are scored), and how many clusters the test part's points fall in.

    .venv/bin/python benchmarks/standin_quality.py pack mnist .device/quality-mnist.npz
    .venv/bin/python benchmarks/standin_quality.py score OUTPUT.jsonl CLUSTERS_DIR mnist \\
        >> benchmarks/results/standin-quality.jsonl
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from dkm.data import load
from dkm.metrics import evaluate
from dkm.protocol import paper
from dkm.protocol.experiments import SPLIT_SEED
from dkm.splits import validation_test_split


def pack(dataset: str, out: str) -> None:
    data = load(dataset)
    features = data.X
    extra = {"n_clusters": data.n_classes, "lam": paper.optimal_tradeoff("dkm-p", dataset)}
    pixels = np.round(features * 255)
    if np.array_equal((pixels.astype(np.uint8).astype(np.float32) / 255), features):
        # four times smaller, the same values once divided
        np.savez_compressed(out, X=pixels.astype(np.uint8), **extra)
    elif np.count_nonzero(features) < features.size / 4:  # tf-idf: its nonzeros only (CSR)
        rows, columns = np.nonzero(features)
        np.savez_compressed(out, X_data=features[rows, columns], X_indices=columns.astype(np.int32),
                            X_indptr=np.concatenate([[0], np.cumsum(np.bincount(
                                rows, minlength=features.shape[0]))]),
                            X_shape=np.array(features.shape), **extra)
    else:
        np.savez_compressed(out, X=features, **extra)


def score(output: str, clusters_dir: str, dataset: str) -> None:
    data = load(dataset)
    parts = validation_test_split(data.n_samples, seed=SPLIT_SEED)
    kinds = {"quality_run": "quality", "alpha_run": "alpha_quality",
             "tradeoff_run": "tradeoff_quality"}
    for line in Path(output).read_text().splitlines():
        row = json.loads(line) if line.startswith("{") else {}
        if row.get("kind") not in kinds or Path(row["data"]).stem != f"quality-{dataset}":
            continue
        clusters = np.load(Path(clusters_dir) / row["clusters"])
        for replica, labels in enumerate(clusters):
            scored = {"kind": kinds[row["kind"]], "dataset": dataset,
                      "precision": row["precision"],
                      **{key: row[key] for key in ("alpha", "rescaled", "tradeoff") if key in row},
                      "replica": replica, **evaluate(data.y[parts.test], labels[parts.test]),
                      "clusters_used": int(np.unique(labels[parts.test]).size)}
            if row["kind"] == "tradeoff_run":  # a line search chooses λ on the validation part
                scored["validation"] = evaluate(data.y[parts.validation],
                                                labels[parts.validation])
            print(json.dumps(scored))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="write a dataset for the stand-in")
    packing.add_argument("dataset")
    packing.add_argument("out")
    scoring = commands.add_parser("score", help="score the clusters the stand-in returned")
    scoring.add_argument("output", help="the stand-in's printed JSON lines")
    scoring.add_argument("clusters_dir")
    scoring.add_argument("dataset")
    args = parser.parse_args()
    if args.command == "pack":
        pack(args.dataset, args.out)
    else:
        score(args.output, args.clusters_dir, args.dataset)


if __name__ == "__main__":
    main()
