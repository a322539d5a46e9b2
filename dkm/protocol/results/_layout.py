"""Which stores of a results folder the book reads: one line per dataset.

A results folder keeps each dataset's protocol runs, its line search's and its ablation studies'
in stores of one arithmetic each (:mod:`dkm.reproducibility.arithmetic`). :data:`READ` names,
for each dataset, the store of its protocol runs, of its line search and the folder of its
studies' stores (one ``<study>.jsonl`` per study) that the book reads, and so the arithmetic it
reads the dataset in. Runs made in the native arithmetic that reruns in the reproducible one
have superseded are kept under ``native/`` (:data:`SUPERSEDED`), at the path their store had,
and read only by the pages that compare the two arithmetics.

Reading a dataset in its reruns, once they are whole, is a change of its line in :data:`READ`
(and a ``git mv`` of the store they supersede under ``native/``), never a decision made
while reading.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

#: The folder of a results folder that keeps the runs that reruns superseded.
SUPERSEDED = "native"


@dataclass(frozen=True)
class ReadStores:
    """The stores the book reads of one dataset, as paths inside a results folder.

    Attributes
    ----------
    protocol : str
        The store of its protocol runs.
    search : str or None
        The store of its line search of λ and γ; None where it has none.
    studies : str or None
        The folder of its ablation studies' stores (``<studies>/<study>.jsonl``); None where
        no study runs on it.
    """

    protocol: str
    search: str | None = None
    studies: str | None = None


#: The stores the book reads, by dataset (a data variant such as ``usps-sharp`` included).
READ: Mapping[str, ReadStores] = MappingProxyType({
    "usps": ReadStores("usps.jsonl", "reproducible/usps-lambda.jsonl", "reproducible/ablations"),
    "usps-sharp": ReadStores("usps-sharp.jsonl", "usps-sharp-lambda.jsonl"),
    "mnist": ReadStores("mnist.jsonl", None, "ablations"),
    "20news": ReadStores("20news.jsonl", "20news-lambda.jsonl", "ablations"),
})


def read_stores(dataset: str) -> ReadStores:
    """The stores the book reads of ``dataset``: its line of :data:`READ`, or, for a dataset
    that has none (a reader's own), the plain layout: ``<dataset>.jsonl``,
    ``<dataset>-lambda.jsonl`` and ``ablations/``."""
    return READ.get(dataset, ReadStores(f"{dataset}.jsonl", f"{dataset}-lambda.jsonl",
                                        "ablations"))


def protocol_store(folder: str | os.PathLike[str], dataset: str) -> Path:
    """The store of ``dataset``'s protocol runs that the book reads (:func:`read_stores`);
    it need not exist."""
    return Path(folder) / read_stores(dataset).protocol


def search_store(folder: str | os.PathLike[str], dataset: str) -> Path:
    """The store of ``dataset``'s line search that the book reads (:func:`read_stores`); it
    need not exist (a dataset without a search: ``<dataset>-lambda.jsonl``, absent)."""
    search = read_stores(dataset).search
    return Path(folder) / (search if search is not None else f"{dataset}-lambda.jsonl")


def study_store(folder: str | os.PathLike[str], dataset: str, study: str) -> Path | None:
    """The store of ``study`` whose runs of ``dataset`` the book reads (:func:`read_stores`);
    None for a dataset no study runs on. The store may not exist, and may hold other
    datasets' runs too."""
    studies = read_stores(dataset).studies
    return None if studies is None else Path(folder) / studies / f"{study}.jsonl"


def declared_stores(folder: str | os.PathLike[str]) -> list[Path]:
    """Every store :data:`READ` names in ``folder`` that exists, its studies' stores included:
    the stores the book reads. Sorted, each once."""
    folder = Path(folder)
    found = set()
    for stores in READ.values():
        found |= {folder / path for path in (stores.protocol, stores.search) if path is not None}
        if stores.studies is not None:
            found |= set((folder / stores.studies).glob("*.jsonl"))
    return sorted(path for path in found if path.is_file())
