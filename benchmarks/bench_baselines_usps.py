"""The pretrained baselines on USPS at the paper's full epochs, one seed, as JSON.

AE-KM, DCN^p (λ = 0.1, the paper's USPS value) and IDEC^p (γ = 0.001 and
IDEC's USPS update interval 30) from one shared 50-epoch pretraining (cached
on disk), with the paper's architecture, Adam 1e-3 and batch 256. Scores are
on all 9,298 points (the paper's figures are means over 10 seeds on its 90 %
test part). Prints one JSON line per method as it finishes, then a summary.

    python benchmarks/bench_baselines_usps.py [--seed 8905] [--scale 1.0]
"""
from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from dkm.data import load
from dkm.methods.common import LoopConfig, kmeans_on_embedding
from dkm.methods.template import fit_deep_method
from dkm.methods.km import AEKM_CONFIG, fit_aekm
from dkm.methods.pretraining import load_or_pretrain
from dkm.metrics import evaluate
from dkm.protocol import registry

REPO = Path(__file__).resolve().parents[1]
#: The paper's USPS means (percent, 10 seeds): ACC, NMI.
PAPER = {"ae-km": (72.9, 71.7), "dcn-p": (73.0, 71.9), "idec-p": (75.2, 74.9)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=8905)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every epoch count")
    parser.add_argument("--dcn-lambda", type=float, default=0.1)
    parser.add_argument("--idec-gamma", type=float, default=1e-3)
    parser.add_argument("--update-interval", type=int, default=30)
    parser.add_argument("--data-home", default=os.environ.get("DKM_DATA_HOME",
                                                              REPO.parent / "shared" / "data"))
    parser.add_argument("--cache-dir", default=REPO / "benchmarks" / "out" / "pretraining-cache")
    args = parser.parse_args()

    usps = load("usps", args.data_home)
    X, y, K, seeds = usps.X, usps.y, usps.n_clusters, [args.seed]
    loop = LoopConfig(progress=False)
    aekm = AEKM_CONFIG.scaled(args.scale)
    dcn = registry.get("dcn-p").default_config().scaled(args.scale)
    idec = registry.get("idec-p").default_config().scaled(args.scale)
    configs = {
        "ae-km": (fit_aekm, aekm),
        "dcn-p": (fit_deep_method, replace(dcn, lam=args.dcn_lambda)),
        "idec-p": (fit_deep_method, replace(idec, gamma=args.idec_gamma,
                                     update_interval=args.update_interval)),
    }

    start = time.perf_counter()
    pretrained = load_or_pretrain(X, loop.architecture(X.shape[1], K), seeds,
                                  aekm.pretrain_epochs, loop, args.cache_dir)
    summary = {"seed": args.seed, "scale": args.scale,
               "pretraining_seconds": round(time.perf_counter() - start, 1), "methods": {}}
    print(json.dumps({"pretraining_seconds": summary["pretraining_seconds"]}), flush=True)
    for name, (fit, config) in configs.items():
        start = time.perf_counter()
        result = fit(X, K, seeds, config, loop, pretrained=pretrained)
        seconds = time.perf_counter() - start
        record = {"method": name, **_percent(evaluate(y, result.labels[0])),
                  "seconds": round(seconds, 1),
                  "epochs_run": result.history["loss"].shape[-1] if "loss" in result.history else 0,
                  "paper_acc": PAPER[name][0], "paper_nmi": PAPER[name][1]}
        if name != "ae-km":
            record["kmeans_on_embedding"] = _percent(
                evaluate(y, kmeans_on_embedding(result, K, seeds)[0]))
        if name == "idec-p":
            record["active_fraction_per_epoch"] = np.round(result.history["active"][0], 3).tolist()
        summary["methods"][name] = record
        print(json.dumps(record), flush=True)
    print(json.dumps(summary))


def _percent(scores: dict[str, float]) -> dict[str, float]:
    return {k: round(100 * v, 1) for k, v in scores.items()}


if __name__ == "__main__":
    main()
