"""The paper's datasets and the user's own data files, as :class:`Dataset` objects.

One entry point, :func:`load`, takes either the name of a dataset of the paper
or the path to a file:

========  ===========  ========  =======  ==============================================
name      samples      features  classes  content
========  ===========  ========  =======  ==============================================
mnist     70,000       784       10       train + test images, pixels / 255 in [0, 1]
usps      9,298        256       10       the paper's smoothed USPS, pixels in [-1, 1]
usps-sharp  9,298      256       10       the sharp USPS of Kaggle/ESL, pixels in [-1, 1]
20news    18,846       2,000     20       tf-idf of the 2,000 most frequent words
rcv1      10,000       2,000     4        RCV1-v2 subset (CCAT, ECAT, GCAT, MCAT)
digits    1,797        64        10       scikit-learn's bundled digits, pixels / 16
========  ===========  ========  =======  ==============================================

``digits`` ships with scikit-learn and needs no file: it is the fast default
for demonstrations and tests. The other datasets are read from a data
directory: the ``data_home`` argument, else the ``DKM_DATA_HOME`` environment
variable, else ``$XDG_CACHE_HOME/dkm`` (``~/.cache/dkm`` by default). A missing
file is downloaded into it from its public source; files of known content are
checked against their SHA-256 digest once per process.

Caveats on the data
-------------------
* USPS exists in two variants with the same 9,298 images, order and labels.
  The file read, ``usps.h5``, is the sharp Kaggle/ESL version in [0, 1]:
  ``usps-sharp`` rescales it with ``2x - 1``. The paper loaded the smoothed
  variant that LIBSVM and mldata.org served; it is an exact function of the
  sharp one (:func:`smooth_usps`), so ``usps`` rebuilds it from ``usps.h5``.
  :func:`load_usps_libsvm_test` reads LIBSVM's own test part (``usps.t.bz2``),
  against which the rebuild is checked.
* RCV1 cannot be reproduced without scikit-learn's ``fetch_rcv1`` download
  (about 1 GB). Its construction, :func:`build_rcv1_subset`, is a pure function,
  tested on a small synthetic stand-in with the same structure; the full
  dataset has not been built on the development machine.

User files
----------
``.npz`` (array ``X`` and optional ``y``), ``.npy`` (a 2-D array, no labels),
``.csv`` (a header line; labels in the column named by ``label_column``) and
svmlight/libsvm text (``.svm``, ``.svmlight``, ``.libsvm``, ``.txt``). Files are
data, never code: NumPy files are read with ``allow_pickle=False``. Labels of
any type are mapped to ``0..C-1`` in sorted order; the original values are kept
in :attr:`Dataset.class_names`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import tempfile
import zipfile
from collections.abc import Callable, Hashable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Dataset",
    "PAPER_STATISTICS",
    "RCV1_CATEGORIES",
    "RCV1_N_DOCUMENTS",
    "available_datasets",
    "build_rcv1_subset",
    "dataset_statistics",
    "from_arrays",
    "get_data_home",
    "load",
    "load_usps_libsvm_test",
    "paper_dataset",
    "smooth_usps",
]

#: Environment variable naming the data directory.
DATA_HOME_VARIABLE = "DKM_DATA_HOME"

#: Samples, classes and dimensions of the paper's datasets (its Table 1).
PAPER_STATISTICS: dict[str, dict[str, int]] = {
    "mnist": {"samples": 70_000, "classes": 10, "dimensions": 784},
    "usps": {"samples": 9_298, "classes": 10, "dimensions": 256},
    "20news": {"samples": 18_846, "classes": 20, "dimensions": 2_000},
    "rcv1": {"samples": 10_000, "classes": 4, "dimensions": 2_000},
}

#: Named datasets that are another variant of one of the paper's datasets.
DATA_VARIANTS: dict[str, str] = {"usps-sharp": "usps"}

#: The Gaussian blur that turns the sharp USPS images into the paper's variant:
#: ``scipy.ndimage.gaussian_filter`` of each 16x16 image in [0, 1] with these
#: arguments, then ``2x - 1``.
USPS_SMOOTHING: dict[str, object] = {"sigma": 0.75, "mode": "constant", "truncate": 4.0}

#: The four RCV1 categories of the paper, in the order of their labels 0-3.
RCV1_CATEGORIES = ("CCAT", "ECAT", "GCAT", "MCAT")

#: Number of documents in scikit-learn's ``fetch_rcv1(subset="all")``.
RCV1_N_DOCUMENTS = 804_414

_SCIKIT_LEARN_HOME = "scikit_learn_data"
_DOWNLOAD_TIMEOUT_S = 60
_CHUNK_BYTES = 1 << 20
_SVMLIGHT_SUFFIXES = (".svm", ".svmlight", ".libsvm", ".txt")


# --------------------------------------------------------------------------
# The Dataset container
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class Dataset:
    """A dataset ready for clustering.

    Parameters
    ----------
    X : numpy.ndarray
        Features, float32 of shape ``(n_samples, n_features)``, all finite.
    y : numpy.ndarray or None
        Integer class labels ``0..C-1`` of shape ``(n_samples,)``, or ``None``
        for unlabelled data.
    n_clusters : int
        Number of clusters to find, between 1 and ``n_samples``.
    name : str
        Short name, e.g. ``"mnist"`` or the stem of a user file.
    description : str
        One line on the content and preprocessing.
    class_names : tuple or None
        Original class of each label value: ``class_names[y[i]]`` is the class
        of sample ``i``. ``None`` when unknown or unlabelled.

    Raises
    ------
    ValueError
        When a field has the wrong type, shape or values.
    """

    X: np.ndarray
    y: np.ndarray | None
    n_clusters: int
    name: str
    description: str = ""
    class_names: tuple[Hashable, ...] | None = None

    def __post_init__(self) -> None:
        _check_features(self.X)
        _check_n_clusters(self.n_clusters, self.X.shape[0])
        if self.y is not None:
            _check_label_codes(self.y, self.X.shape[0], self.class_names)
        elif self.class_names is not None:
            raise ValueError("class_names is given but y is None: pass the labels too")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")

    @property
    def n_samples(self) -> int:
        """Number of samples (rows of ``X``)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of features (columns of ``X``)."""
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int | None:
        """Number of distinct labels in ``y``, or ``None`` when unlabelled."""
        return None if self.y is None else int(np.unique(self.y).size)


def _check_features(X: object) -> None:
    """Raise unless ``X`` is a non-empty, finite, 2-D float32 array."""
    if not isinstance(X, np.ndarray):
        raise ValueError(f"X must be a numpy array, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(
            f"X must be 2-D (samples x features), got shape {X.shape}; "
            "reshape it, e.g. X.reshape(len(X), -1)"
        )
    if X.dtype != np.float32:
        raise ValueError(f"X must be float32, got {X.dtype}; convert with X.astype(np.float32)")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X is empty (shape {X.shape}): need at least one sample and one feature")
    bad = ~np.isfinite(X)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise ValueError(
            f"X contains {int(bad.sum())} NaN or infinite values (missing entries, or "
            f"numbers too large for float32; the first at row {row}, column {column}, "
            "counting from 0); remove or impute them"
        )


def _check_n_clusters(n_clusters: object, n_samples: int) -> None:
    """Raise unless ``n_clusters`` is an integer in ``[1, n_samples]``."""
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)):
        raise ValueError(f"n_clusters must be an integer, got {n_clusters!r}")
    if not 1 <= n_clusters <= n_samples:
        raise ValueError(
            f"n_clusters must be between 1 and the number of samples ({n_samples}), "
            f"got {n_clusters}"
        )


def _check_label_codes(
    y: object, n_samples: int, class_names: tuple[Hashable, ...] | None
) -> None:
    """Raise unless ``y`` holds one label in ``0..C-1`` per sample."""
    if not isinstance(y, np.ndarray) or y.ndim != 1:
        raise ValueError(f"y must be a 1-D numpy array, got {type(y).__name__} {np.shape(y)}")
    if not np.issubdtype(y.dtype, np.integer):
        raise ValueError(
            f"y must hold integer labels 0..C-1, got dtype {y.dtype}; "
            "use from_arrays() to map labels of any type to integers"
        )
    if y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0]} labels but X has {n_samples} samples")
    if y.min() < 0:
        raise ValueError(f"y must hold labels 0..C-1, found {y.min()}")
    if class_names is not None and y.max() >= len(class_names):
        raise ValueError(
            f"y has the label {y.max()} but class_names has only {len(class_names)} entries"
        )


def from_arrays(
    X: ArrayLike,
    y: ArrayLike | None = None,
    *,
    n_clusters: int | None = None,
    name: str = "data",
    description: str = "",
) -> Dataset:
    """Build a :class:`Dataset` from in-memory arrays.

    Parameters
    ----------
    X : array_like
        Numeric features of shape ``(n_samples, n_features)``; converted to
        float32.
    y : array_like, optional
        One label per sample, of any sortable type (integers, strings, ...).
        Labels are mapped to ``0..C-1`` in sorted order and the original
        values are kept in ``class_names``.
    n_clusters : int, optional
        Number of clusters. Required when ``y`` is ``None``; otherwise it
        defaults to the number of distinct labels.
    name, description : str
        Stored in the dataset.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        For non-numeric, non-finite or wrongly shaped features, missing
        labels, or a missing ``n_clusters`` on unlabelled data.
    """
    features = _as_float32(np.asarray(X))
    if y is None:
        if n_clusters is None:
            raise ValueError(
                "the data has no labels: pass n_clusters (the number of clusters to find)"
            )
        return Dataset(features, None, n_clusters, name, description)
    codes, class_names = _encode_labels(np.asarray(y))
    if n_clusters is None:
        n_clusters = len(class_names)
    return Dataset(features, codes, n_clusters, name, description, class_names)


def _as_float32(array: np.ndarray) -> np.ndarray:
    """Convert numeric features to float32; refuse strings, objects, dates."""
    if array.dtype.kind not in "biuf":
        raise ValueError(
            f"the features must be numbers, got an array of dtype {array.dtype}; "
            "remove the non-numeric columns or encode them as numbers"
        )
    return array.astype(np.float32, copy=False)


def _encode_labels(labels: np.ndarray) -> tuple[np.ndarray, tuple[Hashable, ...]]:
    """Map labels of any sortable type to ``0..C-1``; return codes and classes."""
    if labels.ndim != 1:
        raise ValueError(
            f"the labels must be 1-D, got shape {labels.shape}; flatten them with ravel()"
        )
    if labels.size == 0:
        raise ValueError("the labels are empty")
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise ValueError("the labels contain NaN or infinite values: every sample needs a label")
    if labels.dtype.kind not in "biufUSO":
        raise ValueError(
            f"labels of dtype {labels.dtype} are not supported: use integers or strings"
        )
    try:
        classes, codes = np.unique(labels, return_inverse=True)
    except TypeError as err:
        raise ValueError(f"the labels cannot be sorted (mixed types?): {err}") from err
    return codes.astype(np.int64), tuple(classes.tolist())


# --------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------


def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """Return the directory of the dataset files (it may not exist yet).

    Parameters
    ----------
    data_home : str or path-like, optional
        Explicit directory. When ``None``: the ``DKM_DATA_HOME`` environment
        variable, else ``$XDG_CACHE_HOME/dkm``, else ``~/.cache/dkm``.

    Returns
    -------
    pathlib.Path
    """
    if data_home is not None:
        return Path(data_home).expanduser()
    from_environment = os.environ.get(DATA_HOME_VARIABLE)
    if from_environment:
        return Path(from_environment).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "dkm"


def paper_dataset(name: str) -> str:
    """The paper's dataset that ``name`` is a variant of, or ``name`` itself.

    ``paper_dataset("usps-sharp") == "usps"``: a variant takes the paper's
    hyperparameters of its dataset, but its records stay apart from it.
    """
    return DATA_VARIANTS.get(name, name)


def available_datasets() -> tuple[str, ...]:
    """Names accepted by :func:`load` (a path to a file is accepted too)."""
    return tuple(_NAMED_LOADERS)


def load(
    name_or_path: str | os.PathLike[str],
    data_home: str | os.PathLike[str] | None = None,
    *,
    n_clusters: int | None = None,
    label_column: str | None = None,
    download: bool = True,
    verify: bool = True,
    rcv1_seed: int | None = None,
    rcv1_rows: ArrayLike | None = None,
) -> Dataset:
    """Load a dataset of the paper by name, or the user's own data file.

    Parameters
    ----------
    name_or_path : str or path-like
        One of :func:`available_datasets` (case-insensitive), or the path to a
        ``.npz``, ``.npy``, ``.csv``, ``.svm``, ``.svmlight``, ``.libsvm`` or
        ``.txt`` (svmlight) file. Pass a :class:`pathlib.Path` to read a file
        whose name is also a dataset name.
    data_home : str or path-like, optional
        Directory of the named datasets' files; see :func:`get_data_home`.
    n_clusters : int, optional
        Number of clusters. Required for unlabelled files; otherwise it
        defaults to the number of classes.
    label_column : str, optional
        CSV only: the column holding the labels. Without it, every column is
        a feature and the data is unlabelled.
    download : bool, default True
        Named datasets: download a missing file from its public source.
    verify : bool, default True
        Named datasets: check the SHA-256 digest of files of known content
        (once per process and file).
    rcv1_seed : int, optional
        ``rcv1`` only: seed of the sample of 10,000 documents (default 0).
    rcv1_rows : array_like of int, optional
        ``rcv1`` only: rows of ``fetch_rcv1(subset="all")`` to keep instead of
        a seeded sample, e.g. :func:`dkm.splits.authors_rcv1_rows`.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        For an unknown name, an unsupported or malformed file, a checksum
        mismatch, or an option that does not apply.
    FileNotFoundError
        When a file is missing and cannot be downloaded; the message says
        where the file is expected and how to obtain it.
    """
    if isinstance(name_or_path, str) and name_or_path.lower() in _NAMED_LOADERS:
        name = name_or_path.lower()
        unused = _inapplicable_options(name, label_column, rcv1_seed, rcv1_rows)
        _refuse_options(f"the dataset {name!r}", unused)
        options = _Options(download, verify, 0 if rcv1_seed is None else rcv1_seed, rcv1_rows)
        dataset = _NAMED_LOADERS[name](get_data_home(data_home), options)
        if n_clusters is None:
            return dataset
        return dataclasses.replace(dataset, n_clusters=n_clusters)
    _refuse_options("a file", {"rcv1_seed": rcv1_seed, "rcv1_rows": rcv1_rows})
    path = Path(name_or_path)
    if isinstance(name_or_path, str) and not path.suffix and not path.exists():
        raise ValueError(
            f"unknown dataset {name_or_path!r}: valid names are "
            f"{', '.join(available_datasets())}; a path to a data file "
            f"(.npz, .npy, .csv, {', '.join(_SVMLIGHT_SUFFIXES)}) is also accepted"
        )
    return _load_file(path, label_column=label_column, n_clusters=n_clusters)


def dataset_statistics(
    datasets: Iterable[str | os.PathLike[str] | Dataset],
    data_home: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """The paper's dataset-statistics table, computed from the loaded data.

    Parameters
    ----------
    datasets : iterable of str, path-like or Dataset
        Names or paths (loaded with :func:`load`) or datasets already loaded.
    data_home : str or path-like, optional
        Passed to :func:`load`.

    Returns
    -------
    pandas.DataFrame
        One row per dataset, columns ``dataset``, ``samples``, ``classes``
        (distinct labels; missing for unlabelled data) and ``dimensions``.
        :data:`PAPER_STATISTICS` holds the paper's figures.
    """
    import pandas as pd

    rows = []
    for item in datasets:
        dataset = item if isinstance(item, Dataset) else load(item, data_home)
        rows.append(
            {
                "dataset": dataset.name,
                "samples": dataset.n_samples,
                "classes": dataset.n_classes,
                "dimensions": dataset.n_features,
            }
        )
    return pd.DataFrame(rows, columns=["dataset", "samples", "classes", "dimensions"])


def build_rcv1_subset(
    X: ArrayLike,
    target: ArrayLike,
    target_names: Iterable[str],
    n_samples: int = 10_000,
    n_words: int = 2_000,
    seed: int = 0,
    rows: ArrayLike | None = None,
) -> Dataset:
    """The paper's RCV1 subset, built from RCV1-v2 as ``fetch_rcv1`` returns it.

    Keeps the documents with exactly one of the categories CCAT, ECAT, GCAT
    and MCAT, samples ``n_samples`` of them (or takes ``rows``), then keeps the
    ``n_words`` columns with the largest summed tf-idf over the kept documents
    (in their original column order). Labels are 0-3 in the order of
    :data:`RCV1_CATEGORIES`. This is a pure function: it downloads nothing.

    Parameters
    ----------
    X : sparse matrix of shape (n_documents, n_vocabulary)
        Tf-idf features (``fetch_rcv1().data``); a dense array works too.
    target : sparse matrix of shape (n_documents, n_topics)
        Multi-label topic indicators (``fetch_rcv1().target``).
    target_names : iterable of str
        Name of each column of ``target``; must include the four categories.
    n_samples : int, default 10000
        Documents drawn at random, without replacement, among the eligible
        ones. Not used when ``rows`` is given.
    n_words : int, default 2000
        Columns kept.
    seed : int, default 0
        Seed of the sample. Not used when ``rows`` is given.
    rows : array_like of int, optional
        Rows of ``X`` to keep, in this order, instead of a random sample (e.g.
        the authors' index lists). Each must hold exactly one category.

    Returns
    -------
    Dataset
        Dense float32 features of shape ``(n_samples or len(rows), n_words)``.
        Without ``rows`` the sampled documents keep their original order.

    Raises
    ------
    ValueError
        For inconsistent shapes, absent categories, too few eligible
        documents or words, or invalid ``rows``.
    """
    import scipy.sparse as sp

    features = sp.csr_array(X)
    topics = sp.csr_array(target)
    names = [str(name) for name in target_names]
    _check_rcv1_inputs(features, topics, names)
    category_topics = topics[:, [names.index(category) for category in RCV1_CATEGORIES]]
    eligible = np.flatnonzero((category_topics != 0).sum(axis=1) == 1)
    if rows is None:
        chosen = _sample_rows(eligible, n_samples, seed)
        how = f"a sample drawn with seed {seed}"
    else:
        chosen = _check_rcv1_rows(rows, eligible, features.shape[0])
        how = "the rows given"
    kept = features[chosen]
    words = _top_columns(np.asarray(kept.sum(axis=0)).ravel(), n_words)
    labels = np.asarray(category_topics[chosen].argmax(axis=1)).ravel().astype(np.int64)
    return Dataset(
        X=kept[:, words].toarray().astype(np.float32),
        y=labels,
        n_clusters=len(RCV1_CATEGORIES),
        name="rcv1",
        description=(
            f"RCV1-v2: {chosen.size:,} documents with exactly one of "
            f"{'/'.join(RCV1_CATEGORIES)} ({how}), tf-idf of the {words.size:,} words "
            "with the largest summed tf-idf"
        ),
        class_names=RCV1_CATEGORIES,
    )


# --------------------------------------------------------------------------
# RCV1 construction helpers
# --------------------------------------------------------------------------


def _check_rcv1_inputs(features: object, topics: object, names: list[str]) -> None:
    """Raise unless the documents, topics and topic names agree."""
    if features.shape[0] != topics.shape[0]:
        raise ValueError(
            f"X has {features.shape[0]} documents but target has {topics.shape[0]} rows"
        )
    if len(names) != topics.shape[1]:
        raise ValueError(
            f"target has {topics.shape[1]} topic columns but target_names has {len(names)} names"
        )
    absent = [category for category in RCV1_CATEGORIES if category not in names]
    if absent:
        raise ValueError(f"target_names lacks the categories {absent}: is this RCV1?")


def _sample_rows(eligible: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    """Draw ``n_samples`` distinct eligible rows with ``seed``, sorted."""
    if not 1 <= n_samples <= eligible.size:
        raise ValueError(
            f"n_samples must be between 1 and the {eligible.size} documents with exactly "
            f"one of {', '.join(RCV1_CATEGORIES)}, got {n_samples}"
        )
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(eligible, size=n_samples, replace=False))


def _check_rcv1_rows(rows: ArrayLike, eligible: np.ndarray, n_documents: int) -> np.ndarray:
    """Return ``rows`` as an index array or raise if any row is unusable."""
    chosen = np.asarray(rows)
    if chosen.ndim != 1 or chosen.size == 0 or not np.issubdtype(chosen.dtype, np.integer):
        raise ValueError(
            "rows must be a non-empty 1-D array of integers, "
            f"got dtype {chosen.dtype} and shape {chosen.shape}"
        )
    outside = (chosen < 0) | (chosen >= n_documents)
    if outside.any():
        raise ValueError(f"rows must lie in 0..{n_documents - 1}, found {chosen[outside][0]}")
    if np.unique(chosen).size != chosen.size:
        raise ValueError("rows contains duplicates: each document may be kept once")
    unusable = ~np.isin(chosen, eligible)
    if unusable.any():
        raise ValueError(
            f"row {chosen[unusable][0]} does not have exactly one of "
            f"{', '.join(RCV1_CATEGORIES)} ({int(unusable.sum())} such rows)"
        )
    return chosen


def _top_columns(column_sums: np.ndarray, n_words: int) -> np.ndarray:
    """Indices of the ``n_words`` largest sums, ties to the lower index, sorted."""
    if not 1 <= n_words <= column_sums.size:
        raise ValueError(f"n_words must be between 1 and {column_sums.size}, got {n_words}")
    return np.sort(np.argsort(-column_sums, kind="stable")[:n_words])


# --------------------------------------------------------------------------
# Local files, checksums and downloads
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _RemoteFile:
    """A file of a named dataset: where it lives and how to get it."""

    path: str
    sha256: tuple[str, ...]
    url: str | None
    how_to_obtain: str


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
_NEWS20 = _RemoteFile(
    path=f"{_SCIKIT_LEARN_HOME}/20news-bydate_py3.pkz",
    sha256=("b343e7de2dd179796ef498fe2da50b66b798b33562b6854662b1c329fc8417fc",),
    url=None,
    how_to_obtain=(
        "scikit-learn downloads it (14 MB, checksum-verified) with "
        "fetch_20newsgroups(subset='all', data_home=<data_home>/scikit_learn_data): "
        "load('20news', download=True) does this when the network is reachable."
    ),
)


def _digest_record(path: Path) -> Path:
    """The file recording the digest of a file this package downloaded."""
    return path.with_name(path.name + ".sha256")


def _accepted_digests(spec: _RemoteFile, path: Path) -> tuple[str, ...]:
    """The pinned digests of ``spec`` plus the one recorded at download time."""
    record = _digest_record(path)
    if not record.is_file():
        return spec.sha256
    return (*spec.sha256, record.read_text(encoding="ascii").split()[0])


def _record_digest(path: Path) -> None:
    """Record the digest of a freshly built file, in ``sha256sum`` format."""
    _digest_record(path).write_text(f"{_file_sha256(path)}  {path.name}\n", encoding="ascii")


@functools.lru_cache(maxsize=None)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    """SHA-256 of a file; cached per path, size and modification time."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    """SHA-256 of ``path``, hashed once per process unless the file changes."""
    status = path.stat()
    return _sha256_of(str(path.resolve()), status.st_size, status.st_mtime_ns)


def _verify(spec: _RemoteFile, path: Path) -> None:
    """Raise if the digest of ``path`` is not one of those accepted."""
    digest = _file_sha256(path)
    accepted = _accepted_digests(spec, path)
    if digest not in accepted:
        raise ValueError(
            f"checksum mismatch for {path}: its SHA-256 is {digest}, expected "
            f"{' or '.join(accepted)}. The file is corrupt or a different version. "
            f"Delete it to have it downloaded again, or replace it: {spec.how_to_obtain} "
            "Pass verify=False to skip this check."
        )


def _open_url(url: str) -> BinaryIO:
    """Open ``url`` for reading (the one place that touches the network)."""
    import urllib.request

    return urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S)


def _download(url: str, destination: Path, accepted: tuple[str, ...]) -> None:
    """Download ``url`` to ``destination``, verified, via an atomic rename.

    The bytes go to a temporary file in the destination directory, which
    replaces ``destination`` only once its digest is one of ``accepted``; on
    any failure the temporary file is removed.
    """
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary_name = tempfile.mkstemp(
        prefix=f".{destination.name}.", suffix=".part", dir=destination.parent
    )
    temporary = Path(temporary_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(handle, "wb") as output, _open_url(url) as response:
            for chunk in iter(lambda: response.read(_CHUNK_BYTES), b""):
                digest.update(chunk)
                output.write(chunk)
        if digest.hexdigest() not in accepted:
            raise ValueError(
                f"the file downloaded from {url} has SHA-256 {digest.hexdigest()}, expected "
                f"{' or '.join(accepted)}; it was discarded and nothing was written to "
                f"{destination}"
            )
        temporary.chmod(0o644)  # mkstemp creates it readable by its owner only
        os.replace(temporary, destination)
    finally:
        temporary.unlink(missing_ok=True)


def _missing_message(what: str, path: Path, reason: str, how_to_obtain: str) -> str:
    """Say which file is expected where, why it is absent and how to get it."""
    return (
        f"{what} is not available: expected {path} ({reason}). {how_to_obtain} "
        f"Then put it at that path, or point data_home (or the {DATA_HOME_VARIABLE} "
        "environment variable) to the directory that holds it."
    )


def _local_file(spec: _RemoteFile, home: Path, options: _Options) -> Path:
    """Path of a verified local copy of ``spec``, downloading it if needed."""
    path = home / spec.path
    if path.is_file():
        if options.verify:
            _verify(spec, path)
        return path
    if not options.download or spec.url is None:
        reason = "download=False" if spec.url is not None else "no download source"
        raise FileNotFoundError(_missing_message(spec.path, path, reason, spec.how_to_obtain))
    try:
        _download(spec.url, path, spec.sha256)
    except OSError as err:
        reason = f"the download from {spec.url} failed: {err}"
        message = _missing_message(spec.path, path, reason, spec.how_to_obtain)
        raise FileNotFoundError(message) from err
    return path


@contextlib.contextmanager
def _reading(spec: _RemoteFile, path: Path) -> Iterator[None]:
    """Turn a failure to read a named dataset's file into a clear error."""
    try:
        yield
    except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile) as err:
        raise ValueError(
            f"cannot read {path} ({type(err).__name__}: {err}). The file is corrupt or "
            f"not the expected one: delete it to have it downloaded again, or replace it. "
            f"{spec.how_to_obtain}"
        ) from err


