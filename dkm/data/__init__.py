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

import dataclasses
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from numpy.typing import ArrayLike

# One private module per job or source (dkm/__init__.py maps them); every
# public name is re-exported here, the one place to import it from.
from dkm.data._dataset import Dataset, _refuse_options, feature_scale_advice, from_arrays
from dkm.data._digits import _load_digits
from dkm.data._fetch import DATA_HOME_VARIABLE, _Options, get_data_home
from dkm.data._files import _SVMLIGHT_SUFFIXES, _load_file
from dkm.data._mnist import _load_mnist
from dkm.data._newsgroups import _load_20news
from dkm.data._rcv1 import RCV1_CATEGORIES, RCV1_N_DOCUMENTS, _load_rcv1, build_rcv1_subset
from dkm.data._usps import (
    USPS_SMOOTHING,
    _load_usps,
    _load_usps_sharp,
    load_usps_libsvm_test,
    smooth_usps,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Dataset",
    "PAPER_LABELS",
    "PAPER_STATISTICS",
    "RCV1_CATEGORIES",
    "RCV1_N_DOCUMENTS",
    "available_datasets",
    "build_rcv1_subset",
    "dataset_label",
    "dataset_statistics",
    "feature_scale_advice",
    "from_arrays",
    "get_data_home",
    "load",
    "load_usps_libsvm_test",
    "paper_dataset",
    "paper_datasets",
    "smooth_usps",
]

#: Samples, classes and dimensions of the paper's datasets (its Table 1).
PAPER_STATISTICS: dict[str, dict[str, int]] = {
    "mnist": {"samples": 70_000, "classes": 10, "dimensions": 784},
    "usps": {"samples": 9_298, "classes": 10, "dimensions": 256},
    "20news": {"samples": 18_846, "classes": 20, "dimensions": 2_000},
    "rcv1": {"samples": 10_000, "classes": 4, "dimensions": 2_000},
}

#: The paper's label of each of its datasets.
PAPER_LABELS: dict[str, str] = {"mnist": "MNIST", "usps": "USPS", "20news": "20NEWS", "rcv1": "RCV1"}

#: Named datasets that are another variant of one of the paper's datasets.
DATA_VARIANTS: dict[str, str] = {"usps-sharp": "usps"}

#: The loader of each name :func:`load` accepts, in the order of the table above.
_NAMED_LOADERS: dict[str, Callable[[Path, _Options], Dataset]] = {
    "mnist": _load_mnist,
    "usps": _load_usps,
    "usps-sharp": _load_usps_sharp,
    "20news": _load_20news,
    "rcv1": _load_rcv1,
    "digits": _load_digits,
}


def paper_dataset(name: str) -> str:
    """The paper's dataset that ``name`` is a variant of, or ``name`` itself.

    ``paper_dataset("usps-sharp") == "usps"``: a variant takes the paper's
    hyperparameters of its dataset, but its records stay apart from it.
    """
    return DATA_VARIANTS.get(name, name)


#: What sets each data variant apart from its paper's dataset, as its label says it.
DATA_VARIANT_LABELS: dict[str, str] = {"usps-sharp": "sharp file"}


#: A reader's label of each named dataset that is not the paper's.
OTHER_LABELS: dict[str, str] = {"digits": "scikit-learn digits"}


def dataset_label(name: str) -> str:
    """A reader's label of a named dataset: the paper's, with a data variant named, or
    :data:`OTHER_LABELS`'.

    Examples
    --------
    >>> dataset_label("usps"), dataset_label("usps-sharp"), dataset_label("digits")
    ('USPS', 'USPS (sharp file)', 'scikit-learn digits')
    """
    if name in OTHER_LABELS:
        return OTHER_LABELS[name]
    lowered = paper_dataset(name.lower())
    if lowered not in PAPER_LABELS:
        raise ValueError(f"unknown paper dataset {name!r}; expected one of "
                         f"{list(PAPER_LABELS.values())}")
    label = PAPER_LABELS[lowered]
    return f"{label} ({DATA_VARIANT_LABELS[name]})" if name in DATA_VARIANTS else label


def available_datasets() -> tuple[str, ...]:
    """Names accepted by :func:`load` (a path to a file is accepted too)."""
    return tuple(_NAMED_LOADERS)


def paper_datasets() -> tuple[str, ...]:
    """The named datasets that are the paper's or a variant of one (not ``digits``).

    In the order of :func:`available_datasets`: each has a :func:`dataset_label`.
    """
    return tuple(name for name in _NAMED_LOADERS if paper_dataset(name) in PAPER_STATISTICS)


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


def _inapplicable_options(
    name: str, label_column: str | None, rcv1_seed: int | None, rcv1_rows: ArrayLike | None
) -> dict[str, object]:
    """The options given to :func:`load` that the named dataset does not use."""
    options: dict[str, object] = {"label_column": label_column}
    if name != "rcv1":
        options.update(rcv1_seed=rcv1_seed, rcv1_rows=rcv1_rows)
    return options
