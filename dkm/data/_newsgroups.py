"""20 Newsgroups: scikit-learn's cached archive, its checksum, and the tf-idf of its top words."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from dkm.data._dataset import Dataset
from dkm.data._fetch import (
    _SCIKIT_LEARN_HOME,
    _Options,
    _RemoteFile,
    _fetch_failure,
    _missing_message,
    _record_digest,
    _verify,
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
