"""From DCN^p to DKM^p one switch at a time (:data:`dkm.book.ablations._studies.TOWARDS_DKM`)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from dkm.book.ablations._studies import TOWARDS_DKM, Variant, _long, study, variant_scores
from dkm.book.analysis import paired_difference


def towards_dkm_chain(records: Iterable[Mapping[str, Any]], dataset: str, metric: str = "acc",
                      split: str = "test") -> pd.DataFrame:
    """The scores along the walk from DCN^p to DKM^p (:data:`dkm.book.ablations._studies.TOWARDS_DKM`).

    The steps: DCN^p as the protocol runs it; DCN^p at DKM^p's λ and epochs;
    each step of the ``"towards-dkm"`` study, the last of which is DKM^p
    with the hard assignment; DKM^p itself.

    Parameters
    ----------
    records : iterable of dict
        The protocol's records and the ``"towards-dkm"`` study's (any others
        are ignored, except runs of the same configuration as a step, such
        as the ``"alpha"`` study's hard assignment: of two runs of a step
        with the same seed, the later in ``records`` is kept).
    dataset : str
        The dataset id the records name.

    Returns
    -------
    pandas.DataFrame
        Columns ``step`` (an ordered categorical: the steps' labels, the
        paper's method labels in them), ``seed`` and ``score`` (percent).
    """
    records = list(records)
    steps = _towards_dkm_steps()
    chain = _long(((label, variant_scores(records, variant, dataset, metric, split))
                   for label, _, variant in steps), "step")
    chain["step"] = pd.Categorical(chain["step"], categories=[label for label, _, _ in steps],
                                   ordered=True)
    return chain


def _towards_dkm_steps() -> list[tuple[str, str, Variant]]:
    """The steps of :func:`towards_dkm_chain`: label, what the step changes, and its variant."""
    *switched, hard = study("towards-dkm").variants
    steps = [("DCN^p", "DCN^p as the protocol runs it", Variant("dcn-p")),
             ("+ λ and epochs of DKM^p", "DKM^p's λ and number of epochs", switched[0])]
    steps += [(f"+ step {i}", text, variant)
              for i, ((text, _), variant) in enumerate(zip(TOWARDS_DKM, switched[1:]), 1)]
    steps += [(f"+ step {len(TOWARDS_DKM)} = DKM^p, hard", TOWARDS_DKM[-1][0], hard),
              ("DKM^p", "the soft assignment at α = 1000 instead of the hard one",
               Variant("dkm-p"))]
    return steps


def towards_dkm_switches() -> dict[str, str]:
    """What each step of :func:`towards_dkm_chain` changes, by step label, in the chain's order."""
    return {label: text for label, text, _ in _towards_dkm_steps()}


def step_effects(chain: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """What each step of a :func:`towards_dkm_chain` changes, seed by seed.

    Each step is compared with the step before it on their common seeds (same
    initialisation, minibatches and pretraining): the mean of the seed-by-seed
    differences and its t interval.

    Parameters
    ----------
    chain : pandas.DataFrame
        A :func:`towards_dkm_chain` table.
    confidence : float
        Level of the paired t interval.

    Returns
    -------
    pandas.DataFrame
        One row per step after the first, in the chain's order: ``step`` and
        ``previous`` (the labels), ``paired`` (seeds that ran both),
        ``difference`` (step minus previous), ``low`` and ``high`` (NaN with
        fewer than two pairs).
    """
    steps = list(chain["step"].cat.categories)
    scores = {step: rows.set_index("seed")["score"]
              for step, rows in chain.groupby("step", observed=False)}
    rows = []
    for previous, step in zip(steps, steps[1:]):
        difference, low, high, paired = paired_difference(scores[step], scores[previous],
                                                          confidence)
        rows.append({"step": step, "previous": previous, "paired": paired,
                     "difference": difference, "low": low, "high": high})
    return pd.DataFrame(rows, columns=["step", "previous", "paired", "difference", "low", "high"])
