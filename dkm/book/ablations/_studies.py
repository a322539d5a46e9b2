"""The studies, their variants, and which records are whose."""
from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from dkm.data import PAPER_STATISTICS, paper_dataset
from dkm.protocol import paper, registry
from dkm.protocol.results import (READ, SUPERSEDED, ResultsStore, every_store, protocol_store,
                                  protocol_stores, record_arithmetic, record_scale, results_folder,
                                  store_path)


#: The seeds of the ablations: the paper's first three.
STUDY_SEEDS: tuple[int, ...] = paper.PAPER_SEEDS[:3]


#: The values of the ``"lambda"`` study: between the last value of the paper's
#: grid at which DKM^p learns on USPS and the first at which it collapses.
LAMBDA_CLIFF: tuple[float, ...] = (2.0, 3.0, 5.0)


#: The constant α of the ``"alpha"`` study that the ``"alpha-rescaling"`` study
#: rescales as the embedding shrinks (those at which DKM^p fails on 20NEWS).
RESCALED_ALPHAS: tuple[float, ...] = (100.0, 10.0)


#: The four switches as the DKM authors' DCN code had them (``update``, ``train_centroids``,
#: ``clustering_weight``, ``labels``: the four departures from Yang et al. that
#: :mod:`dkm.methods.dcn` lists).
AUTHORS_DCN: dict[str, object] = {
    "update": "last-sample", "train_centroids": True, "clustering_weight": 1.0, "labels": "stored",
}

#: From DCN^p to Deep k-Means with a hard assignment, one difference at a time:
#: each step adds its switches to the previous ones. With DKM^p's λ and epochs
#: on top, the last step trains exactly DKM^p with ``assignment="hard"``.
TOWARDS_DKM: tuple[tuple[str, dict[str, object]], ...] = (
    ("clustering term λ‖h − r‖² (not λ/2)", {"clustering_weight": 1.0}),
    ("centroids by Adam, not by running means",
     {"clustering_weight": 1.0, "train_centroids": True, "update": "none"}),
    ("each sample pulled to its nearest centroid at every step",
     {"clustering_weight": 1.0, "train_centroids": True, "update": "none", "pull": "nearest"}),
)


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
        :func:`dkm.protocol.grid.run_grid` takes them (``overrides=``).
    tradeoff_of : str or None
        When set, the variant trains at the paper's λ or γ of this method for
        the dataset (:func:`dkm.protocol.experiments.default_tradeoff`), not its own.
    against : str or None
        The protocol method it is compared with; its own by default.
    """

    method: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    tradeoff_of: str | None = None
    against: str | None = None

    def overrides_for(self, dataset: str) -> dict[str, Any]:
        """The overrides on ``dataset``, the trade-off of :attr:`tradeoff_of` resolved."""
        from dkm.protocol.experiments import default_tradeoff

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
def _declared_studies() -> Mapping[str, Study]:
    from dkm.annealing import constant, paper_annealing

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


def study(name: str) -> Study:
    """The study called ``name`` in :data:`STUDIES`.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    if name not in _declared_studies():
        raise ValueError(f"unknown study {name!r}; choose among {', '.join(_declared_studies())}")
    return _declared_studies()[name]


