"""What α does: the temperature's effects, how hard an assignment is, and α's rescaling."""
from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dkm.book.ablations._compare import excludes_zero
from dkm.book.ablations._shrinking import _method_snapshots
from dkm.book.ablations._studies import (STUDY_SEEDS, Variant, _is_run_of, _long, _score, study,
                                   variant_scores)
from dkm.book.analysis import paired_difference


def temperature_effects(alpha: pd.DataFrame) -> pd.DataFrame:
    """The rows of the ``"alpha"`` study's :func:`compare` table that change only DKM^p's α.

    That is, DKM^p's constant temperatures and its hard assignment, where at
    least two seeds are paired with the protocol's run (so that each has an
    interval).
    """
    return alpha[(alpha["method"] == "dkm-p") & (alpha["paired"] >= 2)]


def temperature_by_dataset(temperature: pd.DataFrame) -> pd.DataFrame:
    """Per dataset of a :func:`temperature_effects` table, whether any temperature moves DKM^p.

    Parameters
    ----------
    temperature : pandas.DataFrame
        A :func:`temperature_effects` table.

    Returns
    -------
    pandas.DataFrame
        Indexed by dataset, in order of appearance: ``seeds``, the fewest seed
        pairs behind any of its rows; ``largest``, the largest absolute mean
        difference; ``moved``, whether the interval of any of its rows excludes
        zero.
    """
    rows = {}
    for dataset, effects in temperature.groupby("dataset", sort=False):
        rows[dataset] = {"seeds": int(effects["paired"].min()),
                         "largest": float(effects["difference"].abs().max()),
                         "moved": bool(excludes_zero(effects).any())}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["seeds", "largest", "moved"]
                                  ).astype({"seeds": int, "largest": float, "moved": bool})


#: The mean largest weight (:func:`assignment_sharpness`) from which a soft
#: assignment is, for the book's readings, almost hard.
NEARLY_HARD = 0.9


def assignment_sharpness(embedding: np.ndarray, labels: np.ndarray,
                         alphas: Sequence[float]) -> pd.Series:
    """How hard DKM's soft assignment is at each α: the mean largest weight ``max_k G_k(h, α)``.

    The representatives are the means of each label's points (the k-means
    centres, when ``labels`` are a k-means clustering of these points), the
    weights the paper's ``G_k = softmax_k(−α ‖h − r_k‖²)``. A mean of 1 is a
    hard assignment; ``1/K`` is uniform weights, where the clustering term
    pulls every representative alike.

    Parameters
    ----------
    embedding : numpy.ndarray
        Points ``(N, p)``.
    labels : numpy.ndarray
        A cluster per point ``(N,)``; each label is one representative.
    alphas : sequence of float
        The inverse temperatures.

    Returns
    -------
    pandas.Series
        The mean largest weight, indexed by α.
    """
    embedding = np.asarray(embedding, dtype=np.float64)
    labels = np.asarray(labels)
    if embedding.ndim != 2 or labels.shape != embedding.shape[:1]:
        raise ValueError(f"expected points (N, p) and labels (N,), got {embedding.shape} and "
                         f"{labels.shape}")
    import tensorflow as tf

    from dkm.losses import soft_assignment, squared_euclidean

    centers = np.stack([embedding[labels == k].mean(axis=0) for k in np.unique(labels)])
    distances = squared_euclidean(tf.constant(embedding[None]), tf.constant(centers[None]))[0]
    largest = {float(alpha): float(tf.reduce_mean(tf.reduce_max(
        soft_assignment(distances, float(alpha)), axis=-1))) for alpha in alphas}
    return pd.Series(largest, name="largest weight").rename_axis("alpha")


