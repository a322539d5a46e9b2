"""Arrays the book computes once and keeps, read back while their inputs are unchanged.

Some of the book's pictures and checks rest on a computation that takes tens of
seconds and whose inputs rarely change: the t-SNE projection of a committed
snapshot, k-means on a whole dataset for the paper's ten seeds.
:func:`computed_once` keeps such a result in a NumPy ``.npz`` file with a
SHA-256 digest of everything it was computed from (the settings and the input
arrays, bytes, dtypes and shapes); the file is read back while that digest is
the one of the inputs given, and the result is computed and written again
otherwise. The file also records the versions of the libraries that computed it,
which the digest leaves out: a newer scikit-learn reads the kept file.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dkm._atomic import atomic_write

__all__ = ["computed_once", "inputs_digest"]


def inputs_digest(settings: Mapping[str, Any], inputs: Mapping[str, np.ndarray]) -> str:
    """The SHA-256 digest of a computation's settings and input arrays.

    Parameters
    ----------
    settings : mapping
        JSON-serialisable settings; their order does not matter.
    inputs : mapping of str to array-like
        The input arrays, in a fixed order: each name, dtype, shape and bytes count.

    Returns
    -------
    str
        The hexadecimal digest.
    """
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    for name, array in inputs.items():
        array = np.ascontiguousarray(array)
        digest.update(f"{name} {array.dtype.str} {array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def computed_once(path: str | os.PathLike[str], settings: Mapping[str, Any],
                  inputs: Mapping[str, np.ndarray],
                  compute: Callable[[], Mapping[str, np.ndarray]],
                  versions: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """The arrays ``compute()`` returns, read from ``path`` when kept there from the same inputs.

    Parameters
    ----------
    path : str or path-like
        The ``.npz`` file the result is kept in (its directory is created if missing).
    settings : mapping
        Everything besides ``inputs`` that decides the result (JSON-serialisable).
    inputs : mapping of str to numpy.ndarray
        The arrays the result is computed from.
    compute : callable
        Computes the result from nothing but ``settings`` and ``inputs``: a mapping of
        names (not ``"meta"``) to arrays.
    versions : mapping of str to str, optional
        The versions of the libraries that compute the result, kept in the file
        and left out of the digest.

    Returns
    -------
    dict of str to numpy.ndarray
        The result, by name.
    """
    digest = inputs_digest(settings, inputs)
    if os.path.exists(path):
        with np.load(path, allow_pickle=False) as archive:
            if json.loads(str(archive["meta"]))["digest"] == digest:
                return {name: archive[name] for name in archive.files if name != "meta"}
    result = {name: np.asarray(array) for name, array in compute().items()}
    if "meta" in result:
        raise ValueError("a kept result cannot have an array named 'meta'; rename it")
    meta = {"digest": digest, "settings": dict(settings), "versions": dict(versions or {})}
    with atomic_write(path) as stream:
        np.savez_compressed(stream, meta=np.array(json.dumps(meta, sort_keys=True)), **result)
    return result
