"""Ablations: what a run changed against the protocol, and what that did.

An ablation run is an ordinary protocol run (:func:`dkm.experiments.run_grid`
with ``overrides``) whose record differs from the protocol's for its method
and dataset in some configuration fields: its *switches*. This module finds
them, names them for a reader, and compares each variant with the protocol's
own records of the same seeds (same initialisation, same minibatches, same
pretraining), so that the difference of a seed pair is the switch's effect on
that seed.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from dkm.analysis import paired_difference
from dkm.data import PAPER_STATISTICS, paper_dataset

__all__ = ["protocol_params", "switches", "describe", "compare"]

_SWITCH_TEXT = {
    ("update", "last-sample"): "last sample of each batch updated",
    ("train_centroids", True): "Adam also moves the centroids",
    ("clustering_weight", 1.0): "clustering term λ‖h − r‖² (not λ/2)",
    ("labels", "stored"): "stored assignments reported",
    ("assignment", "hard"): "hard assignment (α → ∞)",
    ("update", "none"): "no update after the step",
    ("pull", "nearest"): "pulled to the nearest centroid",
}


def protocol_params(dataset: str, method: str, data_fingerprint: str,
                    scale: float = 1.0) -> dict[str, Any]:
    """The parameters the protocol records for ``method`` on ``dataset``.

    That is, what :func:`dkm.experiments.run_seeds` records with the paper's
    λ/γ, the default loop and no overrides.
    """
    from dkm.experiments import configure, run_params
    from dkm.methods.common import LoopConfig

    n_samples = PAPER_STATISTICS[paper_dataset(dataset)]["samples"]
    config = configure(method, SimpleNamespace(name=dataset, n_samples=n_samples), scale=scale)
    return run_params(method, config, LoopConfig(progress=False), scale, data_fingerprint)


def switches(record: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded parameters in which ``record`` differs from the protocol's run."""
    params = record["params"]
    default = protocol_params(record["dataset"], record["method"], params["data_fingerprint"],
                              params.get("scale", 1.0))
    return {k: v for k, v in sorted(params.items()) if default.get(k) != v}


def _schedule_text(schedule: Mapping[str, Any]) -> str:
    alphas, epochs = schedule["alphas"], schedule["epochs_per_alpha"]
    if len(alphas) == 1:
        return f"α = {alphas[0]:g} for {epochs} epochs"
    return f"annealing: {len(alphas)} values of α from {alphas[0]:g} to {alphas[-1]:.3g}, " \
           f"{epochs} epochs each"


def describe(changed: Mapping[str, Any]) -> str:
    """A reader's name for a set of switches (``"protocol"`` when there are none).

    Examples
    --------
    >>> describe({"weight_decay": 0.01})
    'weight decay 0.01'
    >>> describe({})
    'protocol'
    """
    from dkm.methods.dcn import AUTHORS_DCN, TOWARDS_DKM

    changed = dict(changed)
    parts = []
    # the largest named group of switches first: a step towards DKM includes the previous ones
    named = [("the DKM authors' DCN", AUTHORS_DCN)] + [
        (f"towards DKM, step {i}: {text}", step)
        for i, (text, step) in reversed(list(enumerate(TOWARDS_DKM, 1)))]
    for text, group in named:
        if all(changed.get(k) == v for k, v in group.items()):
            parts.append(text)
            changed = {k: v for k, v in changed.items() if k not in group}
            break
    for name, value in sorted(changed.items()):
        if name == "lambda":
            parts.append(f"λ = {value:g}")
        elif name == "epochs":
            parts.append(f"{value} epochs")
        elif name == "schedule":
            parts.append(_schedule_text(value))
        elif name == "weight_decay":
            parts.append(f"weight decay {value:g}")
        elif (name, value) in _SWITCH_TEXT:
            parts.append(_SWITCH_TEXT[name, value])
        else:
            parts.append(f"{name} = {value}")
    return "; ".join(parts) or "protocol"


def compare(
    ablation: Iterable[Mapping[str, Any]],
    protocol: Iterable[Mapping[str, Any]],
    metric: str = "acc",
    split: str = "test",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Each variant against the protocol's runs of the same method and seeds.

    Parameters
    ----------
    ablation : iterable of dict
        Records of ablation runs.
    protocol : iterable of dict
        The protocol's records (any datasets; those of other configurations
        than the protocol's are ignored).
    metric : {"acc", "nmi", "ari"}
        The score compared, in percent.
    split : {"validation", "test"}
        The part of the split it is computed on.
    confidence : float
        Level of the paired t interval.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, method, variant): ``n`` seeds, the variant's
        mean, ``paired`` (seeds that have a protocol run), the protocol's mean
        on those seeds, the mean difference and its t interval (NaN with
        fewer than two pairs).
    """
    baseline: dict[tuple[str, str, str], dict[int, float]] = {}
    for r in protocol:
        if r.get("metrics") and not switches(r):
            key = (r["dataset"], r["method"], r["params"]["data_fingerprint"])
            baseline.setdefault(key, {})[r["seed"]] = 100 * r["metrics"][split][metric]
    groups: dict[tuple[str, str, str, str], dict[int, float]] = {}
    for r in ablation:
        if r.get("metrics"):
            key = (r["dataset"], r["method"], describe(switches(r)), r["params"]["data_fingerprint"])
            groups.setdefault(key, {})[r["seed"]] = 100 * r["metrics"][split][metric]
    rows = []
    for (dataset, method, variant, fingerprint), scores in sorted(groups.items()):
        variant_scores = pd.Series(scores, dtype=float)
        base = pd.Series(baseline.get((dataset, method, fingerprint), {}), dtype=float)
        difference, low, high, paired = paired_difference(variant_scores, base, confidence)
        rows.append({
            "dataset": dataset, "method": method, "variant": variant, "n": len(variant_scores),
            "mean": variant_scores.mean(), "paired": paired,
            "protocol mean": base[base.index.intersection(variant_scores.index)].mean()
            if paired else np.nan,
            "difference": difference, "low": low, "high": high,
        })
    return pd.DataFrame(rows, columns=["dataset", "method", "variant", "n", "mean", "paired",
                                       "protocol mean", "difference", "low", "high"])
