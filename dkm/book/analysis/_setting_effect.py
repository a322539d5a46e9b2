"""The same runs in two settings (the products' precision, the arithmetic), two stores of records
of the same seeds: what the setting changes, in the scores and in the verdicts drawn from them."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dkm.book.analysis._cells import STANDINGS, distinct_cells
from dkm.book.analysis._claims import TESTED, check_claims
from dkm.book.analysis._coverage import missing_seeds
from dkm.book.analysis._paired import paired_difference, seed_scores
from dkm.book.tables import comparisons
from dkm.protocol import registry
from dkm.protocol.results import record_arithmetic, records_to_dataframe

SETTING_EFFECT_COLUMNS = ["model", "metric", "n", "reference", "reference_sd", "other",
                          "other_sd", "difference", "difference_sd", "low", "high",
                          "within_spread"]


def setting_effect(reference: Iterable[Mapping[str, Any]], other: Iterable[Mapping[str, Any]],
                   dataset: str, models: Sequence[str],
                   metrics: Sequence[str] = ("acc", "nmi", "ari"),
                   confidence: float = 0.95) -> pd.DataFrame:
    """How much another setting moves each model, seed by seed.

    Parameters
    ----------
    reference, other : iterable of dict
        The records in the reference setting and in the other (two stores: a
        record's precision and arithmetic are among its parameters, so both may
        hold the same seeds).
    dataset : str
        The dataset id as the records name it.
    models : sequence of str
        The paper's labels of the models.
    metrics : sequence of {"acc", "nmi", "ari"}
    confidence : float

    Returns
    -------
    pandas.DataFrame
        One row per model and metric, over the seeds both stores have (``n``): the
        mean and sd of each store's test scores (%), the mean of ``other −
        reference`` with its sd and t interval (points), and ``within_spread``: whether
        that mean difference is no larger, in size, than the reference's
        seed-to-seed sd.
    """
    first, second = _frame(reference), _frame(other)
    rows = []
    for model in models:
        for metric in metrics:
            before = seed_scores(first, model, dataset, metric)
            after = seed_scores(second, model, dataset, metric)
            mean, low, high, n = paired_difference(after, before, confidence)
            common = before.index.intersection(after.index)
            spread = before[common].std(ddof=1)
            gaps = after[common] - before[common]
            rows.append({"model": model, "metric": metric, "n": n,
                         "reference": before[common].mean(), "reference_sd": spread,
                         "other": after[common].mean(), "other_sd": after[common].std(ddof=1),
                         "difference": mean, "difference_sd": gaps.std(ddof=1),
                         "low": low, "high": high,
                         "within_spread": bool(abs(mean) <= spread)})
    return pd.DataFrame(rows, columns=SETTING_EFFECT_COLUMNS)


def seed_differences(reference: Iterable[Mapping[str, Any]], other: Iterable[Mapping[str, Any]],
                     dataset: str, model: str, metric: str = "acc") -> pd.Series:
    """``other − reference``, seed by seed: the differences :func:`setting_effect` averages.

    Parameters
    ----------
    reference, other : iterable of dict
        The records in the reference setting and in the other.
    dataset : str
        The dataset id as the records name it.
    model : str
        The paper's label of the model.
    metric : {"acc", "nmi", "ari"}

    Returns
    -------
    pandas.Series
        Test-score differences in points, indexed by the seeds both stores have, sorted.
    """
    return (seed_scores(_frame(other), model, dataset, metric)
            - seed_scores(_frame(reference), model, dataset, metric)).dropna()


def verdict_changes(reference: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """The claims' verdicts in two settings, side by side.

    Parameters
    ----------
    reference, other : pandas.DataFrame
        :func:`dkm.book.analysis.check_claims` of each setting's records.

    Returns
    -------
    pandas.DataFrame
        One row per claim, dataset and metric decided in both (a verdict of
        :data:`TESTED`): ``claim``, ``label``, ``dataset``, ``metric``, ``reference``
        and ``other`` (the two verdicts) and ``changed``.
    """
    keys = ["claim", "label", "dataset", "metric"]
    both = reference[keys + ["verdict"]].merge(other[keys + ["verdict"]], on=keys,
                                               suffixes=("_reference", "_other"))
    both = both[both.verdict_reference.isin(TESTED) & both.verdict_other.isin(TESTED)]
    return pd.DataFrame({**{key: both[key] for key in keys},
                         "reference": both.verdict_reference, "other": both.verdict_other,
                         "changed": both.verdict_reference != both.verdict_other}
                        ).reset_index(drop=True)


def standing_changes(reference: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """The result cells' standings against the paper's figures in two settings, side by side.

    Parameters
    ----------
    reference, other : pandas.DataFrame
        :func:`dkm.book.tables.comparisons` of each setting's records; a cell several
        tables show counts once (:func:`distinct_cells`).

    Returns
    -------
    pandas.DataFrame
        One row per cell both have: ``dataset``, ``model``, ``metric``,
        ``reference`` and ``other`` (``"consistent"``, ``"above"`` or ``"below"``,
        :data:`STANDINGS`) and ``changed``.
    """
    keys = ["dataset", "model", "metric"]
    both = distinct_cells(reference)[keys + ["verdict"]].merge(
        distinct_cells(other)[keys + ["verdict"]], on=keys, suffixes=("_reference", "_other"))
    return pd.DataFrame({**{key: both[key] for key in keys},
                         "reference": both.verdict_reference.map(STANDINGS),
                         "other": both.verdict_other.map(STANDINGS),
                         "changed": both.verdict_reference != both.verdict_other}
                        ).reset_index(drop=True)


@dataclass(frozen=True)
class ArithmeticComparison:
    """The same runs in the native and the reproducible arithmetic (:func:`arithmetic_comparison`).

    Attributes
    ----------
    methods : list of str
        The methods compared: those whose every seed both arithmetics have.
    native, reproducible : list of dict
        Their records in each arithmetic.
    effect : pandas.DataFrame
        :func:`setting_effect` with the reproducible records as reference: ``difference`` is
        native − reproducible, ``other_sd`` the native runs' seed-to-seed sd.
    verdicts : pandas.DataFrame
        :func:`verdict_changes`, native (``reference``) against reproducible (``other``).
    standings : pandas.DataFrame
        :func:`standing_changes`, likewise.
    """

    methods: list[str]
    native: list[dict[str, Any]]
    reproducible: list[dict[str, Any]]
    effect: pd.DataFrame
    verdicts: pd.DataFrame
    standings: pd.DataFrame


def arithmetic_comparison(records: Iterable[Mapping[str, Any]], dataset: str,
                          methods: Sequence[str]) -> ArithmeticComparison:
    """What the arithmetic changes on one dataset: scores seed by seed, claims, cells.

    Parameters
    ----------
    records : iterable of dict
        Records of both arithmetics (:func:`dkm.protocol.results.record_arithmetic` tells them
        apart), of any datasets.
    dataset : str
        The dataset id as the records name it.
    methods : sequence of str
        Method ids; those whose every seed (the paper's) both arithmetics have are compared.
    """
    on_dataset = [dict(r) for r in records if r["dataset"] == dataset]
    split = {arithmetic: [r for r in on_dataset if record_arithmetic(r) == arithmetic]
             for arithmetic in ("native", "reproducible")}
    both = [m for m in methods
            if not any(missing_seeds(part, dataset, [m]) for part in split.values())]
    native, reproducible = ([r for r in part if r["method"] in both] for part in split.values())
    labels = [registry.get(m).label for m in both]
    return ArithmeticComparison(
        both, native, reproducible,
        setting_effect(reproducible, native, dataset, labels),
        verdict_changes(check_claims(native, datasets=[dataset]),
                        check_claims(reproducible, datasets=[dataset])),
        standing_changes(comparisons(native), comparisons(reproducible)))


def _frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A store's records as a frame, a configuration stored twice counted once (its last)."""
    return records_to_dataframe(list(records)).drop_duplicates("config_hash", keep="last")
