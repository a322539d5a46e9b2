"""The result cells against the paper's figures, counted: consistent with them, above, below."""
from __future__ import annotations

import pandas as pd

#: How a cell of :func:`dkm.book.tables.comparisons` stands against the paper's figure, by its
#: verdict, in the order :func:`cell_counts` gives them.
STANDINGS = {"consistent": "consistent", "better": "above", "worse": "below"}


def cell_counts(cells: pd.DataFrame) -> pd.Series:
    """How many distinct result cells are consistent with the paper's figure, above it, below it.

    Parameters
    ----------
    cells : pandas.DataFrame
        Rows of :func:`dkm.book.tables.comparisons` (``dataset``, ``model``, ``metric``,
        ``verdict``). A model's score on a dataset and metric that two tables show (DKM^p in
        Tables 1 and 2) is one cell and counts once.

    Returns
    -------
    pandas.Series
        Indexed by ``"consistent"``, ``"above"``, ``"below"`` (Welch's test at 5 %, as the
        tables mark them), zeros included.
    """
    distinct = cells.drop_duplicates(["dataset", "model", "metric"])
    standing = distinct["verdict"].map(STANDINGS)
    return standing.value_counts().reindex(list(STANDINGS.values()), fill_value=0).astype(int)
