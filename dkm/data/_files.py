"""The user's own data files: ``.npz``, ``.npy``, ``.csv`` and svmlight/libsvm text.

Files are data, never code: NumPy files are read with ``allow_pickle=False``.
Every error names the file.
"""
from __future__ import annotations

import contextlib
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dkm.data._dataset import Dataset, _refuse_options, from_arrays
from dkm.paths import shown_path

if TYPE_CHECKING:
    import pandas as pd

_SVMLIGHT_SUFFIXES = (".svm", ".svmlight", ".libsvm", ".txt")


def _load_file(path: Path, *, label_column: str | None, n_clusters: int | None) -> Dataset:
    """Read a user file into a :class:`Dataset`; errors name the file."""
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a data file: name the file in it "
                         "(.npz, .npy, .csv or svmlight)")
    if not path.is_file():
        raise FileNotFoundError(f"no such data file: {path}")
    suffix = path.suffix.lower()
    if suffix != ".csv":
        target = f"a {suffix or 'suffix-less'} file (CSV only)"
        _refuse_options(target, {"label_column": label_column})
    try:
        if suffix == ".csv":
            X, y = _read_csv(path, label_column)
        elif suffix in _FILE_READERS:
            X, y = _FILE_READERS[suffix](path)
        else:
            raise ValueError(
                f"unsupported file type {suffix or '(none)'}: use .npz, .npy, .csv or svmlight "
                f"({', '.join(_SVMLIGHT_SUFFIXES)})"
            )
        return from_arrays(
            X, y, n_clusters=n_clusters, name=path.stem,
            description=f"user data from {shown_path(path)}",
        )
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err


@contextlib.contextmanager
def _reading_numpy() -> Iterator[None]:
    """Turn NumPy's failures to read a file into clear errors."""
    try:
        yield
    except ValueError as err:
        if "pickle" in str(err) or "Object arrays" in str(err):
            raise ValueError(
                "the file holds an object (pickled) array, which is never loaded: "
                "save numeric features (and numeric or string labels) instead"
            ) from err
        raise ValueError(f"not a readable NumPy file: {err}") from err
    except (OSError, EOFError, zipfile.BadZipFile) as err:
        raise ValueError(f"not a readable NumPy file ({type(err).__name__}: {err})") from err


def _read_npy(path: Path) -> tuple[np.ndarray, None]:
    """A ``.npy`` file: one 2-D array of features, no labels."""
    with _reading_numpy():
        array = np.load(path, allow_pickle=False)
    if not isinstance(array, np.ndarray):
        raise ValueError("this is an .npz archive, not an .npy array: rename it to .npz")
    return array, None


def _read_npz(path: Path) -> tuple[np.ndarray, np.ndarray | None]:
    """A ``.npz`` archive: features ``X`` and optional labels ``y``."""
    with _reading_numpy():
        archive = np.load(path, allow_pickle=False)
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError("this is an .npy array, not an .npz archive: rename it to .npy")
    with archive:
        if "X" not in archive.files:
            found = ", ".join(archive.files) or "nothing"
            raise ValueError(f"no array named 'X' (the features) in the archive; it holds {found}")
        with _reading_numpy():
            X = archive["X"]
            y = archive["y"] if "y" in archive.files else None
    if y is not None and y.shape[:1] != X.shape[:1]:
        n_labels = y.shape[0] if y.ndim else 0
        n_rows = X.shape[0] if X.ndim else 0
        raise ValueError(f"'y' has {n_labels} labels but 'X' has {n_rows} rows")
    return X, y


def _first_line_is_numbers(path: Path) -> bool:
    """Whether every field of the CSV's first line reads as a number (no header line)."""
    import csv

    with open(path, newline="", encoding="utf-8", errors="replace") as file:
        first = next(csv.reader(file), [])
    try:
        [float(field) for field in first]
    except ValueError:
        return False
    return bool(first)


def _read_csv(path: Path, label_column: str | None) -> tuple[np.ndarray, np.ndarray | None]:
    """A CSV file; labels in ``label_column`` if given.

    The first line is the header, unless every one of its fields is a number (what
    ``numpy.savetxt(..., delimiter=",")`` writes): the file is then all data, and its
    columns are named by their positions, ``"0"``, ``"1"``, ...
    """
    import pandas as pd

    headerless = _first_line_is_numbers(path)
    try:
        frame = pd.read_csv(path, header=None if headerless else "infer")
    except (ValueError, UnicodeDecodeError) as err:
        raise ValueError(
            f"cannot parse the CSV ({str(err).strip()}); it needs a header line (or numbers "
            "only) and the same number of comma-separated fields on every line"
        ) from err
    if headerless:
        frame.columns = [str(position) for position in range(frame.shape[1])]
    if frame.shape[0] == 0:
        raise ValueError("the CSV has a header but no data rows")
    labels = None if label_column is None else _pop_label_column(frame, label_column)
    if frame.shape[1] == 0:
        raise ValueError("the CSV holds labels but no feature columns")
    non_numeric = [
        str(column)
        for column in frame.columns
        if not pd.api.types.is_numeric_dtype(frame[column])
    ]
    if non_numeric:
        raise ValueError(
            f"non-numeric feature columns: {', '.join(non_numeric)}. Encode them as numbers, "
            "drop them, or name the label column with label_column=..."
        )
    return frame.to_numpy(), labels


def _pop_label_column(frame: pd.DataFrame, label_column: str) -> np.ndarray:
    """Remove the label column from ``frame`` and return its values."""
    if label_column not in frame.columns:
        raise ValueError(
            f"no column named {label_column!r}; "
            f"the columns are {', '.join(map(str, frame.columns))}"
        )
    labels = frame.pop(label_column)
    missing = labels.isna().to_numpy()
    if missing.any():
        raise ValueError(
            f"the label column {label_column!r} has {int(missing.sum())} empty values "
            f"(the first in data row {int(np.argmax(missing)) + 1}): every sample needs a label"
        )
    return labels.to_numpy()


def _read_svmlight(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """An svmlight/libsvm text file: ``label index:value ...`` per line."""
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(path), dtype=np.float32)
    except (ValueError, UnicodeDecodeError) as err:
        raise ValueError(f"not a valid svmlight/libsvm file: {err}") from err
    if X.shape[0] == 0:
        raise ValueError("the svmlight file holds no samples")
    if X.nnz == 0:
        raise ValueError("the svmlight file holds labels but no feature values")
    return X.toarray(), y


_FILE_READERS: dict[str, Callable[[Path], tuple[np.ndarray, np.ndarray | None]]] = {
    ".npy": _read_npy,
    ".npz": _read_npz,
    **{suffix: _read_svmlight for suffix in _SVMLIGHT_SUFFIXES},
}
