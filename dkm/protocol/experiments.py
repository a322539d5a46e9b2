"""The paper's experimental protocol: seeded runs, records, a resumable grid.

A *run* trains one method on one dataset for one seed, transductively on all
points as the paper does, and evaluates ACC/NMI/ARI on the validation and the
test part of the split, plus k-means on the method's final embedding (the
supplement's k-Means-friendliness table). It returns a record in the schema of
:mod:`dkm.protocol.results`.

Several seeds of the same method and configuration train together as stacked
replicas (:mod:`dkm.autoencoder`), one record per seed, through the method's
estimator (:meth:`dkm.protocol.registry.Method.train`; KM and AE-KM through their fit
function); the pretraining is computed once per dataset and seed and shared by
every pretrained method through an on-disk cache.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import time
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Iterator, Sequence

import numpy as np

from dkm.reproducibility.arithmetic import Arithmetic, current_arithmetic
from dkm.checkpoints import RunCheckpoints, run_key
from dkm.data import Dataset, load, paper_dataset
from dkm.methods.config import RunIdentity, identity_params, switches, with_overrides
from dkm.metrics import evaluate
from dkm.protocol import paper, registry
from dkm.protocol.paper import TRADEOFF_GRID
from dkm.protocol.provenance import provenance, tensorflow_intra_op_threads
from dkm.protocol.results import ResultsStore, config_hash, new_record
from dkm.splits import validation_test_split

#: The seeds of the line searches (:data:`dkm.protocol.declarations.LINE_SEARCHES`): the
#: paper's first three.
LINE_SEARCH_SEEDS = 3
#: Fixed seed of the validation / test split (the split is drawn once per dataset).
SPLIT_SEED = 0
def default_tradeoff(method: str, dataset: str) -> float | None:
    """The paper's validation-optimal λ or γ (a variant of a paper's dataset takes its
    dataset's; another implementation of a paper's method, that method's), or the method's
    default elsewhere."""
    entry = registry.get(method)
    if entry.tradeoff is None:
        return None
    try:
        return paper.optimal_tradeoff(method, paper_dataset(dataset))
    except (KeyError, ValueError):
        return float(getattr(entry.default_config(), entry.config_field))


def configure(method: str, dataset: Dataset, tradeoff: float | None = None, scale: float = 1.0,
              overrides: dict[str, Any] | None = None) -> Any:
    """The configuration the protocol trains ``method`` with on ``dataset``.

    Parameters
    ----------
    method : str
        A method id (see :func:`dkm.protocol.registry.available_methods`).
    dataset : Dataset
        The data; its name picks the paper's trade-off and IDEC's update interval.
    tradeoff : float, optional
        λ or γ; the paper's value for this dataset when None.
    scale : float
        Multiplies every epoch count (1 = the paper's).
    overrides : dict, optional
        Fields of the method's configuration to change, applied last
        (:func:`dkm.methods.config.with_overrides`: a study's switches give the
        configuration of its model).

    Returns
    -------
    The method's configuration dataclass.
    """
    entry = registry.get(method)
    config = entry.default_config()
    if hasattr(config, "for_dataset"):  # a method's settings that depend on the dataset
        config = config.for_dataset(paper_dataset(dataset.name), dataset.n_samples)
    if entry.tradeoff is not None:
        value = default_tradeoff(method, dataset.name) if tradeoff is None else float(tradeoff)
        config = dataclasses.replace(config, **{entry.config_field: value})
    if overrides:
        config = with_overrides(config, overrides, [model._config_class for model in
                                                   registry.extending_models(type(config))])
    return config.scaled(scale) if scale != 1.0 else config


def run_params(method: str, config: Any, loop: Any, scale: float,
               fingerprint: str, arithmetic: Arithmetic | None = None) -> dict[str, Any]:
    """The hyperparameters recorded with a run (and hashed to identify it).

    The configuration's fields its class declares (:class:`dkm.methods.config.RunIdentity`),
    the loop's recorded settings (:func:`recorded_loop_settings`), the scale and the data's
    fingerprint. A network's products in bfloat16 are recorded as ``precision``; float32, the
    default, is not written. A run in the reproducible arithmetic (``arithmetic``; by
    default this process's, :func:`dkm.reproducibility.arithmetic.current_arithmetic`) is recorded as
    ``arithmetic``: ``"reproducible"``; the native arithmetic, the older records', is
    not written.
    """
    entry = registry.get(method)
    params = identity_params(config, _undeclared_identity(config, entry))
    params.update(recorded_loop_settings(loop), scale=scale, data_fingerprint=fingerprint)
    if entry.embedding and loop.precision != "float32":  # float32's hashes are the older runs'
        params["precision"] = loop.precision
    arithmetic = arithmetic or current_arithmetic()
    if arithmetic != "native":  # the native arithmetic's hashes are the older runs'
        params["arithmetic"] = arithmetic
    return params


def _undeclared_identity(config: Any, entry: registry.Method) -> RunIdentity:
    """What the record of a configuration whose class declares no ``IDENTITY`` (a plugin's)
    holds: every field, the trade-off under its name, and the Euclidean distance unless
    the configuration names one."""
    switched = {f.name for f in switches(config)}
    names = tuple(f.name for f in dataclasses.fields(config)
                  if f.name not in switched and f.name != entry.config_field)
    renamed = {entry.config_field: entry.tradeoff} if entry.tradeoff is not None else {}
    return RunIdentity(0, names, renamed, {"distance": "euclidean"})


def recorded_loop_settings(loop: Any) -> dict[str, Any]:
    """The loop's settings that a record holds (those declared ``recorded``,
    :func:`dkm.methods.parameters.parameter`), as JSON values."""
    from dkm.methods.parameters import flagged_values

    return flagged_values(loop, "recorded")


def data_fingerprint(dataset: Dataset) -> str:
    """A short SHA-256 of the features and labels: a run is tied to its data."""
    digest = hashlib.sha256(np.ascontiguousarray(dataset.X).tobytes())
    if dataset.y is not None:
        digest.update(np.ascontiguousarray(dataset.y).tobytes())
    return digest.hexdigest()[:16]


def split_scores(y: np.ndarray | None, labels: np.ndarray) -> dict[str, dict[str, float]] | None:
    """A run's scores as its record holds them: ACC, NMI and ARI of its clusters on the
    protocol's validation and test parts (:data:`SPLIT_SEED`); None without labels."""
    if y is None:
        return None
    split = validation_test_split(len(y), seed=SPLIT_SEED)
    return {part: evaluate(y[idx], labels[idx])
            for part, idx in (("validation", split.validation), ("test", split.test))}


def run_seeds(
    dataset: Dataset,
    method: str,
    seeds: Sequence[int],
    *,
    tradeoff: float | None = None,
    scale: float = 1.0,
    overrides: dict[str, Any] | None = None,
    loop: Any = None,
    cache_dir: str | os.PathLike[str] | None = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    log: Callable[[str], None] | None = None,
    study: str | None = None,
) -> list[dict[str, Any]]:
    """Train ``method`` on ``dataset`` for every seed at once; one record per seed.

    Parameters
    ----------
    dataset : Dataset
        The data (labels optional: without them the metrics are ``None``).
    method : str
        One of :func:`dkm.protocol.registry.available_methods`.
    seeds : sequence of int
        The seeds, trained together as stacked replicas.
    tradeoff : float, optional
        λ (DKM, DCN) or γ (IDEC); the paper's value for the dataset by default.
    scale : float
        Multiplies every epoch count (e.g. 0.02 for a quick run); recorded.
    overrides : dict, optional
        Other fields of the method's configuration (e.g. ``distance="cosine"``).
    loop : LoopConfig, optional
        Settings of the shared training loop (the paper's by default).
    cache_dir : path, optional
        Where the shared pretraining is cached.
    checkpoint_dir : path, optional
        Where the training phases save their state as they go
        (:mod:`dkm.checkpoints`): run again after an interruption, the same
        call resumes from it and returns the same records. Its files are
        removed once the records are made. None: no checkpoints.
    log : callable, optional
        Receives a line for each seed whose partition has fewer clusters than
        ``dataset.n_clusters`` (the others left empty); None: a ``RuntimeWarning`` says so.
    study : str, optional
        The ablation study the runs are made for, which their records name with their
        switches against the protocol's run (:func:`dkm.protocol.results.new_record`).
    """
    from dkm.methods.common import LoopConfig, kmeans_on_embedding

    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    loop = loop or LoopConfig(progress=False)
    entry = registry.get(method)
    config = configure(method, dataset, tradeoff, scale, overrides or {})
    params = run_params(method, config, loop, scale, data_fingerprint(dataset))
    protocol = run_params(method, configure(method, dataset, None, scale), loop, scale,
                          data_fingerprint(dataset))
    switched = {k: v for k, v in sorted(params.items())
                if k != "arithmetic" and protocol.get(k) != v}

    recorded = provenance()  # the code that trains, not the checkout when training ends
    hashes = [config_hash(dataset.name, method, int(seed), params) for seed in seeds]
    checkpoints = (None if checkpoint_dir is None
                   else _run_checkpoints(checkpoint_dir, hashes))
    loop = dataclasses.replace(loop, checkpoints=checkpoints)
    start = time.perf_counter()
    pretrained = (_shared_pretraining(dataset, seeds, config, loop, cache_dir)
                  if entry.pretrained and cache_dir is not None else None)
    result = entry.train(dataset.X, dataset.n_clusters, list(seeds), config, loop, pretrained)
    for s, seed in enumerate(seeds):
        found = len(np.unique(result.labels[s]))
        if found < dataset.n_clusters:
            line = (f"{dataset.name} {method} seed {seed}: {found} clusters of the "
                    f"{dataset.n_clusters} asked (the others are empty); the record scores "
                    "the partition found")
            if log is None:
                warnings.warn(line, RuntimeWarning, stacklevel=2)
            else:
                log(line)
    friendliness = (kmeans_on_embedding(result, dataset.n_clusters, seeds)
                    if entry.kmeans_on_embedding else None)
    wall = time.perf_counter() - start  # and, on a resumed run, the time its checkpoints saved
    wall += checkpoints.seconds_saved() if checkpoints is not None else 0.0

    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if checkpoints is not None and checkpoints.resumed:
        recorded = {**recorded, "resumed": checkpoints.resumed}
    records = [new_record(
        dataset.name, method, int(seed), params,
        metrics=split_scores(dataset.y, result.labels[s]),
        kmeans_on_embedding=None if friendliness is None
        else split_scores(dataset.y, friendliness[s]),
        wall_time_s=round(wall / len(seeds), 3), replicas_trained_together=len(seeds),
        provenance=recorded if pretrained is None
        else {**recorded, "pretraining": pretrained.fingerprint(s)},
        created=created, study=study, switches=switched,
    ) for s, seed in enumerate(seeds)]
    if checkpoints is not None:
        checkpoints.clear()
    return records


def _run_checkpoints(checkpoint_dir, hashes: Sequence[str]):
    """The checkpoints of the run of these configuration hashes in ``checkpoint_dir``."""
    return RunCheckpoints(Path(checkpoint_dir), run_key(hashes),
                          written_by=provenance()["git_commit"])


def _shared_pretraining(dataset, seeds, config, loop, cache_dir):
    """The seeds' pretraining, cached in ``cache_dir``; the reproducible arithmetic's in a
    folder of its own there (a pretraining in the other arithmetic is another run's), one per
    number of TensorFlow's intra-op threads (which can change the bits of a larger fit)."""
    from dkm.methods.pretraining import load_or_pretrain

    if cache_dir is not None and current_arithmetic() != "native":  # native: the older caches
        threads = tensorflow_intra_op_threads()
        cache_dir = Path(cache_dir) / current_arithmetic() / f"threads-{threads}"
    architecture = loop.architecture(dataset.n_features, dataset.n_clusters)
    return load_or_pretrain(dataset.X, architecture, list(seeds), config.pretrain_epochs, loop,
                            cache_dir=cache_dir)


@dataclass(frozen=True)
class GridCell:
    """One (method, trade-off) combination of a grid, run for several seeds."""

    method: str
    tradeoff: float | None
    overrides: tuple[tuple[str, Any], ...] = ()


def grid_cells(methods: Iterable[str], dataset: str, lambda_search: bool,
               overrides: dict[str, Any] | None = None) -> list[GridCell]:
    """The cells of a grid: the paper's λ/γ (or the one ``overrides`` sets), or every value of
    the line search."""
    overrides = overrides or {}
    frozen = tuple(sorted(overrides.items()))
    cells = []
    for method in methods:
        entry = registry.get(method)
        if entry.tradeoff is None:
            cells.append(GridCell(method, None, frozen))
        elif lambda_search:
            cells.extend(GridCell(method, value, frozen) for value in TRADEOFF_GRID)
        else:
            value = overrides.get(entry.config_field, default_tradeoff(method, dataset))
            cells.append(GridCell(method, value, frozen))
    return cells


@dataclass(frozen=True)
class Piece:
    """An independent piece of a grid: one cell's missing seeds on one dataset.

    The seeds share their pretraining (cached on disk) and are trained in
    batches by :func:`run_piece`; pieces do not depend on each other, so they
    may run anywhere, in any order (:mod:`dkm.protocol.cluster`).
    """

    dataset: Dataset
    cell: GridCell
    seeds: tuple[int, ...]

    def config_hashes(self, scale: float, loop: Any) -> dict[int, str]:
        """The configuration hash of each of its seeds' runs, by seed."""
        return _cell_hashes(self.dataset, self.cell, self.seeds, scale, loop)

    def batches(self, size: int | None) -> list["Piece"]:
        """This piece cut into pieces of at most ``size`` seeds, in order (itself when None)."""
        if not size:
            return [self]
        return [Piece(self.dataset, self.cell, self.seeds[start:start + size])
                for start in range(0, len(self.seeds), size)]


def grid_pieces(store: ResultsStore, datasets: Iterable[str | Dataset], methods: Iterable[str],
                seeds: Sequence[int], *, scale: float, lambda_search: bool,
                overrides: dict[str, Any] | None, loop: Any,
                held: Collection[str] = ()) -> list[Piece]:
    """The pieces of a grid still missing from ``store`` and from the runs ``held`` elsewhere
    (configuration hashes); a cell with nothing missing has none."""
    methods = list(methods)
    done = store.completed_hashes() | set(held)  # read once for the whole grid
    pieces = []
    for dataset in datasets:
        data = dataset if isinstance(dataset, Dataset) else load(dataset)
        for cell in grid_cells(methods, data.name, lambda_search, overrides):
            todo = _missing_seeds(done, data, cell, seeds, scale, loop)
            if todo:
                pieces.append(Piece(data, cell, tuple(todo)))
    return pieces


def run_piece(piece: Piece, *, scale: float, loop: Any,
              cache_dir: str | os.PathLike[str] | None, seeds_per_batch: int | None = None,
              checkpoint_dir: str | os.PathLike[str] | None = None,
              log: Callable[[str], None] = lambda message: None,
              study: str | None = None) -> Iterator[list[dict[str, Any]]]:
    """Run a piece's seeds, batch after batch; yields each batch's records as it finishes.

    ``seeds_per_batch`` seeds train together; by default the machine that runs the piece
    decides (:func:`dkm.replicas.default_seeds_per_batch`: all of them on a GPU, one at a
    time on a CPU). ``checkpoint_dir`` and ``study`` are :func:`run_seeds`'s.
    """
    from dkm.replicas import default_seeds_per_batch

    data, cell = piece.dataset, piece.cell
    for part in piece.batches(seeds_per_batch or default_seeds_per_batch(len(piece.seeds))):
        chunk = list(part.seeds)
        log(f"{data.name} {cell.method} tradeoff={cell.tradeoff} seeds={chunk}")
        yield run_seeds(data, cell.method, chunk, tradeoff=cell.tradeoff, scale=scale,
                        overrides=dict(cell.overrides), loop=loop, cache_dir=cache_dir,
                        checkpoint_dir=checkpoint_dir, log=log, study=study)


def _cell_hashes(data: Dataset, cell: GridCell, seeds: Sequence[int], scale: float,
                 loop: Any) -> dict[int, str]:
    """The configuration hash of a cell's run for each seed."""
    config = configure(cell.method, data, cell.tradeoff, scale, dict(cell.overrides))
    params = run_params(cell.method, config, loop, scale, data_fingerprint(data))
    return {int(s): config_hash(data.name, cell.method, int(s), params) for s in seeds}


def _missing_seeds(done: Collection[str], data: Dataset, cell: GridCell, seeds: Sequence[int],
                   scale: float, loop: Any) -> list[int]:
    return [s for s, run in _cell_hashes(data, cell, seeds, scale, loop).items() if run not in done]


def grid_hashes(datasets: Iterable[Dataset], methods: Iterable[str], seeds: Sequence[int], *,
                scale: float, lambda_search: bool, overrides: dict[str, Any] | None,
                loop: Any) -> list[str]:
    """The configuration hashes of a grid's runs, in the grid's order (dataset, cell, seed):
    what :func:`grid_pieces` cuts into pieces, done or not."""
    methods = list(methods)
    return [run for data in datasets
            for cell in grid_cells(methods, data.name, lambda_search, overrides)
            for run in _cell_hashes(data, cell, seeds, scale, loop).values()]


def fit_methods(
    dataset: str | Dataset,
    methods: Iterable[str],
    seeds: Sequence[int],
    *,
    scale: float = 1.0,
    tradeoffs: dict[str, float] | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    loop: Any = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Train several methods on one dataset from one shared pretraining.

    The protocol of :func:`run_seeds` without the records: each method is
    trained on all points for every seed (stacked replicas) and its full
    result is returned, embeddings and per-epoch history included (for
    figures such as the t-SNE of the final embeddings). The pretraining is
    computed once (or loaded from ``cache_dir``) and every pretrained method starts from it, so
    that for a given seed AE-KM's embedding *is* the starting point of DCN^p,
    IDEC^p and DKM^p.

    Parameters
    ----------
    dataset : str or Dataset
        The data; a name or path is loaded with :func:`dkm.data.load`.
    methods : iterable of str
        Method ids among :func:`dkm.protocol.registry.available_methods`, trained in this order.
    seeds : sequence of int
        The seeds, trained together as stacked replicas.
    scale : float
        Multiplies every epoch count, the pretraining's included (> 0).
    tradeoffs : dict, optional
        λ (DKM, DCN) or γ (IDEC) by method id; a method left out gets the
        paper's value for the dataset (:func:`default_tradeoff`).
    overrides : dict, optional
        Other fields of a method's configuration, by method id (as in
        :func:`run_seeds`).
    loop : LoopConfig, optional
        Settings of the shared training loop (the paper's, without progress
        bars, by default).
    checkpoint_dir : path, optional
        Where each method's training phases save their state as they go, as
        in :func:`run_seeds`: called again after an interruption, the same
        call skips the phases that had finished, resumes the one in progress
        and returns the same results. The files are removed once every
        method is trained. None: no checkpoints.
    cache_dir : path, optional
        Where the shared pretraining is cached, as in :func:`run_seeds` (a grid's
        ``.pretraining-cache/``): one cached there is loaded, not trained again.
        None: trained in memory.

    Returns
    -------
    dict of str to MethodResult
        One result per method, in the order of ``methods``; pretrained
        methods carry the pretraining's curves as ``"pretrain_*"`` history.

    Raises
    ------
    ValueError
        For an unknown method, a trade-off given for a method without one,
        or ``scale <= 0``.
    """
    from dkm.methods.common import LoopConfig

    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    methods = list(methods)
    tradeoffs = dict(tradeoffs or {})
    for method in methods:
        registry.get(method)  # a clear error for an unknown id
    overrides = dict(overrides or {})
    for method in tradeoffs:
        if method not in methods or registry.get(method).tradeoff is None:
            raise ValueError(f"a trade-off was given for {method!r}, which is not among the "
                             f"methods or has no trade-off")
    for method in overrides:
        if method not in methods:
            raise ValueError(f"overrides were given for {method!r}, which is not among the methods")
    data = dataset if isinstance(dataset, Dataset) else load(dataset)
    loop = loop or LoopConfig(progress=False)
    fingerprint = data_fingerprint(data) if checkpoint_dir is not None else None
    pretrainings: dict[int, Any] = {}   # one per number of pretraining epochs
    results, runs = {}, []
    for method in methods:
        entry = registry.get(method)
        config = configure(method, data, tradeoffs.get(method), scale, overrides.get(method, {}))
        checkpoints = None
        if checkpoint_dir is not None:  # named as run_seeds names the same training
            params = run_params(method, config, loop, scale, fingerprint)
            checkpoints = _run_checkpoints(
                checkpoint_dir, [config_hash(data.name, method, int(s), params) for s in seeds])
            runs.append(checkpoints)
        method_loop = dataclasses.replace(loop, checkpoints=checkpoints)
        pretrained = None
        if entry.pretrained:
            epochs = config.pretrain_epochs
            if epochs not in pretrainings:  # saved with the first method that needs it
                pretrainings[epochs] = _shared_pretraining(data, list(seeds), config,
                                                           method_loop, cache_dir)
            pretrained = pretrainings[epochs]
        results[method] = entry.train(data.X, data.n_clusters, list(seeds), config,
                                      method_loop, pretrained)
    for checkpoints in runs:  # kept until now: a finished method is restored, not retrained
        checkpoints.clear()
    return results