def pretrained_sharpness(snapshots_dir: str | os.PathLike[str], dataset: str, seed: int,
                         alphas: Sequence[float] = (1.0, 10.0, 100.0, 1000.0)) -> pd.Series:
    """:func:`assignment_sharpness` where DKM^p's fine-tuning starts, from a snapshot.

    DKM^p starts from the pretrained embedding and the k-means++ centres on
    it, which is AE-KM's result: its embedding and clusters are read from the
    snapshot ``<dataset>-<seed>.npz`` or ``<dataset>-<seed>-ae-km.npz``, the
    first that has AE-KM. The centres are estimated by the means of the
    snapshot's sampled points in each cluster.

    Returns
    -------
    pandas.Series
        As :func:`assignment_sharpness`; empty when no snapshot has AE-KM.
    """
    pretrained = pretrained_embedding(snapshots_dir, dataset, seed)
    if pretrained is None:
        return pd.Series(dtype=float, name="largest weight").rename_axis("alpha")
    return assignment_sharpness(*pretrained, alphas)


def pretrained_embedding(snapshots_dir: str | os.PathLike[str], dataset: str,
                         seed: int) -> tuple[np.ndarray, np.ndarray] | None:
    """AE-KM's embedding and clusters of a seed: where DKM^p's fine-tuning starts.

    Read from the snapshot ``<dataset>-<seed>.npz`` or ``<dataset>-<seed>-ae-km.npz``,
    the first that has AE-KM (the snapshot's sampled points only).

    Returns
    -------
    (embedding, labels) or None
        ``(n_points, p)`` and ``(n_points,)``; None when no snapshot has AE-KM.
    """
    from dkm.book.snapshots import load_snapshot

    folder = Path(snapshots_dir)
    for path in (folder / f"{dataset}-{seed}.npz", folder / f"{dataset}-{seed}-ae-km.npz"):
        if path.exists():
            snapshot = load_snapshot(path)
            if "ae-km" in snapshot.embeddings:
                return snapshot.embeddings["ae-km"], snapshot.labels["ae-km"]
    return None


def hard_from_start(snapshots_dir: str | os.PathLike[str], datasets: Iterable[str],
                    seed: int = STUDY_SEEDS[0], alpha: float = 1.0) -> list[str]:
    """The datasets where DKM^p's fine-tuning starts almost hard even at ``alpha``.

    There the mean largest weight of :func:`pretrained_sharpness` reaches
    :data:`NEARLY_HARD`, so a constant α down to ``alpha`` trains an almost hard
    assignment and does not test a soft one. A dataset without a snapshot
    holding AE-KM for ``seed`` is left out.

    Returns
    -------
    list of str
        The datasets, in the order given.
    """
    return [dataset for dataset in datasets
            if pretrained_sharpness(snapshots_dir, dataset, seed, [alpha]).get(alpha, 0.0)
            >= NEARLY_HARD]


def alpha_points(records: Iterable[Mapping[str, Any]], dataset: str, metric: str = "acc",
                 split: str = "test") -> pd.DataFrame:
    """DKM^p's scores against α: the ``"alpha"`` study's DKM^p variants and the protocol.

    Parameters
    ----------
    records : iterable of dict
        The protocol's and the study's records (any others are ignored).
    dataset : str
        The dataset id the records name.

    Returns
    -------
    pandas.DataFrame
        Columns ``alpha`` (the α the run ends at; ``inf`` for the hard
        assignment), ``seed`` and ``score`` (percent), sorted by α.
    """
    records = list(records)
    variants = [v for v in study("alpha").variants if v.method == "dkm-p"] + [Variant("dkm-p")]
    points = []
    for variant in variants:
        runs = [r for r in records
                if r["dataset"] == dataset and r.get("metrics") and _is_run_of(r, variant)]
        if runs:
            points.append((_final_alpha(runs[0]), pd.Series(
                {r["seed"]: _score(r, metric, split) for r in runs}, dtype=float).sort_index()))
    return _long(points, "alpha").sort_values(["alpha", "seed"], ignore_index=True)


def _final_alpha(record: Mapping[str, Any]) -> float:
    """The α a DKM run's record ends at: ``inf`` for the hard assignment (a study's switch)."""
    params = record["params"]
    return math.inf if params.get("assignment") == "hard" else params["schedule"]["alphas"][-1]


