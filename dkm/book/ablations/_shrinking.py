"""Does the embedding shrink? Its norm through a snapshot's pretraining and training."""
from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dkm.book.ablations._studies import describe


def _method_snapshots(snapshots_dir: str | os.PathLike[str], dataset: str, seed: int,
                      method: str, variants: str) -> Iterator[tuple[str, Any]]:
    """``(label, snapshot)`` of the protocol's snapshot, then the variants', that trained
    ``method`` (see :func:`embedding_norm_curves`); an error when two have the same label."""
    from dkm.reproducibility.arithmetic import recorded_arithmetic
    from dkm.book.snapshots import load_snapshot

    folder = Path(snapshots_dir)
    labels: set[str] = set()
    arithmetics: dict[str, str] = {}
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
        arithmetics[path.name] = recorded_arithmetic(snapshot.meta.get("provenance", {}))
        if len(set(arithmetics.values())) > 1:
            raise ValueError(f"the snapshots of {dataset}, seed {seed} were made in two "
                             f"arithmetics ({arithmetics}): rerun them in one")
        yield label, snapshot


def embedding_norm_curves(snapshots_dir: str | os.PathLike[str], dataset: str, seed: int,
                          method: str = "dkm-p", variants: str = "decay-*",
                          ) -> tuple[dict[str, np.ndarray], int]:
    """The mean embedding norm per epoch of a method's snapshots, pretraining then training.

    The protocol's snapshot of a dataset and seed is ``<dataset>-<seed>.npz``
    (:func:`dkm.book.snapshots.save_snapshot`), a variant's
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
        When the snapshots' pretrainings differ in length, two snapshots have the
        same switches, or the snapshots were made in two arithmetics.
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
