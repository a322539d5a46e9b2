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
