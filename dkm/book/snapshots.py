"""Embedding snapshots: what the paper's figures need from a full-scale run, saved as data.

A figure such as the paper's t-SNE of the USPS embeddings needs the final
embedding of each method, not its scores. :func:`save_snapshot` trains several
methods for one seed from one shared pretraining (:func:`dkm.protocol.experiments.fit_methods`),
and keeps, for a fixed sample of points, each method's final embedding and
clusters, its per-epoch curves (the embedding norm among them), its scores on
the protocol's validation and test parts, and the run's provenance. The file
is a NumPy ``.npz`` whose ``meta`` entry is a JSON document;
:func:`write_snapshot` writes it atomically and :func:`load_snapshot` reads it
back. :func:`snapshot_projections` gives the t-SNE projections of a snapshot's
embeddings, kept beside it in ``projections/`` once computed.

Layout of the ``.npz``::

    meta                      JSON: dataset, seed, methods, scale, trade-offs,
                              overrides, data fingerprint, provenance, scores,
                              created
    points                    (n_points,) row indices of the sample, sorted
    y                         (n_points,) true classes of the sample
    <method>/embedding        (n_points, p) final embedding
    <method>/labels           (n_points,) the method's clusters
    <method>/history/<curve>  (n_epochs,) per-epoch curve (``embedding_norm``, ``loss`` ...)
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

import numpy as np
import sklearn

from dkm._atomic import atomic_write
from dkm.annealing import Schedule, constant, paper_annealing
from dkm.book.computed_once import computed_once
from dkm.book.embeddings import TSNE_SETTINGS, tsne_projection
from dkm.data import Dataset, load
from dkm.protocol import registry

__all__ = ["Snapshot", "save_snapshot", "write_snapshot", "load_snapshot", "sample_points",
           "final_embedding_norms",
           "snapshot_name", "snapshot_projections", "variant_tag"]

#: Seed of the sample of points a snapshot keeps (fixed, so every snapshot of a
#: dataset shows the same points).
SAMPLE_SEED = 0


@dataclass(frozen=True)
class Snapshot:
    """The content of a snapshot file.

    Attributes
    ----------
    meta : dict
        Dataset, seed, methods, scale, trade-offs, data fingerprint, provenance,
        the methods' scores (``scores[method][part][metric]``, on all points of
        each part) and the creation time.
    points : numpy.ndarray
        Row indices of the sample in the dataset.
    y : numpy.ndarray
        True classes of the sample.
    embeddings, labels : dict of str to numpy.ndarray
        Final embedding and clusters of the sample, by method.
    history : dict of str to dict of str to numpy.ndarray
        Per-epoch curves by method and curve name.
    """

    meta: dict[str, Any]
    points: np.ndarray
    y: np.ndarray
    embeddings: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]
    history: dict[str, dict[str, np.ndarray]]


def sample_points(n_samples: int, n_points: int | None) -> np.ndarray:
    """The sorted rows a snapshot keeps: ``n_points`` of ``n_samples`` drawn with
    :data:`SAMPLE_SEED`, or every row when ``n_points`` is None or not smaller."""
    if n_points is not None and n_points < 1:
        raise ValueError(f"n_points must be >= 1 or None, got {n_points}")
    if n_points is None or n_points >= n_samples:
        return np.arange(n_samples)
    rng = np.random.default_rng(SAMPLE_SEED)
    return np.sort(rng.choice(n_samples, n_points, replace=False))


def save_snapshot(
    dataset: str | Dataset,
    methods: Iterable[str],
    seed: int,
    path: str | os.PathLike[str],
    *,
    n_points: int | None = 2_000,
    scale: float = 1.0,
    tradeoffs: dict[str, float] | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    loop: Any = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
) -> Snapshot:
    """Train ``methods`` for ``seed`` and save the snapshot to ``path``.

    Parameters
    ----------
    dataset : str or Dataset
        The data, labelled; a name or path is loaded with :func:`dkm.data.load`.
    methods : iterable of str
        Method ids with an embedding (not KM), trained from one shared
        pretraining as in :func:`dkm.protocol.experiments.fit_methods`.
    seed : int
        The seed; with the same seed and scale, the scores equal the
        protocol's records for that seed.
    path : str or path-like
        The ``.npz`` to write (its directory is created).
    n_points : int or None, default 2000
        Size of the sample kept (:func:`sample_points`); None keeps every point.
    scale : float, default 1.0
        Multiplies every epoch count (1 = the paper's).
    tradeoffs : dict, optional
        λ or γ by method; the paper's value for the dataset by default.
    overrides : dict, optional
        Other configuration fields by method (an ablation's switches); kept
        in ``meta["overrides"]``.
    loop : LoopConfig, optional
        Settings of the shared training loop (the paper's by default).
    checkpoint_dir : path, optional
        Where the training saves its state as it goes
        (:func:`dkm.protocol.experiments.fit_methods`): called again after an
        interruption, the same call resumes and writes the same snapshot.

    Returns
    -------
    Snapshot
        What was written.

    Raises
    ------
    ValueError
        For unlabelled data, a method without an embedding, or a bad ``n_points``.
    """
    from dkm.methods.config import jsonable
    from dkm.metrics import evaluate
    from dkm.protocol.experiments import SPLIT_SEED, configure, data_fingerprint, fit_methods
    from dkm.protocol.provenance import provenance
    from dkm.splits import validation_test_split

    data = dataset if isinstance(dataset, Dataset) else load(dataset)
    if data.y is None:
        raise ValueError(f"{data.name} has no labels: a snapshot keeps the true classes")
    methods = list(methods)
    without = [m for m in methods if not registry.get(m).embedding]
    if without:
        raise ValueError(f"{', '.join(without)} has no embedding to keep: leave it out of a "
                         "snapshot's methods")
    points = sample_points(data.n_samples, n_points)
    recorded = provenance()
    start = time.perf_counter()
    overrides = overrides or {}
    results = fit_methods(data, methods, [seed], scale=scale, tradeoffs=tradeoffs,
                          overrides=overrides, loop=loop, checkpoint_dir=checkpoint_dir)
    wall = time.perf_counter() - start

    split = validation_test_split(data.n_samples, seed=SPLIT_SEED)
    parts = {"validation": split.validation, "test": split.test}
    embeddings, labels, history, scores, used_tradeoffs = {}, {}, {}, {}, {}
    for method, result in results.items():
        embeddings[method] = result.embeddings[0][points]
        labels[method] = result.labels[0][points]
        history[method] = {curve: np.asarray(values)[0] for curve, values in result.history.items()}
        scores[method] = {part: evaluate(data.y[idx], result.labels[0][idx])
                          for part, idx in parts.items()}
        config = configure(method, data, (tradeoffs or {}).get(method), scale,
                           overrides.get(method))
        for field in ("lam", "gamma"):
            if hasattr(config, field):
                used_tradeoffs[method] = float(getattr(config, field))
    meta = {
        "dataset": data.name, "seed": int(seed), "methods": methods, "scale": scale,
        "tradeoffs": used_tradeoffs, "n_points": int(points.size),
        "overrides": jsonable(overrides),
        "sample_seed": SAMPLE_SEED, "data_fingerprint": data_fingerprint(data),
        "scores": scores, "wall_time_s": round(wall, 3), "provenance": recorded,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    write_snapshot(path, Snapshot(meta, points, data.y[points], embeddings, labels, history))
    return load_snapshot(path)


def write_snapshot(path: str | os.PathLike[str], snapshot: Snapshot) -> None:
    """Write ``snapshot`` to ``path`` atomically, in the layout :func:`load_snapshot` reads.

    Parameters
    ----------
    path : str or path-like
        The ``.npz`` to write; its directory is created. A reader never sees a
        partly written file: the data go to a temporary file in the same
        directory, which then replaces ``path``.
    snapshot : Snapshot
        What to write; ``meta`` must be JSON-serialisable and name in
        ``meta["methods"]`` exactly the methods of ``embeddings``, ``labels``
        and ``history``.

    Raises
    ------
    ValueError
        When ``meta["methods"]`` and the methods of the arrays differ.
    """
    methods = list(snapshot.meta["methods"])
    for name, by_method in (("embeddings", snapshot.embeddings), ("labels", snapshot.labels),
                            ("history", snapshot.history)):
        if sorted(by_method) != sorted(methods):
            raise ValueError(f"the snapshot's {name} are of {sorted(by_method)}, "
                             f"its meta names {sorted(methods)}")
    arrays: dict[str, np.ndarray] = {"points": snapshot.points, "y": snapshot.y}
    for method in methods:
        arrays[f"{method}/embedding"] = snapshot.embeddings[method]
        arrays[f"{method}/labels"] = snapshot.labels[method]
        for curve, values in snapshot.history[method].items():
            arrays[f"{method}/history/{curve}"] = values
    with atomic_write(path) as stream:
        np.savez_compressed(stream, meta=np.array(json.dumps(snapshot.meta, sort_keys=True)),
                            **arrays)


def load_snapshot(path: str | os.PathLike[str]) -> Snapshot:
    """Read a snapshot written by :func:`save_snapshot`.

    Raises
    ------
    FileNotFoundError
        When ``path`` does not exist.
    ValueError
        When the file is not a snapshot.
    """
    with np.load(path, allow_pickle=False) as archive:
        if "meta" not in archive.files or "points" not in archive.files:
            raise ValueError(f"{path} is not an embedding snapshot (no 'meta' or 'points')")
        meta = json.loads(str(archive["meta"]))
        embeddings, labels, history = {}, {}, {}
        for method in meta["methods"]:
            embeddings[method] = archive[f"{method}/embedding"]
            labels[method] = archive[f"{method}/labels"]
            prefix = f"{method}/history/"
            history[method] = {name[len(prefix):]: archive[name]
                               for name in archive.files if name.startswith(prefix)}
        return Snapshot(meta, archive["points"], archive["y"], embeddings, labels, history)


def snapshot_projections(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The t-SNE projection of each method's embedding in a snapshot, computed once.

    A projection of a few thousand points takes tens of seconds, so the
    projections are kept in ``projections/<snapshot's name>`` beside the
    snapshot (:func:`dkm.book.computed_once.computed_once`): read back while
    the snapshot's embeddings and the t-SNE settings are those they were
    computed from, computed (:func:`dkm.book.embeddings.tsne_projection`,
    seed 0) and written again otherwise.

    Parameters
    ----------
    path : str or path-like
        A snapshot written by :func:`save_snapshot`.

    Returns
    -------
    dict of str to numpy.ndarray
        The ``(n_points, 2)`` coordinates by method, in the snapshot's order of methods.
    """
    snapshot = load_snapshot(path)
    methods = list(snapshot.meta["methods"])
    kept = os.path.join(os.path.dirname(os.fspath(path)), "projections",
                        os.path.basename(os.fspath(path)))
    projections = computed_once(
        kept, settings={**TSNE_SETTINGS, "random_state": 0},
        inputs={method: snapshot.embeddings[method] for method in methods},
        compute=lambda: {method: tsne_projection(snapshot.embeddings[method], random_state=0)
                         for method in methods},
        versions={"sklearn": sklearn.__version__})
    return {method: projections[method] for method in methods}


def final_embedding_norms(snapshot: Snapshot) -> dict[str, float]:
    """Each method's mean embedding norm over every point at the end of its run, as its
    history keeps it: the last value of its training's ``embedding_norm``, or of its
    pretraining's ``pretrain_embedding_norm`` for a method that only pretrains (AE-KM). The
    same values as the curves of :func:`dkm.book.ablations.embedding_norm_curves`; the
    snapshot's sample of points, which its embeddings keep, is not all of them.
    """
    return {method: float(history.get("embedding_norm", history.get("pretrain_embedding_norm"))[-1])
            for method, history in snapshot.history.items()}


def snapshot_name(dataset: str, seed: int, method: str | None = None,
                  overrides: Mapping[str, Any] | None = None) -> str:
    """The file name a snapshot is kept under, the one the book's readers look for.

    ``<dataset>-<seed>.npz`` for the protocol's runs, ``<dataset>-<seed>-<method>.npz``
    for one method's protocol run kept apart, and ``<dataset>-<seed>-<method>-<tag>.npz``
    for a variant of it (:func:`variant_tag` of its ``overrides``).

    Examples
    --------
    >>> snapshot_name("usps", 8905)
    'usps-8905.npz'
    >>> snapshot_name("20news", 8905, "dkm-p", {"weight_decay": 0.01})
    '20news-8905-dkm-p-decay-1e-2.npz'
    """
    if overrides and method is None:
        raise ValueError("a variant's snapshot needs its method: pass method= with overrides=")
    parts = [dataset, str(seed)] + ([method] if method else []) + (
        [variant_tag(overrides)] if overrides else [])
    return "-".join(parts) + ".npz"


def schedule_tag(schedule: Schedule) -> str:
    """A short tag that tells a schedule apart from every other.

    ``alpha-<α>`` for a constant α held for the paper's 100 epochs
    (``alpha-<α>-<epochs>-epochs`` for another length); ``anneal-<n>`` for
    the paper's annealing law with ``n`` values (:func:`~dkm.annealing.paper_annealing`
    with its other arguments at their defaults); ``anneal-<n>-<digest>``
    for any other schedule, the digest being the first 8 hexadecimal digits
    of the SHA-1 of its values and epochs.

    Examples
    --------
    >>> from dkm.annealing import constant, paper_annealing
    >>> schedule_tag(constant(100.0, 100)), schedule_tag(constant(100.0, 50))
    ('alpha-100', 'alpha-100-50-epochs')
    >>> schedule_tag(paper_annealing(n_terms=20))
    'anneal-20'
    """
    if len(schedule) == 1:
        tag = f"alpha-{schedule.alphas[0]:g}"
        return (tag if schedule == constant(schedule.alphas[0])
                else f"{tag}-{schedule.total_epochs}-epochs")
    if schedule == paper_annealing(n_terms=len(schedule)):
        return f"anneal-{len(schedule)}"
    values = json.dumps([list(schedule.alphas), schedule.epochs_per_alpha])
    return f"anneal-{len(schedule)}-{hashlib.sha1(values.encode()).hexdigest()[:8]}"


def variant_tag(overrides: Mapping[str, Any]) -> str:
    """A short, file-name-safe tag for a variant's switches.

    The schedule first (:func:`schedule_tag`), then the assignment, the
    trade-off, the weight decay, α's rescaling and any other field
    (``name-value``), joined by hyphens.

    Examples
    --------
    >>> from dkm.annealing import constant
    >>> variant_tag({"schedule": constant(100.0, 100), "alpha_rescaling": True})
    'alpha-100-rescaled'
    >>> variant_tag({"weight_decay": 1e-4})
    'decay-1e-4'
    """
    from dkm.methods.config import jsonable

    switches = dict(jsonable(dict(overrides)))
    parts = []
    schedule = switches.pop("schedule", None)
    if schedule is not None:
        parts.append(schedule_tag(Schedule(tuple(schedule["alphas"]), schedule["epochs_per_alpha"])))
    if "assignment" in switches:
        parts.append(str(switches.pop("assignment")))
    for name in ("lam", "gamma"):
        if name in switches:
            parts.append(f"{'lambda' if name == 'lam' else name}-{switches.pop(name):g}")
    if "weight_decay" in switches:
        mantissa, exponent = f"{switches.pop('weight_decay'):e}".split("e")
        parts.append(f"decay-{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}")
    if switches.pop("alpha_rescaling", False):
        parts.append("rescaled")
    parts += [f"{name.replace('_', '-')}-{value}" for name, value in sorted(switches.items())]
    tag = "-".join(parts)
    return re.sub(r"[^A-Za-z0-9.+-]", "", tag) or "protocol"