# --------------------------------------------------------------------------
# The named datasets
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Options:
    """What :func:`load` passes on to the loader of a named dataset."""

    download: bool
    verify: bool
    rcv1_seed: int
    rcv1_rows: ArrayLike | None


def _labelled(X: np.ndarray, labels: np.ndarray, name: str, description: str) -> Dataset:
    """A dataset whose clusters are its classes."""
    codes, class_names = _encode_labels(labels)
    return Dataset(X, codes, len(class_names), name, description, class_names)


def _load_mnist(home: Path, options: _Options) -> Dataset:
    """MNIST: the 70,000 train and test images, flattened, pixels / 255."""
    path = _local_file(_MNIST, home, options)
    with _reading(_MNIST, path), np.load(path, allow_pickle=False) as archive:
        images = np.concatenate([archive["x_train"], archive["x_test"]])
        labels = np.concatenate([archive["y_train"], archive["y_test"]])
    X = images.reshape(images.shape[0], -1).astype(np.float32)
    X /= np.float32(255)
    description = "MNIST: 70,000 handwritten digits (train + test), 28x28 pixels / 255"
    return _labelled(X, labels, "mnist", description)


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


def _load_20news(home: Path, options: _Options) -> Dataset:
    """20 Newsgroups: all 18,846 documents, tf-idf of the 2,000 top words."""
    import sklearn.datasets
    from sklearn.feature_extraction.text import TfidfVectorizer

    cache = home / _NEWS20.path
    was_present = cache.is_file()
    if was_present and options.verify:
        _verify(_NEWS20, cache)
    try:
        bunch = sklearn.datasets.fetch_20newsgroups(
            subset="all", data_home=str(cache.parent), download_if_missing=options.download
        )
    except OSError as err:
        reason = _fetch_failure(options, err)
        message = _missing_message("20 Newsgroups", cache, reason, _NEWS20.how_to_obtain)
        raise FileNotFoundError(message) from err
    if not was_present and cache.is_file():
        _record_digest(cache)
    X = TfidfVectorizer(max_features=2000).fit_transform(bunch.data).toarray().astype(np.float32)
    return Dataset(
        X,
        bunch.target.astype(np.int64),
        len(bunch.target_names),
        "20news",
        "20 Newsgroups: 18,846 documents (headers kept), tf-idf of the 2,000 most frequent words",
        tuple(bunch.target_names),
    )


