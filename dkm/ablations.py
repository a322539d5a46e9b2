"""Ablations: the studies, what a run changed against the protocol, and what that did.

An ablation run is an ordinary protocol run (:func:`dkm.experiments.run_grid`
with ``overrides``) whose record differs from the protocol's for its method
and dataset in some configuration fields: its *switches*. This module declares
the book's studies (:data:`STUDIES`, run by :func:`run_study` or ``python -m dkm
ablate``), finds a record's switches, names them for a reader, and compares
each variant with the protocol's own records of the same seeds (same
initialisation, same minibatches, same pretraining), so that the difference of
a seed pair is the switch's effect on that seed.

A variant without a protocol run of its own (DKM^pa) names the protocol method
it is compared with (:attr:`Variant.against`).

Snapshots of full-scale runs (:mod:`dkm.snapshots`) keep their per-epoch
curves: :func:`embedding_norm_curves` reads the embedding's size through the
pretraining and the training, for the protocol's run and its variants.

:data:`STUDIES` is built on first use: its switches come from
:mod:`dkm.methods.dcn`, which imports TensorFlow.
"""
from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from dkm import paper, registry
from dkm.analysis import paired_difference
from dkm.data import PAPER_STATISTICS, paper_dataset

__all__ = ["Variant", "Study", "STUDIES", "STUDY_SEEDS", "LAMBDA_CLIFF", "RESCALED_ALPHAS",
           "study", "pending",
           "tradeoff_points", "tradeoff_means", "tradeoff_choice", "run_study", "load_study",
           "protocol_records", "study_tradeoff_points", "tradeoff_onset", "variant_params", "protocol_params", "switches", "describe",
           "variant_scores", "compare", "excludes_zero", "zero_nmi_variants", "signed", "difference_text",
           "temperature_effects", "temperature_by_dataset", "assignment_sharpness",
           "pretrained_sharpness", "NEARLY_HARD",
           "agreement_by_dataset", "against_paper", "paper_verdicts", "alpha_points",
           "rescaling_effects", "towards_dkm_chain", "towards_dkm_switches", "step_effects", "table_view", "embedding_norm_curves", "embedding_shrinkage",
           "shrinkage_by_dataset"]

#: The seeds of the ablations: the paper's first three.
STUDY_SEEDS: tuple[int, ...] = paper.PAPER_SEEDS[:3]

#: The values of the ``"lambda"`` study: between the last value of the paper's
#: grid at which DKM^p learns on USPS and the first at which it collapses.
LAMBDA_CLIFF: tuple[float, ...] = (2.0, 3.0, 5.0)

#: The constant α of the ``"alpha"`` study that the ``"alpha-rescaling"`` study
#: rescales as the embedding shrinks (those at which DKM^p fails on 20NEWS).
RESCALED_ALPHAS: tuple[float, ...] = (100.0, 10.0)

_SWITCH_TEXT = {
    ("update", "last-sample"): "last sample of each batch updated",
    ("train_centroids", True): "Adam also moves the centroids",
    ("clustering_weight", 1.0): "clustering term λ‖h − r‖² (not λ/2)",
    ("labels", "stored"): "stored assignments reported",
    ("assignment", "hard"): "hard assignment (α → ∞)",
    ("alpha_rescaling", True): "α rescaled as the embedding shrinks",
    ("update", "none"): "no update after the step",
    ("pull", "nearest"): "pulled to the nearest centroid",
}


@dataclass(frozen=True)
class Variant:
    """One configuration of a study: a method and the fields of its configuration it switches.

    Attributes
    ----------
    method : str
        The method id it trains.
    overrides : mapping
        Fields of the method's configuration, as
        :func:`dkm.experiments.run_grid` takes them (``overrides=``).
    tradeoff_of : str or None
        When set, the variant trains at the paper's λ or γ of this method for
        the dataset (:func:`dkm.experiments.default_tradeoff`), not its own.
    against : str or None
        The protocol method it is compared with; its own by default.
    """

    method: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    tradeoff_of: str | None = None
    against: str | None = None

    def overrides_for(self, dataset: str) -> dict[str, Any]:
        """The overrides on ``dataset``, the trade-off of :attr:`tradeoff_of` resolved."""
        from dkm.experiments import default_tradeoff

        overrides = dict(self.overrides)
        if self.tradeoff_of is not None:
            overrides[registry.get(self.method).config_field] = default_tradeoff(
                self.tradeoff_of, dataset)
        return overrides


