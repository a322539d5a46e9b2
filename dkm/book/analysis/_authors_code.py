"""The authors' own code beside the package: per method and dataset, on the same seeds.

The records of ``benchmarks/authors_code.py`` (method ids ``<id>-authors-code``)
are set beside the package's protocol records of the same paper method and
dataset, and beside the paper's figure.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import pandas as pd

from dkm.book import stats
from dkm.protocol import paper, registry
from dkm.book.analysis._paired import paired_difference, seed_scores
from dkm.protocol.results import records_to_dataframe

#: Columns of :func:`authors_code_comparison`, in order.
AUTHORS_CODE_COLUMNS = (
    "dataset", "method", "metric", "paired", "authors_mean", "authors_std", "package_mean",
    "package_std", "paper_mean", "paper_std", "difference", "low", "high", "authors_vs_paper",
)


def _paper_figure(method: str, dataset: str, metric: str) -> tuple[float, float, int]:
    """The paper's mean, std and runs of ``method`` (Table 1, else Table 2); NaN when absent."""
    for table in ("table1", "table2"):
        try:
            return paper.reported(table, method, dataset, metric)
        except ValueError:
            continue
    return math.nan, math.nan, 0


def authors_code_comparison(records: Iterable[Mapping[str, Any]],
                            authors_records: Iterable[Mapping[str, Any]],
                            metrics: tuple[str, ...] = ("acc", "nmi"),
                            paired_with: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The authors' code, the package and the paper, one row per dataset, method and metric.

    Parameters
    ----------
    records : iterable of mapping
        The package's records: the protocol's, or those of the methods named
        in ``paired_with``.
    authors_records : iterable of mapping
        The records of ``benchmarks/authors_code.py``.
    metrics : tuple of str
        Test metrics to compare.
    paired_with : mapping of str to str, optional
        The package method whose runs each authors'-code method is set beside
        (``{"dcn-p-authors-code": "dcn-p-authors"}``: the ablations chapter's emulation of
        their DCN); by default the paper's method it stands for
        (:attr:`dkm.protocol.registry.Method.reported_as`). Methods of the
        authors' code missing from a given mapping have no rows.

    Returns
    -------
    pandas.DataFrame
        :data:`AUTHORS_CODE_COLUMNS`, in percent: ``paired``, the seeds run by both
        (a method and dataset without a common seed has no row); the means
        and sample standard deviations over those seeds; the paper's
        figure; ``difference`` (package − authors' code, same seeds) with its
        95 % t interval ``low``, ``high``; ``authors_vs_paper``, the verdict of
        :func:`dkm.book.stats.compare_with_paper` on the authors' code's runs
        (``"consistent"``, ``"better"``, ``"worse"``). Rows follow the order of
        :data:`dkm.protocol.registry.METHODS`; empty without authors' records.
    """
    authors = records_to_dataframe(list(authors_records))
    if authors.empty:
        return pd.DataFrame(columns=AUTHORS_CODE_COLUMNS)
    package = records_to_dataframe(list(records))
    rows = []
    ids = list(registry.METHODS)
    for (dataset, method_id) in sorted(set(zip(authors["dataset"], authors["method"])),
                                       key=lambda key: (key[0], ids.index(key[1]))):
        entry = registry.get(method_id)
        counterpart = (entry.reported_as if paired_with is None else paired_with.get(method_id))
        if counterpart is None:
            continue
        for metric in metrics:
            theirs = seed_scores(authors, entry.label, dataset, metric)
            ours = seed_scores(package, registry.get(counterpart).label, dataset, metric)
            common = theirs.index.intersection(ours.index)
            difference, low, high, n = paired_difference(ours[common], theirs[common])
            paper_mean, paper_std, paper_n = _paper_figure(entry.reported_as, dataset, metric)
            verdict = (None if math.isnan(paper_mean) else
                       stats.compare_with_paper(theirs[common], paper_mean, paper_std,
                                                paper_n).verdict)
            if n == 0:
                continue
            authors_mean, authors_std, _ = stats.summarize(theirs[common])
            package_mean, package_std, _ = stats.summarize(ours[common])
            rows.append({
                "dataset": dataset, "method": entry.reported_as, "metric": metric, "paired": n,
                "authors_mean": authors_mean, "authors_std": authors_std,
                "package_mean": package_mean, "package_std": package_std,
                "paper_mean": paper_mean, "paper_std": paper_std, "difference": difference,
                "low": low, "high": high, "authors_vs_paper": verdict,
            })
    return pd.DataFrame(rows, columns=AUTHORS_CODE_COLUMNS)
