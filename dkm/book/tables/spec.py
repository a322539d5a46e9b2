"""The paper's tables as declarative specs: :class:`TableSpec` and :data:`TABLES`.

Each spec says a table's kind, title, caption, rows (grouped under the paper's
headings), columns and significance marks; the labels of the rows of the
trade-off and datasets tables are here too.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from dkm.book.stats import NOT_PRETRAINED, PRETRAINED
from dkm.protocol import paper, registry

_PAPER_DATASETS = tuple(paper.DATASET_LABELS)


@dataclass(frozen=True)
class Mark:
    """A significance mark of a table.

    Attributes
    ----------
    style : str
        ``"bold"`` or ``"underline"``.
    best_among : frozenset of str or None
        Method ids whose rows may define the best; ``None``: every row.
    meaning : str
        The legend, completing "<style>: ...".
    """

    style: str
    best_among: frozenset[str] | None
    meaning: str


@dataclass(frozen=True)
class RowGroup:
    """Consecutive rows under one heading (``""``: no heading)."""

    heading: str
    rows: tuple[str, ...]


@dataclass(frozen=True)
class TableSpec:
    """Declarative description of one table.

    Attributes
    ----------
    kind : str
        ``"results"`` (cells are runs' metrics), ``"tradeoff"`` (cells are
        the optimal λ / γ) or ``"datasets"`` (cells are dataset statistics).
    title, caption : str
        Shown above the rendered table.
    groups : tuple of RowGroup
        The rows, in the paper's order. Result and trade-off rows are paper
        labels (:func:`dkm.protocol.paper.parse_model_label`); dataset rows are the
        keys ``"samples"``, ``"classes"``, ``"dimensions"``.
    datasets : tuple of str
        Column datasets (package ids).
    metrics : tuple of str
        Column metrics of a result table (``"acc"``, ``"nmi"``, ``"ari"``).
    marks : tuple of Mark
        Significance marks of a result table.
    paper_table : str or None
        Short name of the paper's table in :data:`dkm.protocol.paper.TABLE_KEYS`.
    stub : str
        Heading of the row-label column.
    missing : str
        Text of a cell with nothing to show.
    rows_from_records : bool
        The rows and columns are those of the records: one row per method
        with records (Euclidean distance), in the registry's order, and one
        column group per dataset (:func:`with_recorded_rows`); ``groups`` and
        ``datasets`` are then ignored.
    """

    kind: str
    title: str
    caption: str
    groups: tuple[RowGroup, ...]
    datasets: tuple[str, ...] = _PAPER_DATASETS
    metrics: tuple[str, ...] = ()
    marks: tuple[Mark, ...] = ()
    paper_table: str | None = None
    stub: str = "Model"
    missing: str = "not run"
    rows_from_records: bool = False


_WITH_PRETRAINING = Mark(
    "bold",
    PRETRAINED,
    "no significant difference (p > 0.05) to the best approach with pretraining "
    "for each dataset/metric pair",
)
_WITHOUT_PRETRAINING = Mark(
    "underline",
    NOT_PRETRAINED,
    "no significant difference (p > 0.05) to the best approach without pretraining "
    "for each dataset/metric pair",
)
_TO_THE_BEST = Mark(
    "bold", None, "no significant difference (p > 0.05) to the best for each dataset/metric"
)
_WITHOUT_HEADING = "Deep clustering approaches without pretraining"
_WITH_HEADING = "Deep clustering approaches with pretraining"
_RESULTS_CAPTION = (
    "Each cell contains the average and standard deviation (%) computed over the runs; "
    "higher is better."
)


def _results_spec(
    title: str,
    first: tuple[str, ...],
    without: tuple[str, ...],
    with_: tuple[str, ...],
    metrics: tuple[str, ...],
    paper_table: str,
) -> TableSpec:
    """A table of the paper's main layout: baselines, then without / with pretraining."""
    groups = (RowGroup("", first),) if first else ()
    return TableSpec(
        kind="results",
        title=title,
        caption=_RESULTS_CAPTION,
        groups=groups + (RowGroup(_WITHOUT_HEADING, without), RowGroup(_WITH_HEADING, with_)),
        metrics=metrics,
        marks=(_WITH_PRETRAINING, _WITHOUT_PRETRAINING),
        paper_table=paper_table,
    )


_KM_RELATED = (("KM", "AE-KM"), ("DCN^np", "DKM^a"), ("DCN^p", "DKM^p"))
_VS_IDEC = ((), ("IDEC^np", "DKM^a"), ("IDEC^p", "DKM^p"))