def study_read_also(name: str, results_dir: str | os.PathLike[str],
                    datasets: Iterable[str]) -> list[Path]:
    """The stores whose runs :func:`run_study` reads instead of running them again, by default:
    the other declared studies' stores in ``results_dir`` (a run two studies share, such as
    DKM^p with the hard assignment, is made once) and the protocol's stores of ``datasets`` in
    its results folder (:func:`dkm.protocol.results.protocol_stores`: a variant that is the
    protocol's configuration is the protocol's run); those that exist."""
    others = [store_path(results_dir, other) for other in _declared_studies() if other != name]
    return ([path for path in others if path.is_file()]
            + protocol_stores(results_folder(store_path(results_dir, name)), datasets))


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
    read_also: Iterable[str | os.PathLike[str]] | None = None,
    progress: bool = True,
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr),
) -> int:
    """Run every variant of a study on every dataset into ``results_dir/<name>.jsonl``; resumable.

    Each variant is one :func:`dkm.protocol.grid.run_grid`, which skips the runs
    already in the store (same configuration hash) or in those of ``read_also``.

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
        As in :func:`dkm.protocol.grid.run_grid`.
    cache_dir : path, optional
        The pretraining cache; by default the protocol's, ``results_dir/../.pretraining-cache``,
        so that the pretrained variants start from the protocol's pretraining.
    read_also : iterable of path, optional
        The stores whose runs are read instead of run again; by default
        :func:`study_read_also`'s.

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
    from dkm.protocol.grid import run_grid

    chosen = study(name)
    datasets = list(datasets)
    methods = None if methods is None else tuple(methods)
    for dataset in datasets:  # every refusal before anything runs
        chosen.variants_for(dataset.name if isinstance(dataset, Dataset) else str(dataset), methods)
    store = store_path(results_dir, chosen.name)
    cache_dir = cache_dir if cache_dir is not None else Path(results_dir).parent / ".pretraining-cache"
    loaded = [dataset if isinstance(dataset, Dataset) else load(dataset) for dataset in datasets]
    if read_also is None:
        read_also = study_read_also(chosen.name, results_dir, [data.name for data in loaded])
    read_also = list(read_also)
    added = 0
    for data in loaded:
        for variant in chosen.variants_for(data.name, methods):
            overrides = variant.overrides_for(data.name)
            log(f"{chosen.name}: {data.name} {variant.method}, {describe(overrides)}")
            added += run_grid([data], [variant.method], seeds, store, scale=scale,
                              overrides=overrides,
                              seeds_per_batch=seeds_per_batch, cache_dir=cache_dir,
                              read_also=read_also, progress=progress, log=log, study=chosen.name)
    return added


def protocol_parameters(folder: str | os.PathLike[str]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The parameters of the protocol's runs in a results folder, by dataset, method, data and
    scale: those a study's record is set against to find its switches (:func:`identified`).

    Read from the records of every protocol store of the folder (``<dataset>.jsonl``, and those
    of the other arithmetic and of :data:`dkm.protocol.results.SUPERSEDED`), their arithmetic
    left out: a run's switches do not depend on the arithmetic it was made in.

    Returns
    -------
    dict
        ``(dataset, method, data_fingerprint, scale)`` to the parameters of the first such run.
    """
    from dkm.data import available_datasets

    folder = Path(folder)
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    for store in every_store(folder):
        inside = store.relative_to(folder).parts
        if store.stem not in available_datasets() or inside[:-1] not in ((), (SUPERSEDED,),
                                                                         ("reproducible",)):
            continue
        for record in ResultsStore(store).records():
            found.setdefault(_reference_key(record), _without_arithmetic(record["params"]))
    return found


def _reference_key(record: Mapping[str, Any]) -> tuple[Any, ...]:
    return (record["dataset"], record["method"], record["params"]["data_fingerprint"],
            record_scale(record))


def _without_arithmetic(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k != "arithmetic"}