def _load_rcv1(home: Path, options: _Options) -> Dataset:
    """RCV1: the paper's 10,000-document, 4-class subset of RCV1-v2."""
    import sklearn.datasets

    sk_home = home / _SCIKIT_LEARN_HOME
    try:
        bunch = sklearn.datasets.fetch_rcv1(
            data_home=str(sk_home), subset="all", download_if_missing=options.download
        )
    except OSError as err:
        how = (
            "scikit-learn downloads RCV1-v2 (about 1 GB, checksum-verified) with "
            "fetch_rcv1(subset='all', data_home=<data_home>/scikit_learn_data); "
            "it needs network access."
        )
        message = _missing_message("RCV1", sk_home / "RCV1", _fetch_failure(options, err), how)
        raise FileNotFoundError(message) from err
    return build_rcv1_subset(
        bunch.data,
        bunch.target,
        bunch.target_names,
        n_samples=PAPER_STATISTICS["rcv1"]["samples"],
        n_words=PAPER_STATISTICS["rcv1"]["dimensions"],
        seed=options.rcv1_seed,
        rows=options.rcv1_rows,
    )


def _fetch_failure(options: _Options, err: OSError) -> str:
    """Why scikit-learn's fetcher could not provide a dataset."""
    if not options.download:
        return "download=False"
    return f"scikit-learn's download failed: {err}"


