"""Deep k-Means (Moradi Fard, Thonet and Gaussier, 2018) in TensorFlow 2.

The package is split into small modules with one job each:

``dkm.metrics``      ACC, NMI and ARI (no TensorFlow needed).
``dkm.annealing``    the inverse-temperature schedules of the paper.
``dkm.data``         the paper's datasets and the user's own files.
``dkm.splits``       the validation / test split of the protocol.
``dkm.autoencoder``  the ``d-500-500-2000-K`` autoencoder.
``dkm.losses``       distances, the stable soft assignment and the DKM loss.
``dkm.training``     the one minibatch training loop every method shares.
``dkm.estimator``    :class:`DeepKMeans`, :class:`DCN` and :class:`IDEC`, scikit-learn estimators.

TensorFlow is imported only by the modules that train networks, so that
``import dkm`` and the metrics and data modules stay fast.
"""
from __future__ import annotations

import os
from importlib import import_module
from typing import Any

# TensorFlow's C++ start-up messages (oneDNN, CUDA probing) are noise for a
# reader; keep warnings and errors. A user's own setting wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

__version__ = "0.1.0"

_LAZY_ATTRIBUTES = {
    "DeepKMeans": "dkm.estimator",
    "DCN": "dkm.estimator",
    "IDEC": "dkm.estimator",
}

__all__ = ["__version__", *_LAZY_ATTRIBUTES]


def __getattr__(name: str) -> Any:
    """Import the TensorFlow-backed public classes on first use."""
    if name in _LAZY_ATTRIBUTES:
        return getattr(import_module(_LAZY_ATTRIBUTES[name]), name)
    raise AttributeError(f"module 'dkm' has no attribute {name!r}")