@dataclass(frozen=True)
class Study:
    """An ablation study: the question it asks and the variants that answer it.

    Its runs are kept in ``<results>/<name>.jsonl``. ``datasets`` names the
    datasets its variants are designed for (None: any dataset).
    """

    name: str
    question: str
    variants: tuple[Variant, ...]
    datasets: tuple[str, ...] | None = None

    def covers(self, dataset: str) -> bool:
        """Whether the study is designed for the dataset called ``dataset``."""
        return self.datasets is None or dataset in self.datasets

    def variants_for(self, dataset: str, methods: Iterable[str] | None = None
                     ) -> tuple[Variant, ...]:
        """The variants of ``methods`` (all of :attr:`methods` by default) to run on ``dataset``.

        Raises
        ------
        ValueError
            For a dataset the study is not designed for (:meth:`covers`), or a
            method it has no variant of.
        """
        if not self.covers(dataset):
            raise ValueError(f"the {self.name!r} study is designed for "
                             f"{', '.join(self.datasets)} only, not {dataset!r}")
        methods = self.methods if methods is None else tuple(methods)
        unknown = sorted(set(methods) - set(self.methods))
        if unknown:
            raise ValueError(f"the {self.name!r} study has no variant of {', '.join(unknown)}; "
                             f"its methods are {', '.join(self.methods)}")
        return tuple(v for v in self.variants if v.method in methods)

    @property
    def methods(self) -> tuple[str, ...]:
        """The methods its variants run, each once, in order."""
        return tuple(dict.fromkeys(v.method for v in self.variants))

    @property
    def against(self) -> dict[str, str]:
        """The protocol method of each method compared with another one's runs."""
        return {v.method: v.against for v in self.variants if v.against is not None}


@functools.cache
def _studies() -> Mapping[str, Study]:
    from dkm.annealing import constant, paper_annealing
    from dkm.methods.dcn import TOWARDS_DKM

    steps = [{"epochs": 100}] + [{**switched, "epochs": 100} for _, switched in TOWARDS_DKM[:-1]]
    hard = Variant("dkm-p", {"assignment": "hard"})
    studies = (
        Study("dcn-authors", "Do the paper's DCN figures come from the DKM authors' "
              "re-implementation of DCN, with its four departures from Yang et al.?",
              (Variant("dcn-np-authors"), Variant("dcn-p-authors"))),
        Study("alpha", "Does the inverse temperature α of the soft assignment (constant, "
              "infinite or annealed) change what Deep k-Means finds?",
              tuple(Variant("dkm-p", {"schedule": constant(a, 100)}) for a in (1.0, 10.0, 100.0))
              + (hard,
                 Variant("dkm-a", {"schedule": paper_annealing(n_terms=20)}),
                 Variant("dkm-pa", against="dkm-p"))),
        # the last step of TOWARDS_DKM trains DKM^p with assignment="hard" (also a variant of "alpha")
        Study("towards-dkm", "Which difference between DCN^p and DKM^p, taken one at a time, "
              "separates their results?",
              tuple(Variant("dcn-p", step, tradeoff_of="dkm-p") for step in steps) + (hard,)),
        Study("weight-decay", "Does a weight decay on the network, against a shrinking "
              "embedding, change DKM^p's results?",
              tuple(Variant("dkm-p", {"weight_decay": w}) for w in (1e-4, 1e-2))),
        # the GPU stand-in found DKM^p's failure at α ≤ 100 on 20NEWS undone by this rescaling
        Study("alpha-rescaling", "Does rescaling α as the embedding shrinks keep DKM^p from "
              "failing at α = 10 and α = 100 on 20NEWS?",
              tuple(Variant("dkm-p", {"schedule": constant(a, 100), "alpha_rescaling": True})
                    for a in RESCALED_ALPHAS),
              datasets=("20news",)),
        # the paper's grid has nothing between λ = 1 (chosen on USPS) and λ = 10 (collapse)
        Study("lambda", "Where between the paper's λ = 1 and λ = 10 does DKM^p collapse?",
              tuple(Variant("dkm-p", {"lam": value}) for value in LAMBDA_CLIFF),
              datasets=("usps",)),
    )
    return MappingProxyType({s.name: s for s in studies})


