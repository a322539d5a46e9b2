"""The result cells against the paper's figures, counted: consistent with them, above, below."""
from __future__ import annotations

import pandas as pd

from dkm.book.stats import COMPARISON_VERDICTS
from dkm.protocol import paper

#: How a cell of :func:`dkm.book.tables.comparisons` stands against the paper's figure, by its
#: verdict (:data:`dkm.book.stats.COMPARISON_VERDICTS`), in the order :func:`cell_counts` gives
#: them.
STANDINGS = dict(zip(COMPARISON_VERDICTS, ("consistent", "above", "below"), strict=True))


def distinct_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`dkm.book.tables.comparisons` that are distinct cells.

    A cell is a dataset, a metric and the runs scored: the same model shown in several tables
    (DKM^p in Tables 1 and 2, AE-KM again in the k-Means-friendliness table, DKM^a again as
    DKM^a_ee in the cosine table) is one cell; k-means on a model's embedding (``DKM^p + KM``)
    is another cell than the model. The first row of each is kept.
    """
    refs = cells["model"].map(paper.parse_model_label)
    runs = pd.DataFrame({"dataset": cells["dataset"], "metric": cells["metric"],
                         "method": refs.map(lambda ref: ref.method),
                         "distance": refs.map(lambda ref: ref.distance or "euclidean"),
                         "kmeans": refs.map(lambda ref: ref.kmeans_on_embedding)},
                        index=cells.index)
    return cells[~runs.duplicated()]


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
