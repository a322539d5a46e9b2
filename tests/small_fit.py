"""A small DKM^p fit on digits, printed as JSON: what the arithmetic and cache tests compare.

``python tests/small_fit.py {reproducible,native}`` fits DKM^p on 500 digits in the reproducible
or the native arithmetic (:mod:`dkm.reproducibility.arithmetic`) and prints the labels', centres', weights' and
losses' bits, the arithmetic settings, the cache sizes its matrix products blocked by (pinned in
the reproducible arithmetic) and the CPU. The tests run it through the ``small_fit`` fixture
(``conftest.py``), in processes of their own, because the arithmetic, the thread pools and the
compilation cache are chosen when TensorFlow starts. ``python tests/small_fit.py
reproducible > tests/fixtures/reproducible-dkm-p.json`` writes the fixture of
``tests/test_arithmetic.py`` (with the CPU it was made on).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys


def main(mode: str) -> None:
    from dkm.reproducibility.arithmetic import reproducible_environment, use_reproducible_arithmetic

    if mode == "reproducible":
        use_reproducible_arithmetic()
    elif mode != "native":
        raise SystemExit(f"usage: python tests/small_fit.py {{reproducible,native}}, got {mode!r}")
    import numpy as np
    from sklearn.datasets import load_digits

    from dkm import DeepKMeans
    from dkm.annealing import constant
    from dkm.reproducibility.cache_sizes import tensorflow_cache_sizes
    from dkm.protocol.environment import deciding_versions
    from dkm.protocol.provenance import cpu_identity

    X = (load_digits().data[:500] / 16).astype(np.float32)
    model = DeepKMeans(10, hidden_sizes=(32, 32, 64), pretrain_epochs=2,
                       schedule=constant(1000.0, 2), random_state=0, progress=False).fit(X)
    weights = hashlib.sha256(b"".join(w.tobytes() for w in model.autoencoder_weights_))
    print(json.dumps({
        "labels": hashlib.sha256(model.labels_.astype(np.int64).tobytes()).hexdigest(),
        "centers": model.cluster_centers_.astype(np.float32).tobytes().hex(),
        "weights": weights.hexdigest(),
        "loss": [float(v).hex() for v in model.history_["loss"]],
        "pretrain_loss": [float(v).hex() for v in model.history_["pretrain_loss"]],
        # the mode's caps and OpenMP's threads: not the cache's folder, nor TensorFlow's
        # threads, which the tests vary (this small fit keeps its bits on 1 or 2)
        "environment": {k: os.environ[k] for k in reproducible_environment({})
                        if k in os.environ and k != "TF_NUM_INTRAOP_THREADS"},
        # the sizes by which its matrix products blocked their sums (pinned in the mode)
        "cache_sizes": list(tensorflow_cache_sizes()),
        "cpu": cpu_identity(),
        "versions": deciding_versions(),  # the packages that computed it
    }, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
