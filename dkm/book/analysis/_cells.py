"""The result cells against the paper's figures, counted: consistent with them, above, below."""
from __future__ import annotations

import pandas as pd

#: How a cell of :func:`dkm.book.tables.comparisons` stands against the paper's figure, by its
#: verdict, in the order :func:`cell_counts` gives them.
STANDINGS = {"consistent": "consistent", "better": "above", "worse": "below"}


def distinct_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`dkm.book.tables.comparisons` that are distinct cells.

    A cell is the same runs against the same figure of the paper: the rows of a dataset and
    metric with equal means, ours and the paper's, are one cell, whichever tables show it
    (DKM^p in Tables 1 and 2; DKM^a again as DKM^a_ee in the cosine table). The first row
    of each is kept.
    """
    return cells.drop_duplicates(["dataset", "metric", "ours_mean", "paper_mean"])


def cell_counts(cells: pd.DataFrame) -> pd.Series:
    """How many distinct result cells are consistent with the paper's figure, above it, below it.

    Parameters
    ----------
    cells : pandas.DataFrame
        Rows of :func:`dkm.book.tables.comparisons`; a cell several tables show counts
        once (:func:`distinct_cells`).

    Returns
    -------
    pandas.Series
        Indexed by ``"consistent"``, ``"above"``, ``"below"`` (Welch's test at 5 %, as the
        tables mark them), zeros included.
    """
    standing = distinct_cells(cells)["verdict"].map(STANDINGS)
    return standing.value_counts().reindex(list(STANDINGS.values()), fill_value=0).astype(int)
