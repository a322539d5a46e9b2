"""Every chapter's MyST Markdown and its paired .ipynb hold the same cells."""
from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

# the repository root (notebooks/conftest.py shares tests/conftest.py's module name, so
# the test modules do not import from either)
REPO_ROOT = Path(__file__).resolve().parents[1]
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
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(   # run outside the repository, with the default store
        str(NOTEBOOKS / "06_experiments.ipynb"), str(out),
        parameters=dict(dataset=str(data), n_clusters=5, methods=["km", "dkm-p"], seeds=1,
                        scale=0.02),
        kernel_name="python3", cwd=str(tmp_path), progress_bar=False,
    )
    store = tmp_path / "experiments.jsonl"   # the current folder's, outside a repository
    lines = store.read_text().splitlines()
    assert len(lines) == 2 and all('"metrics": null' in line for line in lines)


INLINE = "%matplotlib inline"


def _draws(cell) -> bool:
    return cell.cell_type == "code" and "plt." in cell.source


#: Every executed page: the chapters and the front page, which draws a figure too.
PAGES = [*SOURCES, REPO_ROOT / "book" / "intro.md"]


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.name)
def test_a_chapter_that_draws_sets_the_inline_backend_before_its_first_figure(source):
    """Under MPLBACKEND=Agg (headless servers, CI images) a kernel would draw nothing."""
    cells = jupytext.read(source).cells
    drawing = [i for i, cell in enumerate(cells) if _draws(cell)]
    if not drawing:
        pytest.skip("the chapter draws no figure")
    inline = [i for i, cell in enumerate(cells)
              if cell.cell_type == "code" and INLINE in cell.source.splitlines()]
    assert inline and inline[0] < drawing[0], f"{source.name}: no `{INLINE}` before the first figure"
    assert "remove-cell" in cells[inline[0]].metadata.get("tags", ()), "plumbing is hidden"


def test_the_inline_magic_draws_under_mplbackend_agg(monkeypatch):
    """The premise of the image check (notebooks/conftest.py): with MPLBACKEND=Agg a kernel
    shows a figure only after `%matplotlib inline`."""
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("MPLBACKEND", "Agg")
    draw = "import matplotlib.pyplot as plt\nplt.plot([0, 1])\nplt.show()"

    def images(*sources: str) -> int:
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
        NotebookClient(notebook, kernel_name="python3", timeout=60).execute()
        return sum("image/png" in out.get("data", {}) for cell in notebook.cells
                   for out in cell.outputs)

    assert images(draw) == 0
    assert images(INLINE, draw) == 1


#: Chapters whose prose is written in their Markdown: numbers are glued, each data-dependent
#: sentence is checked by a hidden assertion, and no code cell writes a sentence.
WRITTEN_PROSE = ["../book/intro.md", "07_results.md", "08_representations.md", "09_lambda_search.md",
                 "10_reproducing.md", "11_ablations.md"]
#: What a code cell that assembles prose looks like: a Markdown object built from anything but a
#: table's ``.to_markdown(...)`` (an f-string, a join, a concatenation, a function's text), and
#: the {glue:md} role that pastes such an object into the text.
ASSEMBLED_PROSE = re.compile(r"Markdown\((?!\s*\w+\.to_markdown\()|\{glue:md\}")


@pytest.mark.parametrize("name", WRITTEN_PROSE)
def test_a_chapter_with_written_prose_assembles_no_sentence_in_code(name):
    """A sentence is Markdown in the chapter, not a string a code cell builds (issue 46)."""
    cells = jupytext.read(NOTEBOOKS / name).cells
    assembled = [line.strip() for cell in cells for line in cell.source.splitlines()
                 if ASSEMBLED_PROSE.search(line)]
    assert not assembled, f"{name}: lines that assemble prose: {assembled}"


def test_the_prose_check_catches_the_patterns_it_is_for():
    for source in ['glue("x", Markdown(f"On {d} it holds"))', 'display(Markdown(" ".join(lead)))',
                   'Markdown("; ".join(items))', "{glue:md}`reading`", 'Markdown(text(row))',
                   'display(Markdown("Seconds per run:\\n\\n" + table.to_markdown()))']:
        assert ASSEMBLED_PROSE.search(source), source
    for source in ['glue("x", 1.5, display=False)', "display(Markdown(table.to_markdown()))"]:
        assert not ASSEMBLED_PROSE.search(source), source


def _prose_in_code_blocks(markdown: str) -> list[str]:
    """Lines of glued prose inside a plain code block (a stray fence turns the text after it
    into code), and code cells swallowed by a Markdown cell."""
    found, block = [], None
    for line in markdown.splitlines():
        if line.startswith("```"):
            if block is None:
                block = line.strip() == "```"  # a plain block, no language or directive
            else:
                block = None
            if "{code-cell}" in line:
                found.append(line)
        elif block and "{glue:" in line:
            found.append(line.strip())
    return found


@pytest.mark.parametrize("name", WRITTEN_PROSE)
def test_no_stray_fence_turns_a_chapters_prose_into_code(name):
    cells = jupytext.read(NOTEBOOKS / name).cells
    found = [line for cell in cells if cell.cell_type == "markdown"
             for line in _prose_in_code_blocks(cell.source)]
    assert not found, f"{name}: prose in a code block: {found}"


def test_the_fence_check_finds_a_stray_fence():
    stray = "```\n\n**On USPS** {glue:text}`usps_cells` cells\n\n```{code-cell} ipython3\nx = 1\n```\n"
    assert _prose_in_code_blocks(stray) == ["**On USPS** {glue:text}`usps_cells` cells",
                                            "```{code-cell} ipython3"]
    assert _prose_in_code_blocks("Text {glue:text}`n` here.\n\n```python\nprint(1)\n```\n") == []
