"""Tests of dkm.book.tables (and of dkm.protocol.paper, whose figures the tables show)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dkm.book import tables
from dkm.book.stats import significance_marks
from dkm.book.tables import (
    SELECTED_TRADEOFF_COLUMNS,
    TABLES,
    Cell,
    build,
    render,
    selected_tradeoff,
    selected_tradeoffs,
)
from dkm.protocol import paper
from dkm.protocol.experiments import TRADEOFF_GRID
from dkm.protocol.results import new_record, records_to_dataframe

WITHOUT = "Deep clustering approaches without pretraining"
WITH = "Deep clustering approaches with pretraining"
SHARED_JSON = Path(__file__).resolve().parents[2] / "shared" / "paper" / "reported_results.json"


def runs_with(mean: float, std: float, n: int = 10) -> np.ndarray:
    """n values whose mean and sample standard deviation are exactly the given ones."""
    base = np.linspace(-1.0, 1.0, n)
    return mean + std * (base - base.mean()) / base.std(ddof=1)


def split(value: float) -> dict[str, float]:
    return {"acc": value, "nmi": value - 0.05, "ari": value - 0.1}


def fake_runs(
    method: str,
    dataset: str,
    test_acc,
    *,
    tradeoff: float | None = 1.0,
    val_acc=None,
    km_acc=None,
    distance: str = "euclidean",
    scale: float = 1.0,
) -> list[dict]:
    """One record per value of ``test_acc`` (fractions); NMI = ACC - 0.05, ARI = ACC - 0.1.

    Validation ACC defaults to 0.2 below the test ACC, so a table that read the validation
    split would show different figures. ``km_acc`` fills ``kmeans_on_embedding``.
    """
    name = None if method in ("km", "ae-km") else paper.tradeoff_name(method)
    params = {"distance": distance, "scale": scale, **({name: tradeoff} if name else {})}
    val_acc = [acc - 0.2 for acc in test_acc] if val_acc is None else val_acc
    records = []
    for index, acc in enumerate(test_acc):
        km = (
            None
            if km_acc is None
            else {"validation": split(km_acc[index]), "test": split(km_acc[index])}
        )
        records.append(
            new_record(
                dataset,
                method,
                paper.PAPER_SEEDS[index % 10] + 10_000 * (index // 10),
                params,
                metrics={"validation": split(val_acc[index]), "test": split(float(acc))},
                kmeans_on_embedding=km,
                wall_time_s=1.0,
            )
        )
    return records


def paper_like_usps() -> list[dict]:
    """Table 1's USPS ACC column, exactly (10 runs per method with the paper's mean and std)."""
    records = []
    for row in paper.reported_results():
        if (row["table"], row["dataset"], row["metric"]) == (
            "table1_kmeans_related",
            "USPS",
            "ACC",
        ):
            ref = paper.parse_model_label(row["model"])
            tradeoff = (
                None
                if ref.method in ("km", "ae-km")
                else paper.optimal_tradeoff(ref.method, "usps")
            )
            records += fake_runs(
                ref.method, "usps", runs_with(row["mean"], row["std"]) / 100, tradeoff=tradeoff
            )
    return records


def cell(table: pd.DataFrame, label: str, *column: str) -> Cell:
    """The cell of a row label and a column, ``("USPS", "ACC")`` or ``("USPS",)``."""
    row = table.xs(label, level=1).iloc[0]
    return row[column if len(column) > 1 else column[0]]


# ---------------------------------------------------------------- dkm.protocol.paper


def test_shipped_json_is_the_shared_copy() -> None:
    shipped = Path(paper.__file__).with_name("reported_results.json")
    if SHARED_JSON.exists():
        assert json.loads(shipped.read_text()) == json.loads(SHARED_JSON.read_text())
    assert len(paper.reported_results()) == 164


def test_paper_lookups() -> None:
    assert paper.reported("table1", "DKM^p", "usps", "acc") == (75.7, 1.3, 10)
    assert paper.reported("table1_kmeans_related", "dkm-p", "USPS", "ACC") == (75.7, 1.3, 10)
    assert paper.reported("cosine", "DKM^a_ce", "20news", "ari") == (32.6, 1.0, 10)
    assert paper.reported("friendliness", "DKM^a + KM", "usps", "acc") == (76.9, 4.9, 10)
    with pytest.raises(ValueError, match="reports no ARI"):
        paper.reported("table1", "DKM^p", "usps", "ari")
    with pytest.raises(ValueError, match="unknown paper table"):
        paper.reported("table9", "DKM^p", "usps", "acc")


def test_paper_names() -> None:
    assert paper.PAPER_SEEDS == (8905, 9129, 291, 4012, 1256, 6819, 4678, 6971, 1362, 575)
    assert paper.parse_model_label("DKM^p_ce") == paper.ModelRef("dkm-p", "cosine")
    assert paper.parse_model_label("DCN^p + KM") == paper.ModelRef("dcn-p", None, True)
    assert paper.parse_model_label("AE-KM").label == "AE-KM"
    assert paper.model_label("dkm-a", distance="euclidean") == "DKM^a_ee"
    assert {paper.method_id(label): label for label in paper.METHOD_LABELS.values()} == dict(
        paper.METHOD_LABELS
    )
    assert paper.dataset_id("20NEWS") == "20news" and paper.dataset_label("rcv1") == "RCV1"
    for bad in ("DKM^x", "DKM^a_xe", "KMEANS"):
        with pytest.raises(ValueError):
            paper.parse_model_label(bad)


def test_an_embedding_is_named_by_its_method_but_ae_km_s_is_the_autoencoder_s() -> None:
    assert paper.embedding_label("ae-km") == paper.AUTOENCODER_LABEL == "AE"
    assert [paper.embedding_label(m) for m in ("dcn-p", "dkm-a", "dkm-p")] == [
        "DCN^p", "DKM^a", "DKM^p"]
    with pytest.raises(ValueError, match="km has no embedding"):
        paper.embedding_label("km")
    with pytest.raises(ValueError, match="unknown method"):
        paper.embedding_label("ae")


def test_paper_tradeoffs_and_datasets() -> None:
    assert paper.optimal_tradeoff("dkm-p", "usps") == 1.0
    assert paper.optimal_tradeoff("idec-np", "RCV1") == 1e-4
    assert paper.tradeoff_name("idec-p") == "gamma"
    with pytest.raises(ValueError, match="no trade-off"):
        paper.optimal_tradeoff("km", "usps")
    with pytest.raises(ValueError, match="gives no optimal"):
        paper.optimal_tradeoff("dkm-pa", "usps")
    assert paper.dataset_statistics("MNIST") == {
        "dataset": "mnist",
        "samples": 70000,
        "classes": 10,
        "dimensions": 784,
    }


# ---------------------------------------------------------------- layout


def test_table1_layout() -> None:
    table = build("table1")
    assert list(table.index) == [
        ("", "KM"),
        ("", "AE-KM"),
        (WITHOUT, "DCN^np"),
        (WITHOUT, "DKM^a"),
        (WITH, "DCN^p"),
        (WITH, "DKM^p"),
    ]
    assert list(table.columns) == [
        (d, m) for d in ("MNIST", "USPS", "20NEWS", "RCV1") for m in ("ACC", "NMI")
    ]


@pytest.mark.parametrize(
    "name, rows, first_column",
    [
        ("table2", ["IDEC^np", "DKM^a", "IDEC^p", "DKM^p"], ("MNIST", "ACC")),
        ("ari1", ["KM", "AE-KM", "DCN^np", "DKM^a", "DCN^p", "DKM^p"], ("MNIST", "ARI")),
        ("ari2", ["IDEC^np", "DKM^a", "IDEC^p", "DKM^p"], ("MNIST", "ARI")),
        ("cosine", ["DKM^a_ee", "DKM^p_ee", "DKM^a_ce", "DKM^p_ce"], ("20NEWS", "ACC")),
        ("friendliness", ["AE-KM", "DCN^p + KM", "DKM^a + KM", "DKM^p + KM"], ("MNIST", "ACC")),
        (
            "tradeoff",
            ["λ (DKM^a)", "λ (DKM^p)", "λ (DCN^p)", "λ (DCN^np)", "γ (IDEC^p)", "γ (IDEC^np)"],
            "MNIST",
        ),
        ("datasets", ["#Samples", "#Classes", "Dimensions"], "MNIST"),
    ],
)
def test_other_layouts(name: str, rows: list[str], first_column) -> None:
    table = build(name)
    assert list(table.index.get_level_values(1)) == rows
    assert table.columns[0] == first_column


def test_every_paper_table_has_a_spec_matching_the_json() -> None:
    for name, spec in TABLES.items():
        if spec.paper_table is None:
            continue
        labels = {label for group in spec.groups for label in group.rows}
        in_json = {
            row["model"]
            for row in paper.reported_results()
            if row["table"] == paper.TABLE_KEYS[spec.paper_table]
        }
        assert labels == in_json, name


# ---------------------------------------------------------------- cells and marks


def test_cells_and_marks_follow_the_rule() -> None:
    records = paper_like_usps()
    table = build("table1", records)
    dkm_p = cell(table, "DKM^p", "USPS", "ACC")
    assert (dkm_p.text, dkm_p.bold, dkm_p.underline, dkm_p.note) == ("75.7±1.3", True, True, "")
    samples = {
        paper.method_id(label): list(cell(table, label, "USPS", "ACC").runs)
        for label in table.index.get_level_values(1)
    }
    expected = significance_marks(samples)
    for label in table.index.get_level_values(1):
        got = cell(table, label, "USPS", "ACC")
        assert (got.bold, got.underline) == (
            paper.method_id(label) in expected["bold"],
            paper.method_id(label) in expected["underline"],
        ), label
    ae_km, km = cell(table, "AE-KM", "USPS", "ACC"), cell(table, "KM", "USPS", "ACC")
    # As in the paper: AE-KM underlined, KM unmarked.
    assert (ae_km.text, ae_km.bold, ae_km.underline) == ("72.9±0.8", False, True)
    assert (km.text, km.bold, km.underline) == ("67.3±0.1", False, False)
    assert cell(table, "DKM^p", "MNIST", "ACC").text == "not run"


def test_tables_use_the_test_split_only() -> None:
    table = build("ari1", fake_runs("dkm-p", "usps", [0.80, 0.82], val_acc=[0.1, 0.1]))
    assert cell(table, "DKM^p", "USPS", "ARI").text == "71.0±1.4"  # test ARI = ACC - 0.1


def test_vs_paper_shows_the_papers_figures_exactly() -> None:
    table = build("table1", paper_like_usps(), vs_paper=True)
    target = cell(table, "DKM^p", "USPS", "ACC")
    assert str(target) == "75.7±1.3 (paper 75.7±1.3, consistent)"
    assert target.comparison.verdict == "consistent" and target.comparison.p_value == pytest.approx(
        1.0
    )
    for row in paper.reported_results():
        if row["table"] == "table1_kmeans_related":
            shown = cell(table, row["model"], row["dataset"], row["metric"])
            assert f"paper {row['mean']:.1f}±{row['std']:.1f}" in shown.note
    assert str(cell(table, "KM", "MNIST", "ACC")) == "not run (paper 53.5±0.3)"


def test_vs_paper_verdicts() -> None:
    records = fake_runs("dkm-p", "usps", runs_with(0.70, 0.01)) + fake_runs(
        "dkm-a", "usps", runs_with(0.9, 0.01)
    )
    table = build("table1", records, vs_paper=True)
    assert cell(table, "DKM^p", "USPS", "ACC").note == "(paper 75.7±1.3, worse)"
    assert cell(table, "DKM^a", "USPS", "ACC").note == "(paper 75.5±6.8, better)"


def test_missing_cells_and_reasons() -> None:
    records = fake_runs("dkm-p", "usps", [0.75, 0.76, 0.77])
    table = build("table1", records, missing_reason={"rcv1": "not run: data unavailable"})
    assert cell(table, "DKM^p", "RCV1", "ACC").text == "not run: data unavailable"
    assert cell(table, "DKM^p", "MNIST", "NMI").text == "not run"
    assert str(cell(table, "DKM^p", "USPS", "ACC")) == "76.0±1.0 (n=3)"
    everywhere = build("table2", [], missing_reason="skipped")
    assert {str(value) for value in everywhere.to_numpy().ravel()} == {"skipped"}


def test_single_run_cell() -> None:
    table = build("table1", fake_runs("dkm-p", "usps", [0.75]), vs_paper=True)
    shown = cell(table, "DKM^p", "USPS", "ACC")
    assert str(shown) == "75.0 (n=1, paper 75.7±1.3, consistent)"
    assert shown.comparison.test == "z" and shown.bold and not shown.underline


def test_duplicate_records_count_once() -> None:
    records = fake_runs("dkm-p", "usps", [0.75, 0.77])
    table = build("table1", records + records[:1])
    assert sorted(cell(table, "DKM^p", "USPS", "ACC").runs) == pytest.approx([75.0, 77.0])


def test_tables_leave_out_the_records_of_undeclared_methods() -> None:
    from dkm.protocol.results import config_hash

    declared = fake_runs("dkm-p", "usps", [0.75])
    plugin = {**declared[0], "method": "ae-gmm", "params": {"scale": 1.0}}
    plugin["config_hash"] = config_hash("usps", "ae-gmm", plugin["seed"], plugin["params"])
    table = build("methods", declared + [plugin])
    shown = list(table.index.get_level_values(1))
    assert "DKM^p" in shown and not [label for label in shown if "gmm" in label.lower()], shown


def test_line_search_selects_the_best_validation_acc() -> None:
    low = fake_runs("dkm-p", "usps", [0.60, 0.62], tradeoff=0.1, val_acc=[0.80, 0.80])
    high = fake_runs("dkm-p", "usps", [0.75, 0.77], tradeoff=1.0, val_acc=[0.60, 0.60])
    assert selected_tradeoff(records_to_dataframe(low + high)) == 0.1
    assert cell(build("table1", low + high), "DKM^p", "USPS", "ACC").text == "61.0±1.4"
    tradeoffs = build("tradeoff", low + high, vs_paper=True)
    assert str(cell(tradeoffs, "λ (DKM^p)", "USPS")) == "1e-1 (paper 1e+0, 2 of 8 values run)"
    assert str(cell(tradeoffs, "λ (DKM^p)", "MNIST")) == "1e+0 (paper)"
    whole_grid = [run for value in TRADEOFF_GRID
                  for run in fake_runs("dkm-p", "usps", [0.7], tradeoff=value, val_acc=[0.7])]
    assert str(cell(build("tradeoff", low + whole_grid, vs_paper=True), "λ (DKM^p)",
                    "USPS")) == "1e-1 (paper 1e+0, whole grid on 1 of 2 seeds)"
    assert str(cell(tradeoffs, "γ (IDEC^np)", "RCV1")) == "1e-4 (paper)"
    assert tradeoffs.attrs["scales"] == "1"


def test_selected_tradeoffs_per_dataset_method_and_distance() -> None:
    low = fake_runs("dkm-p", "usps", [0.60, 0.62], tradeoff=0.1, val_acc=[0.80, 0.80])
    high = fake_runs("dkm-p", "usps", [0.75, 0.77], tradeoff=1.0, val_acc=[0.60, 0.60])
    tie_low = fake_runs("dcn-p", "digits", [0.50, 0.52], tradeoff=0.01, val_acc=[0.70, 0.70])
    tie_high = fake_runs("dcn-p", "digits", [0.90, 0.92], tradeoff=10.0, val_acc=[0.70, 0.70])
    single = fake_runs("idec-p", "usps", [0.70], tradeoff=1e-3, val_acc=[0.65])
    cosine = fake_runs("dkm-p", "usps", [0.40], tradeoff=10.0, distance="cosine")
    baseline = fake_runs("ae-km", "usps", [0.70], tradeoff=None)
    records = low + high + tie_low + tie_high + single + cosine + baseline + low[:1]

    table = selected_tradeoffs(records)
    assert tuple(table.columns) == SELECTED_TRADEOFF_COLUMNS
    rows = table.set_index(["dataset", "method", "distance"])
    assert list(rows.index) == [
        ("digits", "dcn-p", "euclidean"),
        ("usps", "dkm-p", "cosine"),
        ("usps", "dkm-p", "euclidean"),
        ("usps", "idec-p", "euclidean"),
    ]
    chosen = rows.loc["usps", "dkm-p", "euclidean"]
    assert (chosen["selected"], chosen["values"], chosen["runs"]) == (0.1, 2, 2)
    assert chosen["val_acc"] == pytest.approx(0.80) and chosen["test_acc"] == pytest.approx(0.61)
    assert chosen["tradeoff_name"] == "lambda"
    assert rows.loc["digits", "dcn-p", "euclidean"]["selected"] == 0.01  # a tie: the smaller
    assert rows.loc["usps", "idec-p", "euclidean"][["tradeoff_name", "values"]].tolist() == [
        "gamma",
        1,
    ]
    # The same choice as the result tables and the trade-off table.
    assert selected_tradeoff(records_to_dataframe(low + high)) == chosen["selected"]
    assert str(cell(build("tradeoff", records), "λ (DKM^p)", "USPS")) == "1e-1 (2 of 8 values run)"


def test_selected_tradeoffs_of_no_line_search_is_empty() -> None:
    assert selected_tradeoffs([]).empty
    table = selected_tradeoffs(fake_runs("km", "usps", [0.6], tradeoff=None))
    assert table.empty and tuple(table.columns) == SELECTED_TRADEOFF_COLUMNS


def test_friendliness_reads_kmeans_on_embedding() -> None:
    records = fake_runs("dkm-p", "usps", [0.70, 0.72], km_acc=[0.80, 0.82]) + fake_runs(
        "ae-km", "usps", [0.60, 0.62], tradeoff=None
    )
    table = build("friendliness", records)
    assert cell(table, "DKM^p + KM", "USPS", "ACC").text == "81.0±1.4"
    assert cell(table, "AE-KM", "USPS", "NMI").text == "56.0±1.4"
    assert cell(table, "DKM^a + KM", "USPS", "ACC").text == "not run"
    assert (
        cell(table, "DKM^p + KM", "USPS", "ACC").bold
        and not cell(table, "AE-KM", "USPS", "ACC").bold
    )


def test_cosine_rows_filter_on_distance() -> None:
    records = fake_runs("dkm-a", "20news", [0.45, 0.46], distance="euclidean") + fake_runs(
        "dkm-a", "20news", [0.51, 0.52], distance="cosine"
    )
    table = build("cosine", records)
    assert cell(table, "DKM^a_ee", "20NEWS", "ACC").text == "45.5±0.7"
    assert cell(table, "DKM^a_ce", "20NEWS", "ACC").text == "51.5±0.7"
    assert cell(table, "DKM^a_ce", "20NEWS", "ACC").bold
    assert not cell(table, "DKM^a_ee", "20NEWS", "ACC").bold
    assert cell(build("table1", records), "DKM^a", "20NEWS", "ACC").text == "45.5±0.7"


def test_scale_label() -> None:
    records = fake_runs("dkm-p", "usps", [0.75, 0.76], scale=0.1) + fake_runs(
        "km", "mnist", [0.5], scale=0.25
    )
    table = build("table1", records)
    assert table.attrs["scales"] == "0.1, 0.25"
    assert "a fraction of the paper's epochs (scale 0.1, 0.25; 1 is the paper's)" in render(table)
    assert build("table1").attrs["scales"] == "none"
    assert "run" not in render("tradeoff")  # a table without runs says nothing of their epochs


def test_datasets_table() -> None:
    ours = [
        {"dataset": "usps", "samples": 9298, "classes": 10, "dimensions": 256},
        {"dataset": "mnist", "samples": 70000, "classes": 10, "dimensions": 784},
    ]
    table = build(
        "datasets", ours, vs_paper=True, missing_reason={"rcv1": "not run: data unavailable"}
    )
    assert str(cell(table, "#Samples", "USPS")) == "9,298 (paper 9,298)"
    assert str(cell(table, "Dimensions", "20NEWS")) == "not loaded (paper 2,000)"
    assert cell(table, "#Classes", "RCV1").text == "not run: data unavailable"
    with pytest.raises(ValueError, match="lack the keys"):
        build("datasets", [{"dataset": "usps", "samples": 1}])


def test_build_errors() -> None:
    with pytest.raises(ValueError, match="unknown table"):
        build("table3")
    bad = fake_runs("dkm-p", "usps", [0.7])[0] | {"seed": 1}
    with pytest.raises(ValueError, match="config_hash"):
        build("table1", [bad])


# ---------------------------------------------------------------- rendering


def test_markdown_rendering() -> None:
    text = render(build("table1", paper_like_usps()))
    lines = text.splitlines()
    assert lines[0].startswith("**Table 1")
    assert lines[2].startswith("| Model | MNIST ACC | MNIST NMI | USPS ACC |")
    assert f"| *{WITHOUT}* |" in text
    assert "**_75.7±1.3_**" in text and "| _72.9±0.8_ |" in text and "| 67.3±0.1 |" in text
    assert "Italic (the paper's underline): no significant difference" in text


def test_html_rendering() -> None:
    text = render("table1", "html", records=paper_like_usps(), vs_paper=True)
    assert text.startswith('<table class="paper-table">') and text.rstrip().endswith("</table>")
    assert '<th colspan="2">MNIST</th>' in text and "<td>DKM<sup>p</sup></td>" in text
    assert "<b><u>75.7±1.3</u></b> (paper 75.7±1.3, consistent)" in text
    assert f'<td colspan="9"><i>{WITHOUT}</i></td>' in text
    assert "p &gt; 0.05" in text


def test_latex_rendering() -> None:
    text = render(
        "cosine", "latex", records=fake_runs("dkm-a", "20news", [0.45, 0.46], distance="cosine")
    )
    assert r"\begin{tabular}{@{}lccc@{}}" in text and r"\bottomrule" in text
    assert (
        r"Model & ACC & NMI & ARI \\" in text
    )  # the single dataset is in the title, not a header row
    assert r"DKM$^{\mathrm{a}}_{\mathrm{ce}}$ & \textbf{45.5$\pm$0.7}" in text
    table1 = render("table1", "latex", records=paper_like_usps())
    assert r"& \multicolumn{2}{c}{MNIST} &" in table1 and r"\cmidrule(l){2-9}" in table1
    assert r"\textbf{\underline{75.7$\pm$1.3}}" in table1
    assert r"\multicolumn{9}{c}{" + WITHOUT + r"} \\" in table1
    assert "$>$ 0.05" in table1


def test_render_tradeoff_and_datasets_in_every_format() -> None:
    for fmt in ("markdown", "html", "latex"):
        assert "1e-4" in render("tradeoff", fmt)
        assert "Dimensions" in render("datasets", fmt)
    assert r"$\lambda$ (DKM$^{\mathrm{a}}$)" in render("tradeoff", "latex")
    assert r"\#Samples" in render("datasets", "latex")


def test_render_errors() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        render("table1", "rst")
    with pytest.raises(ValueError, match="only accepted with a table name"):
        render(build("table1"), records=[])
    with pytest.raises(ValueError, match="group, label"):
        render(pd.DataFrame({"a": [1]}))


def test_disagreements_list_every_better_or_worse_cell_and_nothing_else() -> None:
    from dkm.book.tables import disagreements

    # the paper's own USPS ACC everywhere (consistent), except DKM^a far above it
    records = [r for r in paper_like_usps() if r["method"] != "dkm-a"] + fake_runs(
        "dkm-a", "usps", runs_with(0.9, 0.01), tradeoff=paper.optimal_tradeoff("dkm-a", "usps"))
    found = disagreements(records, names=["table1"])
    acc = found[found.metric == "ACC"]
    assert list(acc.model) == ["DKM^a"] and list(acc.verdict) == ["better"]
    assert acc.iloc[0].ours == "90.0±1.0" and acc.iloc[0].paper == "75.5±6.8"
    assert acc.iloc[0].p_value < 0.05 and acc.iloc[0].difference == 14.5
    # NMI of the fake runs is ACC - 5 points: every method disagrees there, all listed
    assert set(found[found.metric == "NMI"].verdict) <= {"better", "worse"}
    assert disagreements([], names=["table1"]).empty


def test_comparisons_keep_the_consistent_cells_that_disagreements_leave_out() -> None:
    from dkm.book.tables import comparisons, disagreements

    records = [r for r in paper_like_usps() if r["method"] != "dkm-a"] + fake_runs(
        "dkm-a", "usps", runs_with(0.9, 0.01), tradeoff=paper.optimal_tradeoff("dkm-a", "usps"))
    compared = comparisons(records, names=["table1"])
    acc = compared[compared.metric == "ACC"]
    assert set(acc.model) == {"KM", "AE-KM", "DCN^np", "DCN^p", "DKM^a", "DKM^p"}
    assert set(acc[acc.model != "DKM^a"].verdict) == {"consistent"}
    # 14.5 points above 75.5 ± 6.8 stays a disagreement however the paper's figure is rounded
    far = acc[acc.model == "DKM^a"].iloc[0]
    assert far.p_value < far.p_within_rounding < 0.05
    # "consistent" is an interval of ours − paper that holds zero
    assert ((compared.low < 0) & (compared.high > 0)).equals(compared.verdict == "consistent")
    found = disagreements(records, names=["table1"])
    assert found.equals(compared[compared.verdict != "consistent"].reset_index(drop=True))
    assert comparisons([], names=["table1"]).empty


def test_typeset_writes_the_papers_labels_with_their_scripts():
    from dkm.book.tables import typeset

    assert typeset("DKM^a_ce < DCN^np & KM") == \
        "DKM<sup>a</sup><sub>ce</sub> &lt; DCN<sup>np</sup> &amp; KM"
    assert typeset("DKM^p + KM", "latex") == r"DKM$^{\mathrm{p}}$ + KM"
    with pytest.raises(ValueError, match="unknown format"):
        typeset("KM", "rtf")


def test_the_compact_html_shows_our_figure_and_its_mark_on_one_line_and_the_papers_below():
    from dkm.book.tables import build, render

    records = fake_runs("dkm-a", "usps", runs_with(0.9, 0.01),
                        tradeoff=paper.optimal_tradeoff("dkm-a", "usps"))
    html = render(build("table1", records, vs_paper=True), fmt="html-compact")
    paper_acc = paper.reported("table1", "DKM^a", "usps", "acc")
    assert '<td><u>90.0±1.0</u>&nbsp;<span class="verdict-better">▲</span></td>' in html
    # the paper prints DKM^a's USPS ACC bold and underlined
    assert (f'<small style="color:#666"><b><u>{paper_acc[0]:.1f}±{paper_acc[1]:.1f}</u></b>'
            '</small>') in html
    assert '<tr class="paper-figures"><td><small style="color:#666">paper</small></td>' in html
    assert "DKM<sup>a</sup>" in html and "In parentheses" not in html and "▲ / ▼" in html
    assert "<br>" not in html.split("</caption>")[1]
    km = paper.reported("table1", "KM", "mnist", "acc")
    assert f'<small style="color:#666">{km[0]:.1f}±{km[1]:.1f}</small>' in html


def test_the_compact_html_names_the_runs_only_where_they_are_not_the_papers_ten():
    from dkm.book.tables import build, render

    records = fake_runs("dkm-a", "usps", runs_with(0.9, 0.01, n=3),
                        tradeoff=paper.optimal_tradeoff("dkm-a", "usps"))
    html = render(build("table1", records, vs_paper=True), fmt="html-compact")
    assert "&nbsp;<small>n=3</small></td>" in html and "n=10" not in html


def test_the_compact_html_shows_a_chosen_tradeoff_and_the_papers_below_it():
    from dkm.book.tables import build, render

    low = fake_runs("dkm-p", "usps", [0.60, 0.62], tradeoff=1e-3, val_acc=[0.80, 0.80])
    high = fake_runs("dkm-p", "usps", [0.75, 0.77], tradeoff=1.0, val_acc=[0.60, 0.60])
    html = render(build("tradeoff", low + high, vs_paper=True), fmt="html-compact")
    assert '<td>1e-3</td>' in html
    assert '<td><small style="color:#666">1e+0, 2 of 8 values run</small></td>' in html
    assert "<td>1e+0&nbsp;<small>(the paper's)</small></td>" in html  # MNIST: no search


def test_line_search_table_writes_the_summary_for_a_reader():
    summary = pd.DataFrame.from_dict({
        "dkm-p": dict(tradeoff_name="lambda", chosen=0.1, paper=1.0, values=8, runs=3,
                      val_chosen=72.0, test_chosen=71.26, std_chosen=1.04, test_paper=70.0,
                      std_paper=math.nan, best=10.0, test_best=73.0),
        "dkm-pa": dict(tradeoff_name="lambda", chosen=1.0, paper=math.nan, values=8, runs=3,
                       val_chosen=70.0, test_chosen=69.0, std_chosen=0.5, test_paper=math.nan,
                       std_paper=math.nan, best=1.0, test_best=69.0),
    }, orient="index")
    table = tables.line_search_table(summary, "usps")
    assert list(table.index) == ["DKM<sup>p</sup>", "DKM<sup>pa</sup>"]
    row = table.loc["DKM<sup>p</sup>"]
    # no-break spaces: a cell's figures stay on one line
    assert row["test ACC at chosen"] == "71.3\u00a0±\u00a01.0" and row["test ACC at paper's"] == "70.0"
    assert row["best test ACC (at)"] == "73.0\u00a0(10)"
    assert row["paper (USPS)"] == "1" and row["values × runs"] == "8 × 3"
    assert table.loc["DKM<sup>pa</sup>", "test ACC at paper's"] == "—"
    assert row["chosen against paper's"] == "1 decade below"
    assert table.loc["DKM<sup>pa</sup>", "chosen against paper's"] == "—"


def test_power_of_ten_writes_the_exponent_as_a_superscript():
    assert tables.power_of_ten(6.2e-08) == "6 × 10⁻⁸"
    assert tables.power_of_ten(2384.0, digits=1) == "2.4 × 10³"
    assert tables.power_of_ten(0.0024) == "2 × 10⁻³"
    assert tables.power_of_ten(1.5e12) == "2 × 10¹²"


def test_the_methods_table_has_every_recorded_method_then_kmeans_on_their_embeddings():
    records = (fake_runs("dkm-p", "wine", [0.8, 0.9], km_acc=[0.7, 0.8])
               + fake_runs("km", "wine", [0.5, 0.6]) + fake_runs("ae-km", "wine", [0.6, 0.6]))
    table = build("methods", records)
    assert list(table.index) == [("", "KM"), ("", "AE-KM"), ("", "DKM^p"),
                                 (tables.spec.KMEANS_ON_EMBEDDING_HEADING, "DKM^p + KM")]
    assert str(table.loc[(tables.spec.KMEANS_ON_EMBEDDING_HEADING, "DKM^p + KM"),
                         ("wine", "ACC")]) == "75.0±7.1 (n=2)"
    assert list(build("methods", fake_runs("km", "wine", [0.5])).index) == [("", "KM")]


#: The paper's Table 2 as printed (deep-kmeans.tex): each row's marks per column, MNIST, USPS,
#: 20NEWS, RCV1, ACC then NMI ("b" bold, "u" underlined).
PRINTED_TABLE2_MARKS = {
    "IDEC^np": ["", "", "", "", "", "", "bu", "bu"],
    "DKM^a": ["u", "u", "bu", "u", "u", "u", "u", "u"],
    "IDEC^p": ["b", "b", "bu", "", "", "", "bu", "bu"],
    "DKM^p": ["bu", "", "bu", "b", "b", "b", "bu", "bu"],
}


def test_the_papers_figures_carry_the_marks_its_table_2_prints_computed_from_its_figures():
    table = build("table2", [], vs_paper=True)
    computed = {
        model: ["".join(style[0] for style in ("bold", "underline") if style in cell.paper_marks)
                for cell in row]
        for (_, model), row in table.iterrows()
    }
    assert computed == PRINTED_TABLE2_MARKS
    html = render(table, fmt="html-compact")
    assert '<small style="color:#666"><b><u>84.0±2.2</u></b></small>' in html  # DKM^p, MNIST ACC
    assert '<small style="color:#666"><b>85.7±2.4</b></small>' in html  # IDEC^p, MNIST ACC
    assert '<small style="color:#666">79.6±0.9</small>' in html  # DKM^p, MNIST NMI: unmarked
    assert "computed from the paper&#x27;s figures" in html


def test_the_papers_marks_follow_its_figures_not_a_list():
    """Moving a figure moves the marks: the paper's DCN^p 20NEWS ACC, 49.2 ± 2.9, is bold
    (not distinguishable from DKM^p's 51.2 ± 2.8); 40 ± 2.9 would not be."""
    from dkm.book.stats import DEFAULT_GROUPS, marks_from_figures

    figures = {"dkm-p": (51.2, 2.8, 10), "dcn-p": (49.2, 2.9, 10), "dkm-a": (44.8, 2.4, 10)}
    assert marks_from_figures(figures)["bold"] == {"dkm-p", "dcn-p"}
    figures["dcn-p"] = (40.0, 2.9, 10)
    assert marks_from_figures(figures, DEFAULT_GROUPS)["bold"] == {"dkm-p"}
    assert marks_from_figures({"dkm-p": (51.2, 2.8, 1), "dcn-p": (51.2, 2.8, 10)})["bold"] \
        == {"dkm-p"}  # a single run is never tested
