"""A method declared here alone, registered in one line, runs through the protocol's grid and
appears in ``python -m dkm report``.

AE-GMM: a Gaussian mixture on the pretrained autoencoder's embedding, where AE-KM runs k-means.
Run as a script (``python tests/test_new_method.py STORE``), it registers the method and runs it
on digits into ``STORE``, then reports every method of ``STORE``; the test runs it so, in a process of its own, so that the method stays
out of the registry of the other tests.
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

# the repository root (notebooks/conftest.py shares tests/conftest.py's module name, so
# the test modules do not import from either)
REPO_ROOT = Path(__file__).resolve().parents[1]



@dataclass(frozen=True)
class GMMConfig:
    """AE-GMM: the epochs of the shared pretraining, then a mixture of full covariances."""

    pretrain_epochs: int = 50

    def scaled(self, factor: float) -> "GMMConfig":
        from dkm.methods.common import scale_epochs

        return replace(self, pretrain_epochs=scale_epochs(self.pretrain_epochs, factor))


GMM_CONFIG = GMMConfig()


def fit_gmm(X, n_clusters, seeds, config, loop, pretrained=None):
    """The fit function the protocol calls: the pretrained embedding, then one mixture per seed."""
    import tensorflow as tf
    from sklearn.mixture import GaussianMixture

    from dkm.methods.common import MethodResult
    from dkm.methods.pretraining import initial_network
    from dkm.training import embed

    data = tf.constant(X, tf.float32)
    architecture = loop.architecture(X.shape[1], n_clusters)
    autoencoder, _, history = initial_network(data, architecture, seeds, loop,
                                              config.pretrain_epochs, pretrained)
    embeddings = embed(autoencoder, data)
    mixtures = [GaussianMixture(n_clusters, random_state=seed).fit(h)
                for seed, h in zip(seeds, embeddings)]
    return MethodResult(labels=np.stack([m.predict(h) for m, h in zip(mixtures, embeddings)]),
                        embeddings=embeddings, centers=np.stack([m.means_ for m in mixtures]),
                        history=history, weights=autoencoder.get_weights())


def main(store: str) -> None:
    from dkm.methods.common import LoopConfig
    from dkm.protocol import registry
    from dkm.protocol.grid import run_grid

    registry.register(registry.Method(
        "ae-gmm", "AE-GMM", "gmm", True, group=None, tradeoff=None, in_paper=False,
        config=f"{__name__}:GMM_CONFIG", embedding=True, kmeans_on_embedding=False,
        fit=f"{__name__}:fit_gmm"))
    loop = LoopConfig(hidden_sizes=(32, 32, 64), progress=False)
    run_grid(["digits"], ["ae-gmm"], [1, 2], store, scale=0.02, loop=loop, progress=False)
    from dkm.cli import main as dkm

    dkm(["report", "--results", store, "--table", "methods"])


def test_a_method_declared_in_a_test_file_runs_through_the_grid_and_the_report(tmp_path):
    store = tmp_path / "digits.jsonl"
    run = subprocess.run([sys.executable, __file__, str(store)], cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    records = [json.loads(line) for line in store.read_text().splitlines()]
    assert [(r["method"], r["seed"]) for r in records] == [("ae-gmm", 1), ("ae-gmm", 2)]
    assert all(0 < r["metrics"]["test"]["acc"] <= 1 for r in records)
    acc = np.array([r["metrics"]["test"]["acc"] for r in records]) * 100
    row = next(line for line in run.stdout.splitlines() if line.startswith("| AE-GMM"))
    assert f"{acc.mean():.1f}±{acc.std(ddof=1):.1f}" in row and "(n=2)" in row, run.stdout
    assert records[0]["params"] == {"pretrain_epochs": 1, "batch_size": 256, "learning_rate": 0.001,
                                    "sampler": "permutation", "hidden_sizes": [32, 32, 64],
                                    "scale": 0.02, "data_fingerprint": records[0]["params"][
                                        "data_fingerprint"], "distance": "euclidean"}


if __name__ == "__main__":
    main(sys.argv[1])
