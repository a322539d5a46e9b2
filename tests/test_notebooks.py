"""Every chapter's MyST Markdown and its paired .ipynb hold the same cells."""
from __future__ import annotations

import jupytext
import pytest

from conftest import REPO_ROOT

NOTEBOOKS = REPO_ROOT / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("*.md"))


def _cells(notebook) -> list[tuple[str, str, tuple[str, ...]]]:
    return [
        (cell.cell_type, cell.source.strip(), tuple(cell.metadata.get("tags", ())))
        for cell in notebook.cells
    ]


def test_there_are_chapters():
    assert SOURCES, "notebooks/ holds no chapter"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_markdown_and_notebook_are_in_sync(source):
    paired = source.with_suffix(".ipynb")
    assert paired.exists(), f"{paired.name} is missing: run `jupytext --sync notebooks/{source.name}`"
    assert _cells(jupytext.read(source)) == _cells(jupytext.read(paired)), (
        f"{source.name} and {paired.name} differ: run `jupytext --sync notebooks/{source.name}`"
    )


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_every_chapter_has_a_parameters_cell_and_a_kernelspec(source):
    notebook = jupytext.read(source.with_suffix(".ipynb"))
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    assert any("parameters" in c.metadata.get("tags", ()) for c in notebook.cells)


@pytest.mark.slow
def test_papermill_runs_the_experiments_chapter_on_an_unlabelled_user_file(tmp_path):
    """`papermill notebooks/06_experiments.ipynb out.ipynb -p dataset file.npz -p n_clusters 5`."""
    import numpy as np
    import papermill
    from sklearn.datasets import load_digits

    data = tmp_path / "mine.npz"
    np.savez(data, X=load_digits().data[:300] / 16)
    store = tmp_path / "runs.jsonl"
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOKS / "06_experiments.ipynb"), str(out),
        parameters=dict(dataset=str(data), n_clusters=5, methods=["km", "dkm-p"], seeds=1,
                        scale=0.02, results=str(store)),
        kernel_name="python3", cwd=str(NOTEBOOKS), progress_bar=False,
    )
    lines = store.read_text().splitlines()
    assert len(lines) == 2 and all('"metrics": null' in line for line in lines)