def rescaling_effects(records: Iterable[Mapping[str, Any]], dataset: str, metric: str = "acc",
                      split: str = "test", confidence: float = 0.95) -> pd.DataFrame:
    """DKM^p with α rescaled as the embedding shrinks, against the same α held constant.

    Pairs, seed by seed, each variant of the ``"alpha-rescaling"`` study with the
    ``"alpha"`` study's variant at the same constant α.

    Parameters
    ----------
    records : iterable of dict
        The two studies' records (any others are ignored).
    dataset : str
        The dataset id the records name.

    Returns
    -------
    pandas.DataFrame
        One row per α of :data:`RESCALED_ALPHAS` with a rescaled run: ``alpha``,
        ``seeds`` (the paired seeds, a tuple) and their number ``paired``,
        ``constant`` and ``rescaled`` (their means on those seeds, percent),
        ``difference`` (rescaled minus constant), ``low`` and ``high`` (its t
        interval at ``confidence``; NaN with one pair), as :func:`difference_text`
        reads them.
    """
    records = list(records)
    rows = []
    for variant in study("alpha-rescaling").variants:
        alpha = variant.overrides["schedule"].alphas[0]
        constant = Variant(variant.method, {k: v for k, v in variant.overrides.items()
                                            if k != "alpha_rescaling"})
        rescaled = variant_scores(records, variant, dataset, metric, split)
        held = variant_scores(records, constant, dataset, metric, split)
        common = rescaled.index.intersection(held.index)
        if not len(common):
            continue
        difference, low, high, paired = paired_difference(rescaled, held, confidence)
        rows.append({"alpha": alpha, "seeds": tuple(int(s) for s in common), "paired": paired,
                     "constant": held[common].mean(), "rescaled": rescaled[common].mean(),
                     "difference": difference, "low": low, "high": high})
    return pd.DataFrame(rows, columns=["alpha", "seeds", "paired", "constant", "rescaled",
                                       "difference", "low", "high"])


def final_assignment(snapshots_dir: str | os.PathLike[str], dataset: str, seed: int,
                     method: str = "dkm-p", variants: str = "alpha-*") -> pd.DataFrame:
    """How hard each snapshot's assignment is when its training ends, and how many clusters it uses.

    For the protocol's snapshot and its variants' (as :func:`embedding_norm_curves` finds
    them), at the run's last α (its ``alpha`` curve): :func:`assignment_sharpness` of the
    final embedding, with each cluster's mean as its representative, the number of
    clusters among the snapshot's sampled points, and the final embedding's
    :func:`dkm.annealing.critical_alpha`.

    Returns
    -------
    pandas.DataFrame
        Indexed by the snapshots' labels (:func:`describe`): ``first_alpha`` and ``alpha``
        (the run's α at its first and last epoch), ``rescaled`` (whether the run rescaled α
        as its embedding shrank, ``alpha_rescaling``), ``largest_weight``,
        ``clusters_used``, ``embedding_norm`` (the last epoch's) and ``critical_alpha``;
        empty without snapshots.
    """
    from dkm.annealing import critical_alpha

    rows = {}
    for label, snapshot in _method_snapshots(snapshots_dir, dataset, seed, method, variants):
        history = snapshot.history[method]
        alpha = float(history["alpha"][-1])
        labels = snapshot.labels[method]
        overrides = snapshot.meta.get("overrides", {}).get(method, {})
        rows[label] = {"first_alpha": float(history["alpha"][0]), "alpha": alpha,
                       "rescaled": bool(overrides.get("alpha_rescaling", False)),
                       "largest_weight": float(assignment_sharpness(
                           snapshot.embeddings[method], labels, [alpha])[alpha]),
                       "clusters_used": int(np.unique(labels).size),
                       "embedding_norm": float(history["embedding_norm"][-1]),
                       "critical_alpha": critical_alpha(snapshot.embeddings[method])}
    return pd.DataFrame.from_dict(rows, orient="index", columns=[
        "first_alpha", "alpha", "rescaled", "largest_weight", "clusters_used", "embedding_norm",
        "critical_alpha"])