#: Every table of the paper and its supplement, by short name.
TABLES: dict[str, TableSpec] = {
    "table1": _results_spec(
        "Table 1: clustering results of the k-Means-related methods (ACC and NMI)",
        *_KM_RELATED,
        ("acc", "nmi"),
        "table1",
    ),
    "table2": _results_spec(
        "Table 2: clustering results of the DKM and IDEC methods (ACC and NMI)",
        *_VS_IDEC,
        ("acc", "nmi"),
        "table2",
    ),
    "ari1": _results_spec(
        "Supplement: clustering results of the k-Means-related methods (ARI)",
        *_KM_RELATED,
        ("ari",),
        "ari1",
    ),
    "ari2": _results_spec(
        "Supplement: clustering results of the DKM and IDEC methods (ARI)",
        *_VS_IDEC,
        ("ari",),
        "ari2",
    ),
    "cosine": TableSpec(
        kind="results",
        title="Supplement: DKM with the euclidean and cosine distances on 20NEWS",
        caption=_RESULTS_CAPTION,
        groups=(
            RowGroup("f = euclidean distance, g = euclidean distance", ("DKM^a_ee", "DKM^p_ee")),
            RowGroup("f = cosine distance, g = euclidean distance", ("DKM^a_ce", "DKM^p_ce")),
        ),
        datasets=("20news",),
        metrics=("acc", "nmi", "ari"),
        marks=(_TO_THE_BEST,),
        paper_table="cosine",
    ),
    "friendliness": TableSpec(
        kind="results",
        title="Supplement: k-Means applied to the learned embedding spaces (k-Means-friendliness)",
        caption=_RESULTS_CAPTION + ' "+ KM": k-means on the final embedding of the method.',
        groups=(RowGroup("", ("AE-KM", "DCN^p + KM", "DKM^a + KM", "DKM^p + KM")),),
        metrics=("acc", "nmi"),
        marks=(_TO_THE_BEST,),
        paper_table="friendliness",
    ),
    "tradeoff": TableSpec(
        kind="tradeoff",
        title="Supplement: optimal trade-off hyperparameters (λ for DKM and DCN, γ for IDEC)",
        caption=(
            "The value with the best mean validation ACC of a line search in the records; "
            '"(paper)" where the records hold no line search for the cell.'
        ),
        groups=(RowGroup("", ("DKM^a", "DKM^p", "DCN^p", "DCN^np", "IDEC^p", "IDEC^np")),),
        stub="Hyperparameter",
    ),
    "methods": TableSpec(
        kind="results",
        title="Every method in the records",
        caption=_RESULTS_CAPTION + " Every method with records, the paper's or not, on every "
                                   "dataset they hold, and k-means on the final embedding of "
                                   "those that learn one (\"+ KM\").",
        groups=(),
        metrics=("acc", "nmi", "ari"),
        rows_from_records=True,
    ),
    "datasets": TableSpec(
        kind="datasets",
        title="Supplement: statistics of the datasets",
        caption="Dimensions of the images are flattened (MNIST: 28 × 28 = 784).",
        groups=(RowGroup("", ("samples", "classes", "dimensions")),),
        stub="Dataset",
        missing="not loaded",
    ),
}

#: The heading of the rows of k-means on the methods' embeddings in :func:`with_recorded_rows`.
KMEANS_ON_EMBEDDING_HEADING = "k-means on the method's final embedding (k-Means-friendliness)"


def with_recorded_rows(spec: TableSpec, methods: Iterable[str],
                       datasets: Iterable[str]) -> TableSpec:
    """``spec`` with one row per method of ``methods`` that the registry holds (in its order),
    then, under :data:`KMEANS_ON_EMBEDDING_HEADING`, one row of k-means on the embedding of
    each of them the protocol runs it for (``"DKM^p + KM"``), and one column group per dataset
    of ``datasets`` (the paper's first, in its order)."""
    methods = set(methods)
    recorded = [m for m in registry.ids() if m in methods]
    groups = [RowGroup("", tuple(paper.METHOD_LABELS[m] for m in recorded))]
    on_embedding = tuple(paper.model_label(m, kmeans_on_embedding=True) for m in recorded
                         if registry.get(m).kmeans_on_embedding)
    if on_embedding:
        groups.append(RowGroup(KMEANS_ON_EMBEDDING_HEADING, on_embedding))
    present = set(datasets)
    ordered = [d for d in _PAPER_DATASETS if d in present] + sorted(present - set(_PAPER_DATASETS))
    return replace(spec, groups=tuple(groups), datasets=tuple(ordered))


STATISTIC_LABELS = {"samples": "#Samples", "classes": "#Classes", "dimensions": "Dimensions"}
