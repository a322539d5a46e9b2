"""The GPU stand-in's output (``benchmarks/gpu_standin.py``), as the book's tables."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: The kinds of line the stand-in writes for each study the book reads in more than one
#: place (``benchmarks/standin_quality.py score``): its runs at each α on 20NEWS, held
#: constant and rescaled, and at each λ on USPS and 20NEWS.
STANDIN_KINDS: Mapping[str, tuple[str, ...]] = {
    "alpha": ("alpha_run", "alpha_quality"),
    "tradeoff": ("tradeoff_run", "tradeoff_quality"),
}


def standin_rows(study: str, directory: str | Path) -> list[dict[str, Any]]:
    """Every line of the stand-in's output files (``standin-*.jsonl`` in ``directory``, in
    the order of their names) that hold lines of ``study`` (:data:`STANDIN_KINDS`), their
    ``device`` lines included.

    Raises
    ------
    ValueError
        For a study the stand-in writes no lines of.
    """
    from dkm.book.analysis._check_runs import check_runs

    if study not in STANDIN_KINDS:
        raise ValueError(f"no stand-in output for study {study!r}; "
                         f"choose one of {sorted(STANDIN_KINDS)}")
    files = [check_runs(path.stem, directory)
             for path in sorted(Path(directory).glob("standin-*.jsonl"))]
    return [row for rows in files if any(r.get("kind") in STANDIN_KINDS[study] for r in rows)
            for row in rows]


def _score_frame(rows: Iterable[Mapping[str, Any]], kind: str, metric: str) -> pd.DataFrame:
    """The ``kind`` lines of ``standin_quality.py score`` as a frame, with ``score`` (``metric``
    in %) and ``rescaled`` (False where a line does not say); empty when there is none."""
    frame = pd.DataFrame([{"rescaled": False, **r} for r in rows if r.get("kind") == kind])
    return frame.assign(score=100 * frame[metric]) if len(frame) else frame


def _paired_by_replica(runs: pd.DataFrame,
                       against: pd.DataFrame) -> tuple[float, float, float, int]:
    """:func:`~dkm.book.analysis.paired_difference` of two sets of runs' scores, replica by
    replica."""
    from dkm.book.analysis._paired import paired_difference

    return paired_difference(runs.set_index("replica").score, against.set_index("replica").score)


def standin_alpha_curves(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The per-epoch curves of the stand-in's DKM^p runs at each α, averaged over seeds.

    Reads the ``alpha_run`` lines of ``gpu_standin.py --alpha``: for each α, held constant or
    rescaled as the embedding shrinks (``--rescale-alpha``), the embedding's mean norm and
    the softmax's mean largest weight after each epoch, one curve per seed.

    Returns
    -------
    pandas.DataFrame
        One row per α, schedule and epoch (from 1): ``alpha``, ``rescaled``, ``epoch``,
        ``embedding_norm`` and ``largest_weight``, each the mean over the seeds.
    """
    frames = []
    for row in rows:
        if row.get("kind") != "alpha_run":
            continue
        norms, weights = np.asarray(row["embedding_norm"]), np.asarray(row["largest_weight"])
        frames.append(pd.DataFrame({"alpha": float(row["alpha"]),
                                    "rescaled": bool(row.get("rescaled", False)),
                                    "epoch": np.arange(1, norms.shape[1] + 1),
                                    "embedding_norm": norms.mean(axis=0),
                                    "largest_weight": weights.mean(axis=0)}))
    columns = ["alpha", "rescaled", "epoch", "embedding_norm", "largest_weight"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def standin_alpha_scores(rows: Iterable[Mapping[str, Any]], metric: str = "acc") -> pd.DataFrame:
    """The stand-in's DKM^p scores at each α: mean and sd over its seeds.

    Reads the ``alpha_quality`` lines of ``benchmarks/standin_quality.py score``.

    Returns
    -------
    pandas.DataFrame
        One row per dataset, α and schedule (``rescaled``: False for a constant α): ``n``
        seeds, ``mean`` and ``sd`` of ``metric`` in %.
    """
    scores = _score_frame(rows, "alpha_quality", metric)
    if scores.empty:
        return pd.DataFrame(columns=["dataset", "alpha", "rescaled", "n", "mean", "sd"])
    return (scores.groupby(["dataset", "alpha", "rescaled"]).score
            .agg(n="size", mean="mean", sd=lambda s: s.std(ddof=1)).reset_index())


def standin_tradeoff_points(rows: Iterable[Mapping[str, Any]], dataset: str,
                            metric: str = "acc") -> pd.DataFrame:
    """The stand-in's DKM^p scores against λ on one dataset, one row per seed and λ.

    Reads the ``tradeoff_quality`` lines of ``benchmarks/standin_quality.py score``: the
    runs of ``gpu_standin.py --tradeoff``, each λ from one pretrained start per seed.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`dkm.book.ablations.tradeoff_points` (``tradeoff``, ``seed``, the
        seed being the stand-in's replica, ``validation`` and ``test``: ``metric`` in % on
        each part), so that :func:`dkm.book.ablations.tradeoff_choice` applies, and
        ``clusters_used``, the number of clusters the test part's points fall in; sorted by
        λ and seed.
    """
    columns = ["tradeoff", "seed", "validation", "test", "clusters_used"]
    lines = [r for r in rows if r.get("kind") == "tradeoff_quality" and r["dataset"] == dataset]
    frame = pd.DataFrame([{"tradeoff": float(r["tradeoff"]), "seed": r["replica"],
                           "validation": 100 * r["validation"][metric], "test": 100 * r[metric],
                           "clusters_used": r["clusters_used"]} for r in lines], columns=columns)
    return frame.sort_values(["tradeoff", "seed"], ignore_index=True)


def standin_tradeoff_table(standin: pd.DataFrame, package: pd.DataFrame) -> pd.DataFrame:
    """The stand-in's λ curve beside the package's, value by value.

    Parameters
    ----------
    standin : pandas.DataFrame
        :func:`standin_tradeoff_points` of one dataset.
    package : pandas.DataFrame
        :func:`dkm.book.ablations.tradeoff_points` of the package's runs on that dataset (other
        seeds: the two are independent samples); may be empty.

    Returns
    -------
    pandas.DataFrame
        One row per λ of the stand-in: ``n``, ``mean`` and ``sd`` of its test scores,
        ``validation`` (mean), ``fewest_clusters`` and ``most_clusters`` (over its seeds),
        then ``package_n`` and ``package_mean`` (0 and NaN where the package has no run),
        and ``difference``, ``low``, ``high``: stand-in minus package with its 95 % Welch
        interval, NaN where either side has fewer than two runs.
    """
    from dkm.book.stats import welch_interval

    columns = ["tradeoff", "n", "mean", "sd", "validation", "fewest_clusters", "most_clusters",
               "package_n", "package_mean", "difference", "low", "high"]
    table = []
    for tradeoff, runs in standin.groupby("tradeoff"):
        theirs = (package.test[package.tradeoff == tradeoff] if len(package)
                  else pd.Series(dtype=float))
        both = len(runs) > 1 and len(theirs) > 1
        difference, low, high = (welch_interval(runs.test, theirs) if both
                                 else (np.nan, np.nan, np.nan))
        table.append({"tradeoff": tradeoff, "n": len(runs), "mean": runs.test.mean(),
                      "sd": runs.test.std(ddof=1), "validation": runs.validation.mean(),
                      "fewest_clusters": runs.clusters_used.min(),
                      "most_clusters": runs.clusters_used.max(), "package_n": len(theirs),
                      "package_mean": theirs.mean() if len(theirs) else np.nan,
                      "difference": difference, "low": low, "high": high})
    return pd.DataFrame(table, columns=columns)


def standin_cluster_loss(table: pd.DataFrame, n_clusters: int) -> dict[str, float | None]:
    """Where a λ curve of :func:`standin_tradeoff_table` starts to lose clusters.

    Returns
    -------
    dict
        ``first_loss``: the smallest λ at which a seed's test points fall in fewer than
        ``n_clusters`` clusters; ``collapse``: the smallest λ from which on (that value and
        every larger one) no seed uses more than half of them, and ``most``: the most any
        seed uses there. Each None when the curve never gets there.
    """
    rows = table.sort_values("tradeoff")
    lost = rows[rows.fewest_clusters < n_clusters]
    halved = (rows.most_clusters <= n_clusters // 2)[::-1].cummin()[::-1]
    collapsed = rows[halved]
    return {"first_loss": float(lost.tradeoff.iloc[0]) if len(lost) else None,
            "collapse": float(collapsed.tradeoff.iloc[0]) if len(collapsed) else None,
            "most": int(collapsed.most_clusters.max()) if len(collapsed) else None}


def standin_rescaling_effect(rows: Iterable[Mapping[str, Any]],
                             metric: str = "acc") -> pd.DataFrame:
    """What rescaling α as the embedding shrinks does to the stand-in's DKM^p, seed by seed.

    Pairs each ``alpha_quality`` score of a rescaled run with the same seed's (replica's) run
    at that α held constant: both start from the same pretrained network and centres and see
    the same minibatches.

    Returns
    -------
    pandas.DataFrame
        One row per dataset and rescaled α: ``n`` pairs, ``constant`` and ``rescaled`` (mean
        of ``metric`` in %), ``difference`` (rescaled minus constant), ``low`` and ``high`` (its
        95 % t interval, in points), ``best_alpha``, the constant α with the best mean on the
        dataset, and ``gap_closed``, the share of the gap between the constant run and that
        best mean which the rescaling closes.
    """
    columns = ["dataset", "alpha", "n", "constant", "rescaled", "difference", "low", "high",
               "best_alpha", "gap_closed"]
    scores = _score_frame(rows, "alpha_quality", metric)
    if scores.empty or not scores.rescaled.any():
        return pd.DataFrame(columns=columns)
    table = []
    for (dataset, alpha), runs in scores[scores.rescaled].groupby(["dataset", "alpha"]):
        constant = scores[(scores.dataset == dataset) & (scores.alpha == alpha)
                          & ~scores.rescaled]
        difference, low, high, n = _paired_by_replica(runs, constant)
        means = scores[(scores.dataset == dataset) & ~scores.rescaled].groupby("alpha").score.mean()
        table.append({"dataset": dataset, "alpha": alpha, "n": n,
                      "constant": constant.score.mean(), "rescaled": runs.score.mean(),
                      "difference": difference, "low": low, "high": high,
                      "best_alpha": means.idxmax(),
                      "gap_closed": difference / (means.max() - constant.score.mean())})
    return pd.DataFrame(table, columns=columns)
