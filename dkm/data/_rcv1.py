"""RCV1: the paper's 10,000-document, 4-class subset of RCV1-v2, and its loader.

:func:`build_rcv1_subset` is a pure function of what scikit-learn's
``fetch_rcv1`` returns; :func:`_load_rcv1` fetches RCV1-v2 and applies it.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from dkm.data._dataset import Dataset
from dkm.data._fetch import _SCIKIT_LEARN_HOME, _Options, _fetch_failure, _missing_message

#: The four RCV1 categories of the paper, in the order of their labels 0-3.
RCV1_CATEGORIES = ("CCAT", "ECAT", "GCAT", "MCAT")

#: Number of documents in scikit-learn's ``fetch_rcv1(subset="all")``.
RCV1_N_DOCUMENTS = 804_414


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


def _load_rcv1(home: Path, options: _Options) -> Dataset:
    """RCV1: the paper's 10,000-document, 4-class subset of RCV1-v2."""
    import sklearn.datasets

    # The paper's Table 1 is part of the package's public face, dkm.data,
    # which imports this module; read it when a load runs, not at import.
    from dkm.data import PAPER_STATISTICS

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
