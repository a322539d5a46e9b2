"""Does IDEC's stopping rule cut IDEC^np short? One JSON line per (seed, tol).

IDEC stops when fewer than ``tol`` of the points change cluster between two
target updates (IDEC's default 0.1 %). Without pretraining that can happen
long before the paper's 200 epochs. This trains IDEC^np on a dataset with the
protocol's settings (the paper's γ, IDEC's update interval) twice per seed:
with ``tol = 0.001`` and with the rule switched off (``tol = -1``, every
epoch runs), and prints the epochs trained and ACC/NMI/ARI on the protocol's
test part (the records' ``metrics["test"]``).

    python benchmarks/check_idec_stopping.py [--dataset usps] [--seed 291 --seed 1256]
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np

from dkm.data import load
from dkm.experiments import SPLIT_SEED, default_tradeoff, idec_update_interval
from dkm.methods.common import LoopConfig
from dkm.methods.idec import IDEC_VARIANTS, fit_idec
from dkm.metrics import evaluate
from dkm.splits import validation_test_split
from dkm.training import enable_determinism


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="usps")
    parser.add_argument("--seed", type=int, action="append", help="repeat; default 291 and 1256")
    parser.add_argument("--tol", type=float, action="append", help="repeat; default 0.001 and -1")
    args = parser.parse_args()
    enable_determinism()

    data = load(args.dataset)
    test = validation_test_split(data.n_samples, seed=SPLIT_SEED).test
    base = replace(IDEC_VARIANTS["idec-np"],
                   gamma=default_tradeoff("idec-np", data.name),
                   update_interval=idec_update_interval(data.name, data.n_samples))
    for seed in args.seed or [291, 1256]:
        for tol in args.tol or [1e-3, -1.0]:
            start = time.perf_counter()
            result = fit_idec(data.X, data.n_clusters, [seed], replace(base, tol=tol),
                              LoopConfig(progress=False))
            active = np.asarray(result.history["active"])[0]  # (S, epochs)
            scores = evaluate(data.y[test], result.labels[0][test])
            print(json.dumps({
                "dataset": data.name, "method": "idec-np", "seed": seed, "tol": tol,
                "gamma": base.gamma, "update_interval": base.update_interval,
                "epochs_trained": round(float(active.sum()), 2), "epochs_allowed": base.epochs,
                "test": {k: round(100 * v, 2) for k, v in scores.items()},
                "wall_time_s": round(time.perf_counter() - start, 1),
            }), flush=True)


if __name__ == "__main__":
    main()
