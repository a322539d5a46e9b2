"""A results folder: where its stores lie, which runs it holds, and which of its records
the book reads (the protocol's stores, the other arithmetic's, the full-scale runs).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from dkm.protocol.results._record import is_full_scale, record_arithmetic
from dkm.protocol.results._store import ResultsStore
from dkm.reproducibility.arithmetic import ARITHMETICS, Arithmetic


def table_stores(folder: str | os.PathLike[str]) -> list[Path]:
    """The stores of a results folder, sorted by path.

    Parameters
    ----------
    folder : str or os.PathLike
        A results folder laid out as ``results/`` is: the protocol's stores
        and the line searches' as ``<name>.jsonl``, the ablation studies' as
        ``ablations/<study>.jsonl``.

    Returns
    -------
    list of pathlib.Path
        ``folder/*.jsonl`` then ``folder/ablations/*.jsonl``; empty when the
        folder does not exist.
    """
    folder = Path(folder)
    return sorted(folder.glob("*.jsonl")) + sorted(folder.glob("ablations/*.jsonl"))


#: The folders of a results folder that hold stores of their own kind: the ablation studies',
#: the authors' code's, the bfloat16 runs', the native runs that reruns superseded
#: (:data:`~dkm.protocol.results.SUPERSEDED`) and the reruns in the reproducible arithmetic.
STORE_FOLDERS = ("ablations", "authors-code", "bfloat16", "native", "reproducible")
#: The folder of a results folder that holds the audits of its records: reruns, never records.
AUDITS = "audits"


def results_folder(store: str | os.PathLike[str]) -> Path:
    """The results folder a store belongs to: its folder, or the first folder above it that is
    not one of :data:`STORE_FOLDERS` (``results/ablations/alpha.jsonl`` and
    ``results/reproducible/ablations/alpha.jsonl``: ``results``)."""
    parent = Path(store).parent
    while parent.name in STORE_FOLDERS:
        parent = parent.parent
    return parent


def every_store(folder: str | os.PathLike[str]) -> list[Path]:
    """Every store of a results folder, its sub-folders' included, the audits' not; sorted."""
    folder = Path(folder)
    return sorted(path for path in folder.rglob("*.jsonl")
                  if AUDITS not in path.relative_to(folder).parts[:-1])


def _records_by_run(folder: str | os.PathLike[str]) -> dict[str, list[tuple[Path, dict[str, Any]]]]:
    runs: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for store in every_store(folder):
        for record in ResultsStore(store).records():
            runs.setdefault(record["config_hash"], []).append((store, record))
    return runs


def held_runs(folder: str | os.PathLike[str]) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Every run a results folder holds, by configuration hash: its store and its record.

    A run is its configuration and seed, its arithmetic included; the folder holds one
    record of each (:func:`duplicate_runs` lists the exceptions; of those, the oldest
    record is returned). The book reads a line search's or a study's runs that another store
    holds from here (:func:`dkm.book.analysis.stored_search`,
    :func:`dkm.book.ablations.load_study`); a command that runs a grid reads the stores it
    names, and no other (:func:`dkm.protocol.grid.run_grid`'s ``read_also``).
    """
    return {run: min(records, key=lambda found: found[1]["created"])
            for run, records in _records_by_run(folder).items()}


def duplicate_runs(folder: str | os.PathLike[str]) -> list[list[tuple[Path, dict[str, Any]]]]:
    """The runs of which a results folder holds more than one record: for each, its records
    (store and record), oldest first. A rerun belongs in the audits (:data:`AUDITS`)."""
    return [sorted(records, key=lambda found: found[1]["created"])
            for records in _records_by_run(folder).values() if len(records) > 1]


def store_path(folder: str | os.PathLike[str], name: str) -> Path:
    """The store named ``name`` in ``folder``: ``folder/<name>.jsonl``.

    A dataset's protocol runs are the store of its name, a line search's
    ``<dataset>-lambda``, an ablation study's its study's name (in the
    ``ablations/`` folder of ``results/``).
    """
    return Path(folder) / f"{name}.jsonl"


def store_records(folder: str | os.PathLike[str], name: str,
                  arithmetic: Arithmetic | None = None) -> list[dict[str, Any]]:
    """The records of a results folder's store ``name``, or of its runs in one arithmetic.

    A results folder keeps the runs of a store made in the arithmetic its tables do not
    read in the sub-folder of that arithmetic's name (:data:`STORE_FOLDERS`): the protocol's
    USPS runs, in the reproducible arithmetic in ``results/usps.jsonl``, in the native one
    in ``results/native/usps.jsonl``.

    Parameters
    ----------
    folder : str or os.PathLike
    name : str
        The store's name (:func:`store_path`).
    arithmetic : {"native", "reproducible"}, optional
        Without it, the records of ``folder/<name>.jsonl``; with it, the records made in that
        arithmetic (:func:`record_arithmetic`) of ``folder/<name>.jsonl`` and
        ``folder/<arithmetic>/<name>.jsonl``.

    Returns
    -------
    list of dict
        In the stores' order; empty where neither store exists.
    """
    if arithmetic is not None and arithmetic not in ARITHMETICS:
        raise ValueError(f"arithmetic must be one of {ARITHMETICS}, got {arithmetic!r}")
    paths = [store_path(folder, name)]
    if arithmetic is not None:
        paths.append(store_path(Path(folder) / arithmetic, name))
    records = [record for path in paths if path.is_file()
               for record in ResultsStore(path).records()]
    return [record for record in records
            if arithmetic is None or record_arithmetic(record) == arithmetic]


def single_arithmetic(records: Iterable[Mapping[str, Any]]) -> Arithmetic:
    """The one arithmetic a set of records was made in (:func:`record_arithmetic`).

    Raises
    ------
    ValueError
        When there is no record, or the records were made in more than one arithmetic.
    """
    found = {record_arithmetic(record) for record in records}
    if len(found) != 1:
        raise ValueError("expected records made in one arithmetic, got "
                         + (" and ".join(sorted(found)) if found else "no record"))
    return found.pop()


def arithmetic_by_dataset(records: Iterable[Mapping[str, Any]]) -> dict[str, Arithmetic]:
    """The one arithmetic of each dataset's records (:func:`record_arithmetic`).

    Raises
    ------
    ValueError
        When one dataset's records were made in more than one arithmetic: a table that set
        such runs against each other would measure the arithmetic with them.
    """
    found: dict[str, set[Arithmetic]] = {}
    for record in records:
        found.setdefault(record["dataset"], set()).add(record_arithmetic(record))
    mixed = {dataset: sorted(kinds) for dataset, kinds in found.items() if len(kinds) > 1}
    if mixed:
        raise ValueError("records of one dataset made in two arithmetics: " + "; ".join(
            f"{dataset}: {' and '.join(kinds)}" for dataset, kinds in mixed.items())
            + " (read each dataset in one, or compare the arithmetics on purpose)")
    return {dataset: kinds.pop() for dataset, kinds in found.items()}


def dataset_stores(folder: str | os.PathLike[str]) -> dict[str, Path]:
    """The protocol's stores of a results folder, by dataset.

    The protocol keeps the runs of each named dataset (:func:`dkm.data.available_datasets`,
    a data variant such as ``usps-sharp`` included) in ``folder/<dataset>.jsonl``;
    the line searches' and the ablation studies' stores are not among them.

    Returns
    -------
    dict of str to pathlib.Path
        Each named dataset that has a store in ``folder`` to that store, in the
        order of :func:`dkm.data.available_datasets`; empty when the folder
        does not exist.
    """
    from dkm.data import available_datasets

    stores = {dataset: store_path(folder, dataset) for dataset in available_datasets()}
    return {dataset: store for dataset, store in stores.items() if store.is_file()}


def protocol_stores(folder: str | os.PathLike[str], datasets: Iterable[str]) -> list[Path]:
    """The stores of a results folder that keep the protocol's runs of ``datasets``, in either
    arithmetic: ``folder/<dataset>.jsonl``, then ``folder/<arithmetic>/<dataset>.jsonl`` for
    each arithmetic (:func:`store_records`); those that exist, in that order.

    A line search's run at the paper's value, or a study's variant that is the protocol's
    configuration, is the protocol's run: the commands that run them read these stores
    instead of running it again (:func:`dkm.protocol.grid.run_grid`).
    """
    folder = Path(folder)
    paths = [store_path(where, dataset) for dataset in dict.fromkeys(datasets)
             for where in (folder, *(folder / arithmetic for arithmetic in ARITHMETICS))]
    return [path for path in paths if path.is_file()]


def full_scale_records_by_store(folder: str | os.PathLike[str]) -> dict[Path, list[dict[str, Any]]]:
    """The full-scale records (:func:`is_full_scale`) of each of a results folder's stores.

    Returns
    -------
    dict
        Each of :func:`table_stores` (in their order) to its full-scale
        records, in the store's order; the records of smaller runs (tests,
        the book's quick builds) are left out.
    """
    return {store: [record for record in ResultsStore(store).records() if is_full_scale(record)]
            for store in table_stores(folder)}


def full_scale_records(folder: str | os.PathLike[str], *,
                       every: bool = False) -> list[dict[str, Any]]:
    """The full-scale records (:func:`is_full_scale`) of a results folder.

    Parameters
    ----------
    folder : str or os.PathLike
    every : bool
        False: those of the stores the tables read (:func:`table_stores`), one store after
        another (the records of :func:`full_scale_records_by_store`); True: those of every
        store (:func:`every_store`), the stores kept in the folder's :data:`STORE_FOLDERS`
        included (the other arithmetic's, the authors' code's, the bfloat16 runs'): every
        record a rerun may be an audit of. The audits' reruns are never among them.
    """
    stores = every_store(folder) if every else table_stores(folder)
    return [record for store in stores for record in ResultsStore(store).records()
            if is_full_scale(record)]
