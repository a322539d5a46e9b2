"""Same-seed scores of a model and the paired difference of two: what the claims compare.

Two models run on the same seeds share their initial network, minibatches and
pretraining; the difference of their scores seed by seed removes what the seeds
share. The data variants and the ablations compare their runs the same way.
"""
from __future__ import annotations

import math

import pandas as pd

from dkm.book.stats import paired_interval, student_interval
from dkm.book.tables import selected_tradeoff
from dkm.protocol import paper
from dkm.protocol.results import score_column


def seed_scores(frame: pd.DataFrame, model: str, dataset: str, metric: str,
                split: str = "test") -> pd.Series:
    """One model's scores by seed (percent), at the selected trade-off value.

    Parameters
    ----------
    frame : pandas.DataFrame
        Records as :func:`dkm.protocol.results.records_to_dataframe` gives them.
    model : str
        The paper's label (``"DKM^p"``, ``"DKM^a_ce"``, ``"DCN^p + KM"``).
    dataset : str
        Dataset id as the records name it (``"usps-sharp"`` included).
    metric : {"acc", "nmi", "ari"}
    split : {"validation", "test"}

    Returns
    -------
    pandas.Series
        Indexed by seed, sorted; empty when there is no run.
    """
    ref = paper.parse_model_label(model)
    runs = frame[(frame["method"] == ref.method) & (frame["dataset"] == dataset)
                 & (frame["distance"] == (ref.distance or "euclidean"))]
    chosen = selected_tradeoff(runs)
    if not math.isnan(chosen):
        runs = runs[runs["tradeoff"] == chosen]
    column = score_column(metric, split, ref.kmeans_on_embedding)
    scores = runs.set_index("seed")[column].dropna() * 100
    return scores[~scores.index.duplicated(keep="last")].sort_index()


def paired_difference(first: pd.Series, second: pd.Series,
                      confidence: float = 0.95) -> tuple[float, float, float, int]:
    """Mean of ``first − second`` over their common seeds, its t interval and the pairs.

    Returns
    -------
    mean, low, high : float
        NaN when there are no pairs; the interval is NaN with fewer than two.
    n : int
        Number of seed pairs.
    """
    common = first.index.intersection(second.index)
    n = len(common)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    if n < 2:
        return float(first[common].iloc[0] - second[common].iloc[0]), math.nan, math.nan, n
    return (*paired_interval(first[common].to_numpy(dtype=float),
                             second[common].to_numpy(dtype=float), confidence), n)


def unpaired_difference(first: pd.Series, second: pd.Series,
                        confidence: float = 0.95) -> tuple[float, float, float, int]:
    """Difference of the two means and its Student's t interval (pooled variance), seeds ignored.

    The paper's test ("Student's t-test from the 10 collected samples"): each model's scores are
    one sample, whichever seeds they come from (:func:`dkm.book.stats.student_interval`).

    Returns
    -------
    mean, low, high : float
        NaN when either sample is empty; the interval is NaN when either has a single score.
    n : int
        The smaller sample's size.
    """
    a, b = first.to_numpy(dtype=float), second.to_numpy(dtype=float)
    n = min(len(a), len(b))
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    if n < 2:
        return float(a.mean() - b.mean()), math.nan, math.nan, n
    return (*student_interval(a, b, confidence), n)


def signed(value: float, decimals: int = 1) -> str:
    """A difference as text, signed, with ``decimals`` decimals and a true minus sign.

    Examples
    --------
    >>> signed(1.23), signed(-0.6), signed(-16.2, 0), signed(-0.04)
    ('+1.2', '−0.6', '−16', '0.0')
    """
    if round(value, decimals) == 0:  # no sign on a zero: "−0.0" would read as a measured fall
        return f"{0:.{decimals}f}"
    return f"{value:+.{decimals}f}".replace("-", "\u2212")