def __getattr__(name: str) -> Any:
    # STUDIES is built on first use (it imports TensorFlow through dkm.methods.dcn)
    if name == "STUDIES":
        return _studies()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def study(name: str) -> Study:
    """The study called ``name`` in :data:`STUDIES`.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    if name not in _studies():
        raise ValueError(f"unknown study {name!r}; choose among {', '.join(_studies())}")
    return _studies()[name]


def run_study(
    name: str,
    datasets: Iterable[str | Any],
    seeds: Sequence[int] = STUDY_SEEDS,
    results_dir: str | os.PathLike[str] = "results/ablations",
    *,
    methods: Iterable[str] | None = None,
    scale: float = 1.0,
    seeds_per_batch: int | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr),
) -> int:
    """Run every variant of a study on every dataset into ``results_dir/<name>.jsonl``; resumable.

    Each variant is one :func:`dkm.experiments.run_grid`, which skips the runs
    already in the store (same configuration hash).

    Parameters
    ----------
    name : str
        A study of :data:`STUDIES`.
    datasets : iterable of str or Dataset
        The data; names are loaded once with :func:`dkm.data.load`.
    seeds : sequence of int
        The seeds (the paper's first three by default).
    results_dir : path
        The folder of the studies' stores.
    methods : iterable of str, optional
        Run only the variants of these methods (:attr:`Study.methods`); all by
        default.
    scale, seeds_per_batch, progress, log
        As in :func:`dkm.experiments.run_grid`.
    cache_dir : path, optional
        The pretraining cache; by default the protocol's, ``results_dir/../.pretraining-cache``,
        so that the pretrained variants start from the protocol's pretraining.

    Returns
    -------
    int
        Number of records added.

    Raises
    ------
    ValueError
        For a dataset the study is not designed for (:meth:`Study.covers`), or
        a method it has no variant of, before anything runs.
    """
    from dkm.data import Dataset, load
    from dkm.experiments import run_grid

    chosen = study(name)
    datasets = list(datasets)
    methods = None if methods is None else tuple(methods)
    for dataset in datasets:  # every refusal before anything runs
        chosen.variants_for(dataset.name if isinstance(dataset, Dataset) else str(dataset), methods)
    store = Path(results_dir) / f"{chosen.name}.jsonl"
    cache_dir = cache_dir if cache_dir is not None else Path(results_dir).parent / ".pretraining-cache"
    added = 0
    for dataset in datasets:
        data = dataset if isinstance(dataset, Dataset) else load(dataset)
        for variant in chosen.variants_for(data.name, methods):
            overrides = variant.overrides_for(data.name)
            log(f"{chosen.name}: {data.name} {variant.method}, {describe(overrides)}")
            added += run_grid([data], [variant.method], seeds, store, scale=scale,
                              overrides=overrides,
                              seeds_per_batch=seeds_per_batch, cache_dir=cache_dir,
                              progress=progress, log=log)
    return added


def _read(path: Path) -> list[dict[str, Any]]:
    from dkm.results import ResultsStore

    return ResultsStore(path).records() if path.exists() else []


def load_study(name: str, results_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a study in ``results_dir`` (none when it has not run yet)."""
    return _read(Path(results_dir) / f"{study(name).name}.jsonl")


def protocol_records(results_dir: str | os.PathLike[str],
                     datasets: Iterable[str]) -> list[dict[str, Any]]:
    """The protocol's records of ``datasets``, from ``results_dir/<dataset>.jsonl`` where it exists."""
    return [r for dataset in datasets for r in _read(Path(results_dir) / f"{dataset}.jsonl")]


def _configuration(variant: Variant, dataset: str, scale: float = 1.0) -> Any:
    from dkm.experiments import configure

    n_samples = PAPER_STATISTICS[paper_dataset(dataset)]["samples"]
    return configure(variant.method, SimpleNamespace(name=dataset, n_samples=n_samples),
                     scale=scale, overrides=variant.overrides_for(dataset))


def variant_params(variant: Variant, dataset: str, data_fingerprint: str,
                   scale: float = 1.0) -> dict[str, Any]:
    """The parameters a run of ``variant`` on one of the paper's datasets records.

    That is, what :func:`run_study` (through :func:`dkm.experiments.run_grid`)
    records, and hashes into the run's ``config_hash``, without training.
    """
    from dkm.experiments import run_params
    from dkm.methods.common import LoopConfig

    return run_params(variant.method, _configuration(variant, dataset, scale),
                      LoopConfig(progress=False), scale, data_fingerprint)


def protocol_params(dataset: str, method: str, data_fingerprint: str,
                    scale: float = 1.0) -> dict[str, Any]:
    """The parameters the protocol records for ``method`` on ``dataset``.

    That is, what :func:`dkm.experiments.run_seeds` records with the paper's
    λ/γ, the default loop and no overrides.
    """
    return variant_params(Variant(method), dataset, data_fingerprint, scale)


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
    from dkm.experiments import _jsonable
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
        if name in ("lambda", "lam"):
            parts.append(f"λ = {value:g}")
        elif name == "epochs":
            parts.append(f"{value} epochs")
        elif name == "schedule":
            parts.append(_schedule_text(_jsonable(value)))
        elif name == "weight_decay":
            parts.append(f"weight decay {value:g}")
        elif (name, value) in _SWITCH_TEXT:
            parts.append(_SWITCH_TEXT[name, value])
        else:
            parts.append(f"{name} = {value}")
    return "; ".join(parts) or "protocol"


#: What a score is of: the method's own clusters, or k-means++ run on its final embedding.
SCORE_SOURCES = {"clusters": "metrics", "embedding": "kmeans_on_embedding"}


def _score(record: Mapping[str, Any], metric: str, split: str, of: str = "clusters") -> float:
    return 100 * record[SCORE_SOURCES[of]][split][metric]


def variant_scores(records: Iterable[Mapping[str, Any]], variant: Variant, dataset: str,
                   metric: str = "acc", split: str = "test") -> pd.Series:
    """The scores (percent) of ``variant``'s runs on ``dataset``, by seed.

    A record is the variant's when its method is the variant's and its
    parameters are those :func:`variant_params` gives for its data and scale,
    so that protocol and ablation records may be passed together.

    Returns
    -------
    pandas.Series
        Indexed by seed, sorted; empty when there is no run.
    """
    expected: dict[tuple[str, float], dict[str, Any]] = {}
    scores = {}
    for r in records:
        if r["dataset"] != dataset or r["method"] != variant.method or not r.get("metrics"):
            continue
        key = (r["params"]["data_fingerprint"], r["params"].get("scale", 1.0))
        if key not in expected:
            expected[key] = variant_params(variant, dataset, *key)
        if r["params"] == expected[key]:
            scores[r["seed"]] = _score(r, metric, split)
    return pd.Series(scores, dtype=float).sort_index()


def pending(name: str, records: Iterable[Mapping[str, Any]], datasets: Iterable[str],
            seeds: Sequence[int] = STUDY_SEEDS) -> pd.DataFrame:
    """The runs of a study that are not in ``records`` yet.

    Parameters
    ----------
    name : str
        A study of :data:`STUDIES`.
    records : iterable of dict
        The study's records (any others are ignored).
    datasets : iterable of str
        The dataset ids it should run on; those the study is not designed
        for (:meth:`Study.covers`) are left out.
    seeds : sequence of int
        The seeds it should run (the paper's first three by default).

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, variant) with a missing seed: ``dataset``,
        ``method``, ``variant`` (:func:`describe` of its declared overrides)
        and ``missing``, the tuple of its seeds without a run.
    """
    records = list(records)
    chosen = study(name)
    rows = []
    for dataset in filter(chosen.covers, datasets):
        for variant in chosen.variants:
            done = variant_scores(records, variant, dataset).index
            missing = tuple(seed for seed in seeds if seed not in done)
            if missing:
                rows.append({"dataset": dataset, "method": variant.method,
                             "variant": describe(variant.overrides), "missing": missing})
    return pd.DataFrame(rows, columns=["dataset", "method", "variant", "missing"])


def tradeoff_points(records: Iterable[Mapping[str, Any]], dataset: str, method: str = "dkm-p",
                    metric: str = "acc") -> pd.DataFrame:
    """A method's scores against its λ or γ, from every run that changed nothing else.

    The protocol's runs (the paper's value), a line search's and the
    ``"lambda"`` study's all qualify; a run kept in two stores counts once.

    Parameters
    ----------
    records : iterable of dict
        Records of any stores.
    dataset : str
        The dataset id the records name.
    method : str
        A method with a trade-off.
    metric : {"acc", "nmi", "ari"}
        The score, in percent.

    Returns
    -------
    pandas.DataFrame
        Columns ``tradeoff``, ``seed``, ``validation`` and ``test``, sorted by
        trade-off and seed.
    """
    name = registry.get(method).tradeoff
    if name is None:
        raise ValueError(f"{method} has no trade-off hyperparameter")
    rows, seen = [], set()
    for r in records:
        if (r["dataset"] != dataset or r["method"] != method or not r.get("metrics")
                or r["config_hash"] in seen or set(switches(r)) - {name}):
            continue
        seen.add(r["config_hash"])
        rows.append({"tradeoff": r["params"][name], "seed": r["seed"],
                     "validation": _score(r, metric, "validation"),
                     "test": _score(r, metric, "test")})
    frame = pd.DataFrame(rows, columns=["tradeoff", "seed", "validation", "test"])
    return frame.sort_values(["tradeoff", "seed"], ignore_index=True)


def study_tradeoff_points(results_dir: str | os.PathLike[str], store: str = "usps",
                          method: str = "dkm-p", metric: str = "acc") -> pd.DataFrame:
    """:func:`tradeoff_points` of the ablations' seeds, from every store that holds such runs.

    The runs are the protocol's (``<store>.jsonl``), its line search's
    (``<store>-lambda.jsonl``) and the ``"lambda"`` study's
    (``ablations/lambda.jsonl``), where each exists, on :data:`STUDY_SEEDS`.

    Parameters
    ----------
    results_dir : str or path-like
        The folder of the protocol's stores, with the ablations' in ``ablations/``.
    store : str, default "usps"
        The store's name, which is also the dataset id its records carry.
    method : str, default "dkm-p"
        A method with a trade-off hyperparameter.
    metric : {"acc", "nmi", "ari"}
        The score, in percent.

    Returns
    -------
    pandas.DataFrame
        As :func:`tradeoff_points`.
    """
    folder = Path(results_dir)
    runs = [r for name in (store, f"{store}-lambda") for r in _read(folder / f"{name}.jsonl")
            if r["seed"] in STUDY_SEEDS]
    return tradeoff_points(runs + load_study("lambda", folder / "ablations"), store, method, metric)


def tradeoff_means(points: pd.DataFrame, low: float = -math.inf,
                   high: float = math.inf) -> pd.DataFrame:
    """The mean test score at each value of a :func:`tradeoff_points` curve from ``low`` to ``high``.

    Returns
    -------
    pandas.DataFrame
        Indexed by trade-off value (ascending, both ends included): ``test``,
        the mean test score over its seeds, and ``seeds``, their number.
    """
    within = points[(points["tradeoff"] >= low) & (points["tradeoff"] <= high)]
    return within.groupby("tradeoff").agg(test=("test", "mean"), seeds=("seed", "size"))


def tradeoff_choice(points: pd.DataFrame) -> dict[str, float]:
    """The validation choice along a :func:`tradeoff_points` curve, and its regret.

    Each value is scored by its mean over its seeds (values may have different
    numbers of seeds).

    Returns
    -------
    dict
        ``chosen`` (the value with the best mean validation score) and
        ``test_chosen`` (its mean test score), ``best`` and ``test_best``
        (the value with the best mean test score, and that score), and
        ``regret`` = ``test_best - test_chosen`` (0 when the validation part
        picks the best value).

    Raises
    ------
    ValueError
        When ``points`` is empty.
    """
    if points.empty:
        raise ValueError("no runs to choose a trade-off from")
    means = points.groupby("tradeoff")[["validation", "test"]].mean()
    chosen, best = means["validation"].idxmax(), means["test"].idxmax()
    return {"chosen": float(chosen), "test_chosen": float(means.loc[chosen, "test"]),
            "best": float(best), "test_best": float(means.loc[best, "test"]),
            "regret": float(means.loc[best, "test"] - means.loc[chosen, "test"])}


def compare(
    ablation: Iterable[Mapping[str, Any]],
    protocol: Iterable[Mapping[str, Any]],
    metric: str = "acc",
    split: str = "test",
    confidence: float = 0.95,
    against: Mapping[str, str] | None = None,
    of: str = "clusters",
) -> pd.DataFrame:
    """Each variant against the protocol's runs of the same method (or ``against``) and seeds.

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
    against : mapping of str to str, optional
        The protocol method that an ablation method is compared with, for a
        method without protocol runs of its own (``{"dkm-pa": "dkm-p"}``,
        :attr:`Study.against`); another implementation of a paper's method
        is compared with that method (:attr:`dkm.registry.Method.paper_method`),
        any other with its own.
    of : {"clusters", "embedding"}
        Score the method's own clusters (the default), or k-means++ on its
        final embedding (the records' ``kmeans_on_embedding``; runs without it
        are left out): does a variant change the representation, or only the
        clusters the method reads from it?

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, method, variant): the protocol method it is
        compared ``against``, ``n`` seeds, the variant's mean, ``paired``
        (seeds that have a protocol run), the protocol's mean on those seeds,
        the mean difference and its t interval (NaN with fewer than two pairs).
    """
    if of not in SCORE_SOURCES:
        raise ValueError(f"of must be one of {sorted(SCORE_SOURCES)}, got {of!r}")
    source = SCORE_SOURCES[of]
    against = dict(against or {})
    baseline: dict[tuple[str, str, str], dict[int, float]] = {}
    for r in protocol:
        if r.get(source) and not switches(r):
            key = (r["dataset"], r["method"], r["params"]["data_fingerprint"])
            baseline.setdefault(key, {})[r["seed"]] = _score(r, metric, split, of)
    groups: dict[tuple[str, str, str, str], dict[int, float]] = {}
    for r in ablation:
        if r.get(source):
            key = (r["dataset"], r["method"], describe(switches(r)), r["params"]["data_fingerprint"])
            groups.setdefault(key, {})[r["seed"]] = _score(r, metric, split, of)
    rows = []
    for (dataset, method, variant, fingerprint), scores in sorted(groups.items()):
        ours = pd.Series(scores, dtype=float)
        reference = against.get(method, registry.get(method).reported_as or method)
        base = pd.Series(baseline.get((dataset, reference, fingerprint), {}), dtype=float)
        difference, low, high, paired = paired_difference(ours, base, confidence)
        rows.append({
            "dataset": dataset, "method": method, "variant": variant, "against": reference,
            "n": len(ours), "mean": ours.mean(), "paired": paired,
            "protocol mean": base[base.index.intersection(ours.index)].mean()
            if paired else np.nan,
            "difference": difference, "low": low, "high": high,
        })
    return pd.DataFrame(rows, columns=["dataset", "method", "variant", "against", "n", "mean",
                                       "paired", "protocol mean", "difference", "low", "high"])


def excludes_zero(comparison: pd.DataFrame) -> pd.Series:
    """Whether each row of a :func:`compare` table has a t interval that excludes 0.

    A row without an interval (fewer than two seed pairs) does not.
    """
    return (comparison["low"] > 0) | (comparison["high"] < 0)


def zero_nmi_variants(ablation: Iterable[Mapping[str, Any]],
                      protocol: Iterable[Mapping[str, Any]], seeds_needed: int = 2) -> pd.DataFrame:
    """The variants whose every run ends with a test NMI of 0: clusters that say nothing of the classes.

    Parameters
    ----------
    ablation, protocol : iterable of dict
        As for :func:`compare`.
    seeds_needed : int, default 2
        The fewest runs a variant needs to be listed.

    Returns
    -------
    pandas.DataFrame
        The rows of ``compare(ablation, protocol, metric="nmi")`` whose mean is 0.
    """
    nmi = compare(ablation, protocol, metric="nmi")
    return nmi[(nmi["mean"] == 0) & (nmi["n"] >= seeds_needed)]


def signed(value: float) -> str:
    """A difference as text, signed, with one decimal and a true minus sign.

    Examples
    --------
    >>> signed(1.23), signed(-0.6)
    ('+1.2', '−0.6')
    """
    return f"{value:+.1f}".replace("-", "\u2212")


def difference_text(row: Any, unit: str = "", seeds: bool = False) -> str:
    """A paired difference and its interval as text: ``+1.2 [−0.6, +3.0] points over 3 seeds``.

    Parameters
    ----------
    row : namedtuple or pandas.Series
        A row of :func:`compare` or :func:`step_effects`: ``difference``,
        ``low``, ``high`` and ``paired``.
    unit : str
        Written after the numbers (``"points"``); nothing by default.
    seeds : bool
        Also say on how many seed pairs: ``over 3 seeds``, or ``on one seed``
        for a row without an interval.

    Returns
    -------
    str
        The signed difference with one decimal, then its interval where the
        row has one.
    """
    has_interval = bool(np.isfinite(row.low))
    text = signed(row.difference) + (f" {_interval_text(row.low, row.high)}" if has_interval else "")
    text += f" {unit}" if unit else ""
    if seeds:
        text += f" over {row.paired} seeds" if has_interval else " on one seed"
    return text


def _interval_text(low: float, high: float) -> str:
    return f"[{signed(low)}, {signed(high)}]"


def tradeoff_onset(comparison: pd.DataFrame, name: str = "lambda",
                   dataset: str = "usps") -> dict[str, float | None]:
    """Where a trade-off study's values start to move the score, against the protocol's value.

    The study's values are read in increasing order: the first whose interval
    (:func:`compare`) excludes 0 is the *onset*, and the values before it
    change nothing measurably. The walk stops, without an onset, at a value
    that has no interval yet (fewer than two seed pairs).

    Parameters
    ----------
    comparison : pandas.DataFrame
        A :func:`compare` table of the study's records.
    name : str, default "lambda"
        A study of :data:`STUDIES` whose variants each change only their
        method's trade-off.
    dataset : str, default "usps"
        The dataset id of the rows read.

    Returns
    -------
    dict
        ``steady``: the largest value read before the onset or the stop (the
        protocol's own value when there is none); ``onset``: the onset's value
        and ``change``: its mean difference (both None without an onset).
    """
    from dkm.experiments import default_tradeoff

    variants = study(name).variants
    steps = sorted((float(v.overrides_for(dataset)[registry.get(v.method).config_field]),
                    describe(v.overrides)) for v in variants)
    rows = comparison[comparison["dataset"] == dataset].set_index("variant")
    steady = default_tradeoff(variants[0].method, dataset)
    for value, label in steps:
        if label not in rows.index or not np.isfinite(rows.at[label, "low"]):
            break
        row = rows.loc[label]
        if row["low"] > 0 or row["high"] < 0:
            return {"steady": steady, "onset": value, "change": float(row["difference"])}
        steady = value
    return {"steady": steady, "onset": None, "change": None}


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
    from dkm.snapshots import load_snapshot

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


def agreement_by_dataset(verdicts: pd.DataFrame, methods: Sequence[str] = (),
                         seeds_needed: int = len(STUDY_SEEDS)) -> pd.DataFrame:
    """Per dataset of a :func:`paper_verdicts` table, whether every verdict is consistent.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        A :func:`paper_verdicts` table.
    methods : sequence of str, optional
        The methods each dataset should have verdicts for; a dataset that
        lacks one of them counts 0 seeds.

    seeds_needed : int, optional
        The runs a row needs for its dataset to be complete (by default the
        ablations' seeds, :data:`STUDY_SEEDS`).

    Returns
    -------
    pandas.DataFrame
        Indexed by dataset, in order of appearance: ``seeds``, the fewest runs
        behind any of its rows (0 when a method of ``methods`` has none),
        ``consistent``, whether every row of the dataset agrees with the paper,
        and ``complete``, whether ``seeds`` reaches ``seeds_needed``.
    """
    by_dataset = verdicts.groupby("dataset", sort=False)
    seeds = by_dataset["n"].min().astype(int)
    if methods:
        lacking = by_dataset["method"].agg(lambda ran: bool(set(methods) - set(ran)))
        seeds[lacking] = 0
    return pd.DataFrame({"seeds": seeds,
                         "consistent": by_dataset["verdict"].agg(
                             lambda v: bool((v == "consistent").all())),
                         "complete": seeds >= seeds_needed})


def against_paper(comparison: pd.DataFrame, metric: str = "acc",
                  table: str = "table1") -> pd.DataFrame:
    """A :func:`compare` table with the paper's figure (``paper``) and ``against paper``.

    ``against paper`` is the variant's mean minus the paper's mean; a variant
    of a paper's dataset takes that dataset's figure, another implementation
    of a paper's method that method's.
    """
    figures = [paper.reported(table, method, paper_dataset(dataset), metric)[0]
               for dataset, method in zip(comparison["dataset"], comparison["method"])]
    return comparison.assign(paper=pd.Series(figures, index=comparison.index, dtype=float),
                             **{"against paper": lambda f: f["mean"] - f["paper"]})


def paper_verdicts(records: Iterable[Mapping[str, Any]], metrics: Sequence[str] = ("acc", "nmi"),
                   split: str = "test", table: str = "table1") -> pd.DataFrame:
    """Each variant's runs against the paper's figure of its method (:func:`dkm.stats.compare_with_paper`).

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, method, variant, metric): ``n`` runs, their
        ``mean``, the paper's ``paper mean`` and ``paper std``, and the
        ``verdict``.
    """
    from dkm.stats import compare_with_paper

    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("metrics"):
            groups.setdefault((r["dataset"], r["method"], describe(switches(r))), []).append(r)
    rows = []
    for (dataset, method, variant), runs in sorted(groups.items()):
        for metric in metrics:
            scores = [_score(r, metric, split) for r in runs]
            mean, std, n = paper.reported(table, method, paper_dataset(dataset), metric)
            rows.append({"dataset": dataset, "method": method, "variant": variant,
                         "metric": metric, "n": len(scores), "mean": float(np.mean(scores)),
                         "paper mean": mean, "paper std": std,
                         "verdict": compare_with_paper(scores, mean, std, n).verdict})
    return pd.DataFrame(rows, columns=["dataset", "method", "variant", "metric", "n", "mean",
                                       "paper mean", "paper std", "verdict"])


def _long(points: Iterable[tuple[Any, pd.Series]], name: str) -> pd.DataFrame:
    """``(value, scores by seed)`` pairs as rows ``name``, ``seed``, ``score``."""
    rows = [{name: value, "seed": seed, "score": score}
            for value, scores in points for seed, score in scores.items()]
    return pd.DataFrame(rows, columns=[name, "seed", "score"])


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
        config = _configuration(variant, dataset)
        alpha = math.inf if config.assignment == "hard" else config.schedule.alphas[-1]
        points.append((alpha, variant_scores(records, variant, dataset, metric, split)))
    return _long(points, "alpha").sort_values(["alpha", "seed"], ignore_index=True)


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


def towards_dkm_chain(records: Iterable[Mapping[str, Any]], dataset: str, metric: str = "acc",
                      split: str = "test") -> pd.DataFrame:
    """The scores along the walk from DCN^p to DKM^p (:data:`dkm.methods.dcn.TOWARDS_DKM`).

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
    from dkm.methods.dcn import TOWARDS_DKM

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


_SIGNED = ("difference", "against paper")


def table_view(comparison: pd.DataFrame, columns: Sequence[str], fmt: str = "html") -> pd.DataFrame:
    """A comparison ready to show: labels typeset, one decimal, the interval as text.

    Parameters
    ----------
    comparison : pandas.DataFrame
        A table of :func:`compare` (or :func:`against_paper`).
    columns : sequence of str
        The columns shown, in order; ``"interval"`` is the t interval of the
        difference, with a no-break space so that a table keeps it on one line
        (``"–"`` where there is none).
    fmt : str
        A format of :func:`dkm.tables.typeset` for the method labels.

    Returns
    -------
    pandas.DataFrame
        Text cells; numbers with one decimal, differences signed, NaN as ``"–"``.
    """
    from dkm.tables import typeset

    def label(method: str) -> str:
        return typeset(registry.get(method).label, fmt)

    def number(value: float, with_sign: bool) -> str:
        return "–" if np.isnan(value) else signed(value) if with_sign else f"{value:.1f}"

    shown = comparison.assign(
        method=comparison["method"].map(label), against=comparison["against"].map(label),
        dataset=[paper.dataset_label(paper_dataset(d)) for d in comparison["dataset"]],
        interval=[_interval_text(lo, hi).replace(" ", "\u00a0") if np.isfinite(lo) else "–"
                  for lo, hi in zip(comparison["low"], comparison["high"])])
    for column in columns:
        if shown[column].dtype.kind == "f":
            shown[column] = [number(v, column in _SIGNED) for v in shown[column]]
    return shown[list(columns)]


def _method_snapshots(snapshots_dir: str | os.PathLike[str], dataset: str, seed: int,
                      method: str, variants: str) -> Iterator[tuple[str, Any]]:
    """``(label, snapshot)`` of the protocol's snapshot, then the variants', that trained
    ``method`` (see :func:`embedding_norm_curves`); an error when two have the same label."""
    from dkm.snapshots import load_snapshot

    folder = Path(snapshots_dir)
    labels: set[str] = set()
    for path in [folder / f"{dataset}-{seed}.npz",
                 *sorted(folder.glob(f"{dataset}-{seed}-{method}-{variants}.npz"))]:
        if not path.exists():
            continue
        snapshot = load_snapshot(path)
        if method not in snapshot.history:
            continue
        label = describe(snapshot.meta.get("overrides", {}).get(method, {}))
        if label in labels:
            raise ValueError(f"two snapshots of {dataset}, seed {seed} are both {label!r}")
        labels.add(label)
        yield label, snapshot


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


def embedding_norm_curves(snapshots_dir: str | os.PathLike[str], dataset: str, seed: int,
                          method: str = "dkm-p", variants: str = "decay-*",
                          ) -> tuple[dict[str, np.ndarray], int]:
    """The mean embedding norm per epoch of a method's snapshots, pretraining then training.

    The protocol's snapshot of a dataset and seed is ``<dataset>-<seed>.npz``
    (:func:`dkm.snapshots.save_snapshot`), a variant's
    ``<dataset>-<seed>-<method>-<tag>.npz`` with its switches in
    ``meta["overrides"]``. Each snapshot that trained ``method`` gives one curve:
    its pretraining's ``pretrain_embedding_norm`` followed by its training's
    ``embedding_norm``.

    Parameters
    ----------
    snapshots_dir : str or path-like
        The folder of the snapshots (it may be missing).
    dataset : str
        Dataset id as the file names write it (``"usps"``).
    seed : int
        The seed of the runs.
    method : str, default "dkm-p"
        The method whose curves are read.
    variants : str, default "decay-*"
        Glob of the variants' tags (the weight-decay study's by default).

    Returns
    -------
    curves : dict of str to numpy.ndarray
        One curve per snapshot, the protocol's first (if present), then the
        variants' in file-name order, labelled by their switches
        (:func:`describe`: ``"protocol"``, ``"weight decay 0.01"``); empty
        when there is no snapshot.
    pretraining_epochs : int
        How many of the first values of each curve are the pretraining's
        (0 when there is no curve).

    Raises
    ------
    ValueError
        When the snapshots' pretrainings differ in length, or two snapshots
        have the same switches.
    """
    curves: dict[str, np.ndarray] = {}
    lengths: set[int] = set()
    for label, snapshot in _method_snapshots(snapshots_dir, dataset, seed, method, variants):
        history = snapshot.history[method]
        pretraining = history.get("pretrain_embedding_norm", np.zeros(0))
        lengths.add(len(pretraining))
        curves[label] = np.concatenate([pretraining, history["embedding_norm"]])
    if len(lengths) > 1:
        raise ValueError(f"the snapshots of {dataset}, seed {seed} pretrain for different numbers "
                         f"of epochs: {sorted(lengths)}")
    return curves, lengths.pop() if lengths else 0


def embedding_shrinkage(curves: Mapping[str, np.ndarray], pretraining_epochs: int) -> pd.DataFrame:
    """Each :func:`embedding_norm_curves` curve's norm when the pretraining ends and at the end.

    Parameters
    ----------
    curves : mapping of str to numpy.ndarray
        The curves, pretraining first, as :func:`embedding_norm_curves` returns them.
    pretraining_epochs : int
        How many of each curve's first values are the pretraining's (>= 1).

    Returns
    -------
    pandas.DataFrame
        Indexed by the curves' labels, in order: ``pretrained`` (the mean norm
        at the last epoch of the pretraining), ``trained`` (at the last epoch)
        and ``shrinks`` (whether ``trained < pretrained``); no row without curves.

    Raises
    ------
    ValueError
        When there are curves and ``pretraining_epochs`` < 1 (a curve without
        its pretraining has no starting norm to compare with).
    """
    if curves and pretraining_epochs < 1:
        raise ValueError("the curves have no pretraining epoch to start from "
                         f"(pretraining_epochs={pretraining_epochs})")
    frame = pd.DataFrame({"pretrained": [float(c[pretraining_epochs - 1]) for c in curves.values()],
                          "trained": [float(c[-1]) for c in curves.values()]},
                         index=pd.Index(list(curves), dtype=object), dtype=float)
    return frame.assign(shrinks=frame["trained"] < frame["pretrained"])


def shrinkage_by_dataset(
        norm_curves: Mapping[str, tuple[Mapping[str, np.ndarray], int]]) -> pd.DataFrame:
    """:func:`embedding_shrinkage` of several datasets' curves, in one table.

    Parameters
    ----------
    norm_curves : mapping of str to (curves, pretraining_epochs)
        By dataset id, what :func:`embedding_norm_curves` returns for it.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`embedding_shrinkage`, indexed by ``dataset`` and
        ``run`` (the curve's label), datasets in the mapping's order; no row
        for a dataset without curves.
    """
    frames = {dataset: embedding_shrinkage(curves, pretraining_epochs)
              for dataset, (curves, pretraining_epochs) in norm_curves.items() if curves}
    if not frames:
        return pd.DataFrame({"pretrained": pd.Series(dtype=float),
                             "trained": pd.Series(dtype=float), "shrinks": pd.Series(dtype=bool)},
                            index=pd.MultiIndex.from_tuples([], names=["dataset", "run"]))
    return pd.concat(frames, names=["dataset", "run"])