def _load_digits(home: Path, options: _Options) -> Dataset:
    """scikit-learn's bundled 8x8 digits, pixels / 16 (no file needed)."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    X = bunch.data.astype(np.float32) / np.float32(16)
    description = "scikit-learn digits: 1,797 images, 8x8 pixels / 16"
    return _labelled(X, bunch.target, "digits", description)


_NAMED_LOADERS: dict[str, Callable[[Path, _Options], Dataset]] = {
    "mnist": _load_mnist,
    "usps": _load_usps,
    "usps-sharp": _load_usps_sharp,
    "20news": _load_20news,
    "rcv1": _load_rcv1,
    "digits": _load_digits,
}


def _inapplicable_options(
    name: str, label_column: str | None, rcv1_seed: int | None, rcv1_rows: ArrayLike | None
) -> dict[str, object]:
    """The options given to :func:`load` that the named dataset does not use."""
    options: dict[str, object] = {"label_column": label_column}
    if name != "rcv1":
        options.update(rcv1_seed=rcv1_seed, rcv1_rows=rcv1_rows)
    return options


def _refuse_options(target: str, options: dict[str, object]) -> None:
    """Raise if any of ``options`` was given (is not ``None``)."""
    given = [key for key, value in options.items() if value is not None]
    if given:
        raise ValueError(f"{', '.join(given)} cannot be used with {target}: leave it out")


# --------------------------------------------------------------------------
# The user's own files
# --------------------------------------------------------------------------


def _load_file(path: Path, *, label_column: str | None, n_clusters: int | None) -> Dataset:
    """Read a user file into a :class:`Dataset`; errors name the file."""
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
            X, y, n_clusters=n_clusters, name=path.stem, description=f"user data from {path}"
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


def _read_csv(path: Path, label_column: str | None) -> tuple[np.ndarray, np.ndarray | None]:
    """A CSV file with a header line; labels in ``label_column`` if given."""
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except (ValueError, UnicodeDecodeError) as err:
        raise ValueError(
            f"cannot parse the CSV ({str(err).strip()}); it needs a header line and the "
            "same number of comma-separated fields on every line"
        ) from err
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
