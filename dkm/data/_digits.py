"""scikit-learn's bundled 8x8 digits: the fast dataset of demonstrations and tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from dkm.data._dataset import Dataset, _labelled
from dkm.data._fetch import _Options

def _load_digits(home: Path, options: _Options) -> Dataset:
    """scikit-learn's bundled 8x8 digits, pixels / 16 (no file needed)."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    X = bunch.data.astype(np.float32) / np.float32(16)
    description = "scikit-learn digits: 1,797 images, 8x8 pixels / 16"
    return _labelled(X, bunch.target, "digits", description)
