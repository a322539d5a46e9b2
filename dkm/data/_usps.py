"""USPS: the sharp ``usps.h5``, the paper's smoothed variant rebuilt from it, LIBSVM's test part.

``usps-sharp`` is ``usps.h5`` rescaled to [-1, 1]; ``usps`` is the variant the
paper loaded, rebuilt by :func:`smooth_usps`; :func:`load_usps_libsvm_test`
reads LIBSVM's published test part, against which the rebuild is checked.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from dkm.data._dataset import Dataset, _labelled
from dkm.data._fetch import _Options, _RemoteFile, _local_file, _reading, get_data_home

#: The Gaussian blur that turns the sharp USPS images into the paper's variant:
#: ``scipy.ndimage.gaussian_filter`` of each 16x16 image in [0, 1] with these
#: arguments, then ``2x - 1``.
USPS_SMOOTHING: dict[str, object] = {"sigma": 0.75, "mode": "constant", "truncate": 4.0}

_USPS = _RemoteFile(
    path="usps.h5",
    sha256=("734f88c541104a956d88be2c95d03b4a463ffd74ccc2ba9c80841fb98e3fcb36",),
    url=(
        "https://raw.githubusercontent.com/niuers/Learning-From-Data-A-Short-Course/"
        "35684e893b63bf4039bafcc6d34fe935851baf9a/data/usps.h5"
    ),
    how_to_obtain=(
        "Get usps.h5 (2.9 MB) from the Kaggle dataset 'USPS dataset' (bistaumanga/usps-dataset) "
        "or from github.com/niuers/Learning-From-Data-A-Short-Course (data/usps.h5): an HDF5 "
        "file with train/data (7291, 256), train/target, test/data (2007, 256) and "
        "test/target, pixels in [0, 1]."
    ),
)
_USPS_LIBSVM_TEST = _RemoteFile(
    path="usps.t.bz2",
    sha256=("a9c0164e797d60142a50604917f0baa604f326e9a689698763793fa5d12ffc4e",),
    url=(
        "https://raw.githubusercontent.com/team-approx-bayes/kpriors/"
        "7113fe83a025bc6eba02b4d9fa8c9f10e04c6366/data/usps.t.bz2"
    ),
    how_to_obtain=(
        "Get usps.t.bz2 (1.8 MB), LIBSVM's USPS test part, from the LIBSVM multi-class "
        "datasets page or from github.com/team-approx-bayes/kpriors (data/usps.t.bz2)."
    ),
)


def _read_usps_h5(home: Path, options: _Options) -> tuple[np.ndarray, np.ndarray]:
    """The 9,298 sharp images of ``usps.h5`` (train then test), pixels in [0, 1], and labels."""
    import h5py

    path = _local_file(_USPS, home, options)
    with _reading(_USPS, path), h5py.File(path, "r") as archive:
        pixels = np.concatenate([archive["train/data"][()], archive["test/data"][()]])
        labels = np.concatenate([archive["train/target"][()], archive["test/target"][()]])
    return pixels, labels


def smooth_usps(pixels: ArrayLike) -> np.ndarray:
    """The paper's USPS variant of sharp USPS images.

    LIBSVM's ``usps``/``usps.t`` files and mldata.org's ``USPS`` (which the
    authors loaded) hold the USPS images blurred by a Gaussian of standard
    deviation 0.75 pixel (zero padding at the border) and mapped to [-1, 1]:
    ``2 * gaussian_filter(image, **USPS_SMOOTHING) - 1`` of each 16x16 image
    in [0, 1]. On LIBSVM's 2,007 test images this matches its file to its
    six printed decimals.

    Parameters
    ----------
    pixels : array_like of shape (n_images, 256)
        Sharp images in [0, 1], row-major 16x16, as in ``usps.h5``.

    Returns
    -------
    numpy.ndarray
        float32 of shape ``(n_images, 256)``, in [-1, 1].
    """
    from scipy.ndimage import gaussian_filter

    images = np.asarray(pixels, dtype=np.float64)
    if images.ndim != 2 or images.shape[1] != 256:
        raise ValueError(f"expected USPS images of shape (n, 256), got {images.shape}")
    sigma = USPS_SMOOTHING["sigma"]
    blurred = gaussian_filter(
        images.reshape(-1, 16, 16), sigma=(0.0, sigma, sigma),
        mode=USPS_SMOOTHING["mode"], truncate=USPS_SMOOTHING["truncate"],
    )
    return (2.0 * blurred - 1.0).reshape(-1, 256).astype(np.float32)


def _load_usps(home: Path, options: _Options) -> Dataset:
    """USPS as the paper had it: the smoothed variant rebuilt from ``usps.h5``."""
    pixels, labels = _read_usps_h5(home, options)
    description = ("USPS, the paper's smoothed variant (LIBSVM/mldata): 9,298 handwritten digits "
                   "(train + test), 16x16 pixels blurred (Gaussian, sigma 0.75) in [-1, 1]")
    return _labelled(smooth_usps(pixels), labels, "usps", description)


def _load_usps_sharp(home: Path, options: _Options) -> Dataset:
    """USPS as Kaggle and ESL have it: the sharp images, rescaled to [-1, 1]."""
    pixels, labels = _read_usps_h5(home, options)
    X = pixels.astype(np.float32)
    X *= 2
    X -= 1
    description = ("USPS, the sharp variant (Kaggle/ESL): 9,298 handwritten digits "
                   "(train + test), 16x16 pixels in [-1, 1]")
    return _labelled(X, labels, "usps-sharp", description)


def load_usps_libsvm_test(
    data_home: str | os.PathLike[str] | None = None, *, download: bool = True, verify: bool = True
) -> Dataset:
    """LIBSVM's USPS test part (``usps.t.bz2``): the paper's variant, as published.

    The 2,007 test images of USPS in the smoothed variant the paper used, in
    the order of ``usps.h5``'s test part; LIBSVM's labels 1-10 become 0-9.
    ``load("usps").X[-2007:]`` rebuilds them from the sharp file.

    Parameters
    ----------
    data_home : str or path-like, optional
        Directory holding ``usps.t.bz2``; see :func:`get_data_home`.
    download, verify : bool
        As in :func:`load`.

    Returns
    -------
    Dataset
        Named ``"usps-libsvm-test"``, float32 pixels in [-1, 1].
    """
    from sklearn.datasets import load_svmlight_file

    options = _Options(download, verify, rcv1_seed=0, rcv1_rows=None)
    path = _local_file(_USPS_LIBSVM_TEST, get_data_home(data_home), options)
    with _reading(_USPS_LIBSVM_TEST, path):
        features, labels = load_svmlight_file(str(path), n_features=256)
    X = features.toarray().astype(np.float32)
    description = "USPS, LIBSVM's test part (usps.t): 2,007 images, the smoothed variant"
    return _labelled(X, labels.astype(np.int64) - 1, "usps-libsvm-test", description)
