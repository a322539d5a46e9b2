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


#: A line that TensorFlow's C++ code (absl) writes, or tqdm's warning without ipywidgets.
NATIVE_LOG_LINE = re.compile(r"^[IWEF]\d{4} |absl::|oneDNN|cuda|IProgress", re.M | re.I)


def _run_experiments_chapter(folder: Path, **parameters) -> list:
    """Papermill on chapter 10 from ``folder``, outside the repository, with the default store
    (``folder/experiments.jsonl``); the executed notebook's outputs, cell by cell."""
    import nbformat
    import papermill

    out = folder / "out.ipynb"
    papermill.execute_notebook(str(NOTEBOOKS / "10_your_data.ipynb"), str(out),
                               parameters=parameters, kernel_name="python3", cwd=str(folder),
                               progress_bar=False)
    return [cell.get("outputs", []) for cell in nbformat.read(out, as_version=4).cells]


def _texts(outputs: list) -> list[str]:
    """The text of every output: a stream's, a result's plain text and HTML (not its images)."""
    return [output.get("text") or "".join(str(output.get("data", {}).get(kind, ""))
                                          for kind in ("text/plain", "text/html"))
            for cell in outputs for output in cell]


def _images(outputs: list) -> int:
    return sum("image/png" in output.get("data", {}) for cell in outputs for output in cell)


def _is_clean(outputs: list, folder: Path) -> None:
    """No TensorFlow log line, no warning on stderr, no absolute path of ``folder``."""
    streams = [output for cell in outputs for output in cell if output.get("name") == "stderr"]
    assert not streams, [output["text"][:300] for output in streams]
    noisy = [text[:300] for text in _texts(outputs) if NATIVE_LOG_LINE.search(text)]
    assert not noisy, noisy
    assert not [text for text in _texts(outputs) if str(folder) in text], "an absolute path"


@pytest.mark.slow
def test_papermill_answers_the_papers_questions_on_a_labelled_user_file(tmp_path):
    """`papermill notebooks/10_your_data.ipynb out.ipynb -p dataset mine.npz -p seeds 3`: the
    scores over the seeds, the claims' verdicts, the scores' figure and the embedding's."""
    import numpy as np
    from sklearn.datasets import load_digits

    digits = load_digits()
    np.savez(tmp_path / "mine.npz", X=digits.data[:300] / 16, y=digits.target[:300])
    outputs = _run_experiments_chapter(
        tmp_path, dataset=str(tmp_path / "mine.npz"), seeds=3, scale=0.02,
        methods=["km", "ae-km", "dcn-p", "dkm-p"])
    texts = "\n".join(_texts(outputs))
    assert "Every method in the records" in texts and "DKM<sup>p</sup> + KM" in texts
    assert "The paper&#x27;s claims on mine" in texts or "The paper's claims on mine" in texts
    assert re.search(r"<td>(holds|fails|inconclusive)</td>", texts)
    assert "not testable" not in texts                      # three seeds: every claim decided
    assert _images(outputs) >= 4   # the scores, the embedding, the clusters' shares, the losses
    _is_clean(outputs, tmp_path)


@pytest.mark.slow
def test_papermill_runs_the_experiments_chapter_on_an_unlabelled_user_file(tmp_path):
    """`papermill notebooks/10_your_data.ipynb out.ipynb -p dataset file.npz -p n_clusters 5
    -p methods km,dkm-p`: the records carry no metrics, the page shows what needs no labels."""
    import numpy as np
    from sklearn.datasets import load_digits

    np.savez(tmp_path / "mine.npz", X=load_digits().data[:300] / 16)
    outputs = _run_experiments_chapter(   # the methods as the command line gives them
        tmp_path, dataset=str(tmp_path / "mine.npz"), n_clusters=5, methods="km,dkm-p",
        seeds=1, scale=0.02)
    store = tmp_path / "experiments.jsonl"   # the current folder's, outside a repository
    lines = store.read_text().splitlines()
    assert len(lines) == 2 and all('"metrics": null' in line for line in lines)
    texts = "\n".join(_texts(outputs))
    assert "unlabelled" in texts and "Every method in the records" not in texts
    assert "claims on mine" not in texts
    assert _images(outputs) == 3   # the embedding by cluster, the clusters' shares, the losses
    _is_clean(outputs, tmp_path)


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
WRITTEN_PROSE = ["../book/intro.md", "10_your_data.md", "06_results.md", "07_representations.md",
                 "08_lambda_search.md", "11_reproducing.md", "09_ablations.md"]
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
