"""Chapter 7's live run on several seeds: do its readings hold beyond the seed it shows?

Chapter 7 trains AE-KM, DCN^p, DKM^a and DKM^p on a small dataset with one
seed, as the book builds, and reads the embeddings: the silhouette of the true
classes in each, and how far DCN^p and DKM^p shrink the pretrained embedding.
This script trains the same four models with the chapter's settings
(:func:`dkm.protocol.experiments.fit_methods`, the chapter's defaults unless given) for
each seed and prints one JSON line per seed: the settings, then for each model
its ACC and NMI on all the points, the silhouette of the true classes in its
embedding, the clusters it uses, and the mean norm and spread of its embedding
(:func:`dkm.book.embeddings.embedding_geometry`) at the end of its training and at
its start: the pretrained network's embedding (AE-KM's) for a pretrained model,
the freshly initialised network's for DKM^a; and, for each trained model, the
smallest mean norm of an epoch and the last epoch's clustering term (and the
pretraining's smallest epoch norm). The chapter's second DKM^a, at a larger λ
(``contrast_lambda``), is the model ``"contrast"``. The chapter reads the lines
whose settings are its own.

Usage (the paper's first five seeds, a few minutes on two cores)::

    python benchmarks/representation_seeds.py --seeds 5 \\
        > benchmarks/results/representation-seeds.jsonl
"""
from __future__ import annotations

import argparse
import json

import numpy as np
import tensorflow as tf

from dkm.autoencoder import Autoencoder
from dkm.book.embeddings import embedding_geometry
from dkm.data import load
from dkm.methods.common import LoopConfig
from dkm.metrics import evaluate
from dkm.protocol import paper, registry
from dkm.protocol.experiments import fit_methods
from dkm.protocol.provenance import provenance
from dkm.training import embed

#: The models of the chapter, and its defaults (notebooks/07_representations.md, parameters).
METHODS = ("ae-km", "dcn-p", "dkm-a", "dkm-p")
DEFAULT_TRADEOFFS = {"dcn-p": 0.1, "dkm-a": 1e-3, "dkm-p": 1.0}


def seed_line(dataset: str, seed: int, scale: float, tradeoffs: dict[str, float],
              contrast_lambda: float | None) -> dict:
    """The models of one seed, trained as chapter 7 trains them, and their embeddings read."""
    data = load(dataset)
    results = fit_methods(data, list(METHODS), [seed], scale=scale, tradeoffs=tradeoffs)
    if contrast_lambda is not None:
        results["contrast"] = fit_methods(data, ["dkm-a"], [seed], scale=scale,
                                          tradeoffs={"dkm-a": contrast_lambda})["dkm-a"]
    fresh = Autoencoder(LoopConfig().architecture(data.n_features, data.n_clusters), [seed])
    start = {True: embedding_geometry(results["ae-km"].embeddings[0]),
             False: embedding_geometry(embed(fresh, tf.constant(data.X))[0])}
    models = {}
    for name, result in results.items():
        geometry = embedding_geometry(result.embeddings[0], data.y)
        pretrained = name != "contrast" and registry.get(name).pretrained
        models[name] = {
            **{k: float(v) for k, v in evaluate(data.y, result.labels[0]).items()},
            "silhouette": float(geometry["silhouette"]),
            "clusters_used": int(len(np.unique(result.labels[0]))),
            "norm_start": float(start[pretrained]["mean norm"]),
            "spread_start": float(start[pretrained]["spread"]),
            "norm_end": float(geometry["mean norm"]), "spread_end": float(geometry["spread"]),
            **({"norm_min": float(result.history["embedding_norm"][0].min()),
                "clustering_last": float(result.history["clustering"][0][-1])}
               if "embedding_norm" in result.history else {})}
    pretraining = results["dkm-p"].history["pretrain_embedding_norm"][0]
    return {"dataset": dataset, "seed": seed, "scale": scale, "tradeoffs": tradeoffs,
            "contrast_lambda": contrast_lambda, "models": models,
            "pretraining_norm_min": float(pretraining.min()), "provenance": provenance()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="digits")
    parser.add_argument("--seeds", type=int, default=5,
                        help="the paper's first SEEDS seeds (default 5)")
    parser.add_argument("--scale", type=float, default=0.2)
    parser.add_argument("--tradeoff", action="append", default=[], metavar="METHOD=LAMBDA",
                        help="λ of a model (default: the chapter's, "
                        + ", ".join(f"{m}={v:g}" for m, v in DEFAULT_TRADEOFFS.items()) + ")")
    parser.add_argument("--contrast-lambda", type=float, default=0.1,
                        help="λ of the chapter's second DKM^a (default 0.1; 0: none)")
    args = parser.parse_args()
    if not 1 <= args.seeds <= len(paper.PAPER_SEEDS):
        parser.error(f"--seeds must be between 1 and {len(paper.PAPER_SEEDS)}, got {args.seeds}")
    tradeoffs = dict(DEFAULT_TRADEOFFS)
    for item in args.tradeoff:
        method, _, value = item.partition("=")
        if method not in METHODS or not value:
            parser.error(f"--tradeoff expects METHOD=LAMBDA with METHOD one of {METHODS}, "
                         f"got {item!r}")
        tradeoffs[method] = float(value)
    for seed in paper.PAPER_SEEDS[: args.seeds]:
        print(json.dumps(seed_line(args.dataset, seed, args.scale, tradeoffs,
                                   args.contrast_lambda or None)), flush=True)


if __name__ == "__main__":
    main()
