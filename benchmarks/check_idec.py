"""IDEC under other settings than the protocol's, to test explanations. One JSON line per run.

Trains an IDEC variant on a dataset with the protocol's configuration
(:func:`dkm.protocol.experiments.configure`: the paper's γ and epochs, IDEC's update
interval), changed by each ``--config`` in turn, and prints the epochs trained,
ACC/NMI/ARI on the protocol's test part (the records' ``metrics["test"]``),
the same for k-means on the final embedding (the records'
``kmeans_on_embedding``), and the two terms of the loss, reconstruction and
γ·KL, in the first and last epoch. IDEC^p starts from the protocol's cached
pretraining (``results/.pretraining-cache``), so that with the protocol's
settings a run reproduces its record exactly.

The check behind chapter 6's USPS IDEC^np sentence, IDEC's stopping rule
(IDEC stops when fewer than ``tol`` = 0.1 % of the points change cluster
between two target updates; ``tol = -1`` switches it off)::

    python benchmarks/check_idec.py --dataset usps --variant idec-np \\
        --seed 291 --seed 1256 --config tol=0.001 --config tol=-1

The check behind its 20NEWS IDEC^np sentence, the scale of the reconstruction
term (IDEC's Keras ``"mse"``, a mean over the 2,000 features, against the sum
``g`` the autoencoder is otherwise trained on)::

    python benchmarks/check_idec.py --dataset 20news --variant idec-np --seed 8905 \\
        --config reconstruction=mean --config reconstruction=sum

The check behind its MNIST IDEC^np sentence, the differences of IDEC-toy's
training loop (the Keras code the paper ran): its default update interval (one
epoch), its default cap of 2e4 iterations (73 epochs) and its minibatches in the
data's stored order::

    python benchmarks/check_idec.py --dataset mnist --variant idec-np --seed 8905 \\
        --seed 9129 --config epochs=73 --config update_interval=273,epochs=73 \\
        --config update_interval=273,epochs=73,sampler=sequential

A ``--config`` may change several fields at once: ``reconstruction=sum,gamma=2``;
the fields of the shared loop (``sampler``, ``batch_size``, ``learning_rate``)
go to its :class:`~dkm.methods.common.LoopConfig`, the others to the method's.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from dkm.data import load
from dkm.methods.common import LoopConfig, kmeans_on_embedding
from dkm.methods.template import fit_deep_method
from dkm.methods.pretraining import load_or_pretrain
from dkm.metrics import evaluate
from dkm.protocol import registry
from dkm.protocol.experiments import SPLIT_SEED, configure
from dkm.splits import validation_test_split

CACHE = Path(__file__).resolve().parents[1] / "results" / ".pretraining-cache"


def parse_settings(text: str) -> dict[str, int | float | str]:
    """``"reconstruction=sum,gamma=2"`` -> ``{"reconstruction": "sum", "gamma": 2.0}``.

    Numbers become floats (integers for ``update_interval`` and ``epochs``);
    anything else stays a string.
    """
    settings: dict[str, int | float | str] = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        if not name or not value:
            raise argparse.ArgumentTypeError(f"expected NAME=VALUE[,NAME=VALUE...], got {text!r}")
        try:
            number = float(value)
        except ValueError:
            settings[name] = value
        else:
            settings[name] = int(number) if name in ("update_interval", "epochs", "batch_size") \
                else number
    return settings


LOOP_FIELDS = frozenset(f.name for f in dataclasses.fields(LoopConfig))


def split_settings(settings: dict[str, int | float | str]) -> tuple[dict, dict]:
    """The settings of the shared loop, and those of the method."""
    loop = {name: value for name, value in settings.items() if name in LOOP_FIELDS}
    return loop, {name: value for name, value in settings.items() if name not in LOOP_FIELDS}


def term_summary(history: dict[str, np.ndarray], gamma: float) -> dict[str, list[float]]:
    """Reconstruction and γ·KL of the first and last epoch trained (replica 0)."""
    active = np.asarray(history["active"])[0] > 0
    last = int(np.flatnonzero(active)[-1]) if active.any() else 0
    rec = np.asarray(history["reconstruction"])[0]
    kl = np.asarray(history["clustering"])[0]
    return {"reconstruction": [float(f"{rec[0]:.4g}"), float(f"{rec[last]:.4g}")],
            "gamma_kl": [float(f"{gamma * kl[0]:.4g}"), float(f"{gamma * kl[last]:.4g}")]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="usps")
    parser.add_argument("--variant", default="idec-np",
                        choices=[m.id for m in registry.METHODS.values() if m.family == "idec"])
    parser.add_argument("--seed", type=int, action="append", help="repeat; default 291 and 1256")
    parser.add_argument("--config", type=parse_settings, action="append", default=[],
                        help="NAME=VALUE[,NAME=VALUE...] of the IDEC configuration, one run per "
                             "--config (default: one run with the protocol's settings)")
    args = parser.parse_args()

    data = load(args.dataset)
    test = validation_test_split(data.n_samples, seed=SPLIT_SEED).test
    loop = LoopConfig(progress=False)
    pretrain_epochs = registry.get(args.variant).default_config().pretrain_epochs
    for seed in args.seed or [291, 1256]:
        pretrained = None
        if pretrain_epochs:
            architecture = loop.architecture(data.n_features, data.n_clusters)
            pretrained = load_or_pretrain(data.X, architecture, [seed], pretrain_epochs, loop,
                                          cache_dir=CACHE)
        for settings in args.config or [{}]:
            loop_settings, method_settings = split_settings(settings)
            config = configure(args.variant, data, overrides=method_settings)
            run_loop = dataclasses.replace(loop, **loop_settings)
            start = time.perf_counter()
            result = fit_deep_method(data.X, data.n_clusters, [seed], config, run_loop, pretrained)
            wall = time.perf_counter() - start
            friendly = kmeans_on_embedding(result, data.n_clusters, [seed])[0]
            print(json.dumps({
                "dataset": data.name, "method": args.variant, "seed": seed, "changed": settings,
                "gamma": config.gamma, "reconstruction": config.reconstruction, "tol": config.tol,
                "update_interval": config.update_interval,
                "sampler": run_loop.sampler,
                "epochs_trained": round(float(np.asarray(result.history["active"])[0].sum()), 2),
                "epochs_allowed": config.epochs,
                "test": {k: round(100 * v, 2) for k, v in evaluate(data.y[test],
                                                                   result.labels[0][test]).items()},
                "kmeans_on_embedding_test": {k: round(100 * v, 2) for k, v in evaluate(
                    data.y[test], friendly[test]).items()},
                "terms_first_last_epoch": term_summary(result.history, config.gamma),
                "wall_time_s": round(wall, 1),
            }), flush=True)


if __name__ == "__main__":
    main()
