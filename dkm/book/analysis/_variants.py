"""A data variant (``usps-sharp``) and its paper dataset: runs in its column, the effect."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from dkm.book.analysis._paired import paired_difference, seed_scores
from dkm.data import paper_dataset
from dkm.protocol.results import config_hash, records_to_dataframe


def on_paper_dataset(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Copies of records of a data variant, named as their paper dataset.

    The result tables (:mod:`dkm.book.tables`) have one column per paper dataset;
    this lets them show a variant's runs (``"usps-sharp"``) in that column, on
    its own. The copies' ``config_hash`` is recomputed for the new name, so
    they validate; they are a view for tables, not records to store.
    """
    copies = []
    for record in records:
        copy = dict(record, dataset=paper_dataset(record["dataset"]))
        copy["config_hash"] = config_hash(copy["dataset"], copy["method"], copy["seed"],
                                          copy["params"])
        copies.append(copy)
    return copies


def variant_effect(records: Iterable[Mapping[str, Any]], dataset: str, variant: str,
                   models: Sequence[str], metric: str = "acc",
                   confidence: float = 0.95) -> pd.DataFrame:
    """How much a data variant moves each model, seed by seed.

    Parameters
    ----------
    records : iterable of dict
        Records of both datasets.
    dataset, variant : str
        The two dataset ids (``"usps"``, ``"usps-sharp"``).
    models : sequence of str
        The paper's labels of the models.
    metric : {"acc", "nmi", "ari"}
    confidence : float

    Returns
    -------
    pandas.DataFrame
        Indexed by model: the mean score on each dataset over the seeds both
        have, the mean of ``dataset − variant`` over those seeds, its t
        interval and the number of seeds.
    """
    frame = records_to_dataframe(list(records)).drop_duplicates("config_hash", keep="last")
    rows = {}
    for model in models:
        first, second = seed_scores(frame, model, dataset, metric), \
            seed_scores(frame, model, variant, metric)
        mean, low, high, n = paired_difference(first, second, confidence)
        common = first.index.intersection(second.index)
        rows[model] = {dataset: first[common].mean(), variant: second[common].mean(),
                       "difference": mean, "low": low, "high": high, "n": n}
    return pd.DataFrame.from_dict(rows, orient="index")