def identified(store: str | os.PathLike[str], records: Iterable[Mapping[str, Any]],
               protocol: Mapping[tuple[Any, ...], Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Records of a store, each with what it is: its ``study`` and its ``switches``.

    A record that holds them keeps its own. For the others, the ``study`` is the store's
    (``<results>/…/ablations/<study>.jsonl``; None for the protocol's and a line search's
    stores), and the ``switches`` are the recorded parameters in which the record differs from
    the protocol's run of its dataset, method, data and scale (``protocol``,
    :func:`protocol_parameters`), its arithmetic left out. A method that no protocol store
    runs (the DKM authors' DCN, ``dcn-p-authors``) is run by its study at its own
    configuration: no switches. A record of a protocol method
    (:data:`dkm.protocol.registry.PAPER_METHODS`) whose dataset, data and scale ``protocol`` holds
    no run of is left without ``switches`` (:func:`switches` says why).
    """
    store = Path(store)
    study_name = store.stem if store.parent.name == "ablations" else None
    described = []
    for record in records:
        record = dict(record)
        record.setdefault("study", study_name)
        default = protocol.get(_reference_key(record))
        if "switches" not in record and (default is not None
                                         or record["method"] not in registry.PAPER_METHODS):
            record["switches"] = {k: v for k, v in sorted(record["params"].items())
                                  if k != "arithmetic" and default is not None
                                  and default.get(k) != v}
        described.append(record)
    return described


def identified_stores(folder: str | os.PathLike[str]) -> dict[Path, list[dict[str, Any]]]:
    """Every store of a results folder (:func:`dkm.protocol.results.every_store`) to its
    records, :func:`identified`: the one reading of a folder from which the studies' runs are
    selected."""
    protocol = protocol_parameters(folder)
    return {store: identified(store, ResultsStore(store).records(), protocol)
            for store in every_store(folder)}


def _held(stores: Mapping[Path, Sequence[Mapping[str, Any]]]) -> list[Mapping[str, Any]]:
    """Each run of the stores once, its oldest record (:func:`dkm.protocol.results.held_runs`'s
    rule), in the order of the stores."""
    runs: dict[str, Mapping[str, Any]] = {}
    for records in stores.values():
        for record in records:
            kept = runs.get(record["config_hash"])
            if kept is None or record["created"] < kept["created"]:
                runs[record["config_hash"]] = record
    return list(runs.values())


def load_study(name: str, results_dir: str | os.PathLike[str],
               datasets: Iterable[str] | None = None, *,
               stores: Mapping[Path, Sequence[Mapping[str, Any]]] | None = None
               ) -> list[dict[str, Any]]:
    """The runs of a study, :func:`identified`: the records of its store in ``results_dir``,
    then the runs of its variants, on the datasets it has run, that another store of the
    results folder holds, in the arithmetic of its store's records (a store keeps one).

    A results folder keeps one record per run (:func:`dkm.protocol.results.held_runs`), so
    a run that two studies share (DKM^p with the hard assignment is a variant of both
    ``"alpha"`` and ``"towards-dkm"``) is kept by the study that ran it first and read
    from there by the other, which does not run it again
    (:func:`dkm.protocol.grid.run_grid`).

    Parameters
    ----------
    name : str
        A study of :data:`STUDIES`.
    results_dir : path-like
        The folder of its store (``results/ablations``).
    datasets : iterable of str, optional
        Only the runs of these datasets; all by default.
    stores : mapping, optional
        The results folder's :func:`identified_stores`, where the caller has read them.
    """
    chosen = study(name)
    store = store_path(results_dir, chosen.name)
    stores = identified_stores(results_folder(store)) if stores is None else stores
    wanted = None if datasets is None else set(datasets)
    own = [dict(r) for r in stores.get(store, ()) if wanted is None or r["dataset"] in wanted]
    ran = {r["config_hash"] for r in own}
    ran_on = {r["dataset"] for r in own}
    arithmetics = {record_arithmetic(r) for r in own}
    elsewhere = [dict(r) for r in _held(stores)
                 if r["config_hash"] not in ran and r["dataset"] in ran_on
                 and record_arithmetic(r) in arithmetics
                 and paper_dataset(r["dataset"]) in PAPER_STATISTICS
                 and any(_is_run_of(r, v) for v in chosen.variants)]
    return own + elsewhere


def protocol_records(results_dir: str | os.PathLike[str], datasets: Iterable[str], *,
                     stores: Mapping[Path, Sequence[Mapping[str, Any]]] | None = None
                     ) -> list[dict[str, Any]]:
    """The protocol's records of ``datasets`` that the book reads: those of each dataset's
    protocol store (:func:`dkm.protocol.results.protocol_store`), :func:`identified`.

    ``stores`` is the results folder's :func:`identified_stores`, where the caller has read
    them."""
    stores = identified_stores(results_dir) if stores is None else stores
    return [dict(r) for dataset in datasets
            for r in stores.get(protocol_store(results_dir, dataset), ())]


def studies_with_protocol(results_dir: str | os.PathLike[str], datasets: Iterable[str],
                          ) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Every study's runs and the protocol's records they are compared with: the one
    selection from which every page sets a study's variants against the protocol.

    Each dataset's runs, the studies' and the protocol's, are those of the stores the book
    reads (:data:`dkm.protocol.results.READ`), and so of one arithmetic.

    Returns
    -------
    studies : dict of str to list of dict
        Each study's runs on the datasets of :data:`~dkm.protocol.results.READ` (:func:`load_study`
        of each dataset's studies' folder).
    protocol : list of dict
        The protocol's records of ``datasets`` (:func:`protocol_records`).
    """
    folder = Path(results_dir)
    stores = identified_stores(folder)
    by_folder: dict[str, list[str]] = {}
    for dataset, read in READ.items():
        if read.studies is not None:
            by_folder.setdefault(read.studies, []).append(dataset)
    studies = {name: [r for sub, on in sorted(by_folder.items())
                      for r in load_study(name, folder / sub, on, stores=stores)]
               for name in _declared_studies()}
    return studies, protocol_records(folder, datasets, stores=stores)


def switches(record: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded parameters in which ``record`` differs from the protocol's run: its
    ``switches``, which a record read through :func:`identified` holds.

    Raises
    ------
    ValueError
        For a record without them: one read from a store directly, or one whose protocol run
        its results folder lacks.
    """
    if "switches" not in record:
        raise ValueError(
            f"the record of {record['method']} on {record['dataset']} (seed {record['seed']}) "
            "does not say its switches: read it through dkm.book.ablations.identified, from a "
            "results folder that holds the protocol's run of its dataset, data and scale")
    return dict(record["switches"])


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
    from dkm.methods.config import jsonable

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
            parts.append(_schedule_text(jsonable(value)))
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

    A record (:func:`identified`) is the variant's when its method is the variant's, its
    parameters hold the values the variant sets, and it switches nothing else, so that
    protocol and ablation records may be passed together.

    Returns
    -------
    pandas.Series
        Indexed by seed, sorted; empty when there is no run.
    """
    scores = {r["seed"]: _score(r, metric, split) for r in records
              if r["dataset"] == dataset and r.get("metrics") and _is_run_of(r, variant)}
    return pd.Series(scores, dtype=float).sort_index()


def _is_run_of(record: Mapping[str, Any], variant: Variant) -> bool:
    """Whether ``record`` (:func:`identified`) is a run of ``variant``: its method, the values
    the variant sets for its dataset, and no other switch."""
    if record["method"] != variant.method or "switches" not in record:
        return False
    entry = registry.get(variant.method)
    expected = _recorded(variant.overrides_for(record["dataset"]), entry)
    params = record["params"]
    return (all(params.get(name) == value for name, value in expected.items())
            and set(record["switches"]) <= set(expected))


def _recorded(overrides: Mapping[str, Any], entry: registry.Method) -> dict[str, Any]:
    """Configuration fields as a record holds them: as JSON values, the trade-off's field
    under the trade-off's name (``lam``: ``lambda``)."""
    from dkm.methods.config import jsonable

    return {(entry.tradeoff if name == entry.config_field and entry.tradeoff else name):
            jsonable(value) for name, value in overrides.items()}


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


def _long(points: Iterable[tuple[Any, pd.Series]], name: str) -> pd.DataFrame:
    """``(value, scores by seed)`` pairs as rows ``name``, ``seed``, ``score``."""
    rows = [{name: value, "seed": seed, "score": score}
            for value, scores in points for seed, score in scores.items()]
    return pd.DataFrame(rows, columns=[name, "seed", "score"])
