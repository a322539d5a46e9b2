"""MNIST: Keras's ``mnist.npz``, its checksums and its loader."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from dkm.data._dataset import Dataset, _labelled, aligned_float32
from dkm.data._fetch import _Options, _RemoteFile, _local_file, _reading

_MNIST = _RemoteFile(
    path="mnist.npz",
    sha256=(
        "06af5dfe73b70e3bc1c36439982b18a8d76803db9b544f6fdf838a37fbb01b64",  # shared/data build
        "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1",  # Keras's file
    ),
    url="https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz",
    how_to_obtain=(
        "Download Keras's copy from "
        "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz "
        "(11 MB; arrays x_train, y_train, x_test, y_test)."
    ),
)


def _load_mnist(home: Path, options: _Options) -> Dataset:
    """MNIST: the 70,000 train and test images, flattened, pixels / 255."""
    path = _local_file(_MNIST, home, options)
    with _reading(_MNIST, path), np.load(path, allow_pickle=False) as archive:
        images = np.concatenate([archive["x_train"], archive["x_test"]])
        labels = np.concatenate([archive["y_train"], archive["y_test"]])
    X = aligned_float32(images.reshape(images.shape[0], -1))
    X /= np.float32(255)
    description = "MNIST: 70,000 handwritten digits (train + test), 28x28 pixels / 255"
    return _labelled(X, labels, "mnist", description)
