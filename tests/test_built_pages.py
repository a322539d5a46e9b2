"""What a reader must not find on a page: the checks of book/_ext/page_checks.py, and the
chapters' sources held to them.

``make test`` does not build the book: the built pages are checked by ``make book`` (the
extension warns, ``-W`` fails the build) and by ``python book/_ext/page_checks.py _build/html``.
Here the checks themselves are tested on pages that hold each fault, the chapters' Markdown is
checked as it is written, and nbval checks every executed chapter's outputs
(``notebooks/conftest.py``).
"""
from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from page_checks import (  # noqa: E402
    CHAPTER_NUMBER, CODE, OUTPUT, PROSE, TABLE, _read, html_faults, main, markdown_faults,
    output_faults, plots_or_glues, site_faults, text_faults,
)

#: Every page of the book written in Markdown: the chapters and the front page.
PAGES = sorted((ROOT / "notebooks").glob("*.md")) + sorted((ROOT / "book").glob("*.md"))
#: Tags under which a parameters cell's code is not shown open on its page.
HIDDEN = {"hide-input", "remove-input", "remove-cell"}
#: Tags under which a cell's code is folded or not on the page at all.
NOT_SHOWN = HIDDEN | {"hide-cell"}


def _kinds(faults) -> list[str]:
    return sorted(fault.kind for fault in faults)


def _page(article: str) -> str:
    """A built page: the theme's navigation around the article."""
    return (f"<html><head><title>x_y</title><script>var a_b = '/tmp/'</script></head><body>"
            f"<nav>dkm-p /home/x</nav><article class='bd-article'>{article}</article></body></html>")


@pytest.mark.parametrize("text, kind", [
    ("ACC 0.734512 on digits", "decimals"),
    ("min w −0.0000", "negative zero"),
    ("a difference of -0.00 points", "negative zero"),
    ("−0 points", "negative zero"),
    ("min w -0.0e+00", "negative zero"),
    ("DKM^p (dkm-p) beats it", "method id"),
    ("the ae-km runs", "method id"),
    ("every wall_time_s is summed", "snake_case"),
    ("1 cluster(s) used", "plural in parentheses"),
    ("written to /work/main/_build/records", "local path"),
    ("see /home/me/data", "local path"),
])
def test_each_fault_is_found_in_prose(text, kind):
    assert _kinds(text_faults(text, PROSE)) == [kind]


@pytest.mark.parametrize("text", [
    "ACC 73.70 %, NMI 0.679", "−0.4 points", "−0.01 and +0.3", "0 of 10 seeds", "DKM^p and AE-KM",
    "k-means on a 2026-11-25 record", "the sharp file (usps-sharp is not a method)",
    "a relative error of 6e-08", "a weight of -1.1e-03", "from −1 to 1", "the clusters used", "~/data and ./x/tmp/",
])
def test_what_reads_well_is_no_fault(text):
    assert text_faults(text, PROSE) == []


def test_code_is_exempt_from_every_check_but_the_local_paths():
    code = "model.fit(X, wall_time_s=0.123456789, method='dkm-p')  # -0.0 cluster(s)"
    assert text_faults(code, CODE) == []
    assert _kinds(text_faults("open('/tmp/x.npz')", CODE)) == ["local path"]


def test_outputs_are_not_held_to_the_prose_s_names():
    """A printed value may be a programmer's name; its number format is still the reader's."""
    assert text_faults("scale_factor = 2", OUTPUT) == []
    assert _kinds(text_faults("loss 0.1234567", OUTPUT)) == ["decimals"]


def test_a_built_page_is_read_in_its_article_only_with_code_and_formulas_apart():
    article = ("<p>Seconds per run: <code>wall_time_s</code>, the <span class='math'>"
               "\\(x_{i} = -0.0\\)</span> formula.</p>"
               "<div class='cell docutils container'><div class='cell_input docutils container'>"
               "<pre>seconds = 0.1234567  # dkm-p</pre></div>"
               "<div class='cell_output docutils container'><pre>loss 0.1234567</pre>"
               "<table><tr><th>ae-km</th><td>−0.0000</td></tr></table></div></div>")
    faults = html_faults(_page(article))
    assert sorted((f.kind, f.place) for f in faults) == [
        ("decimals", OUTPUT), ("method id", TABLE), ("negative zero", TABLE)]


def test_a_sentence_split_by_inline_markup_is_read_whole():
    faults = html_faults(_page("<p>1 cluster<span>(s)</span> used</p>"))
    assert _kinds(faults) == ["plural in parentheses"]


def test_a_parameters_cell_is_a_fault_unless_removed_or_collapsed():
    shown = ("<div class='cell tag_parameters docutils container'>"
             "<div class='cell_input docutils container'><pre>seed = 0</pre></div></div>")
    collapsed = ("<div class='cell tag_parameters tag_hide-input docutils container'>"
                 "<details class='hide above-input'><summary>Show code cell source</summary>"
                 "<div class='cell_input docutils container'><pre>seed = 0</pre></div>"
                 "</details></div>")
    removed = "<div class='cell tag_parameters tag_remove-input docutils container'></div>"
    assert _kinds(html_faults(_page(shown))) == ["parameter cell"]
    assert html_faults(_page(collapsed)) == [] and html_faults(_page(removed)) == []


def test_executed_outputs_are_checked_as_their_page_shows_them():
    table = "<table><tr><td>0.1234567</td></tr></table>"
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": "3 new run(s) in /tmp/x.jsonl\n"},
        {"output_type": "execute_result", "data": {"text/html": table, "text/plain": "x_y"}},
        {"output_type": "display_data", "data": {"text/markdown": "| a |\n|---|\n| dcn-np |"}},
        {"output_type": "display_data", "data": {"text/plain": "'dkm-p'"},
         "metadata": {"scrapbook": {"name": "method"}}},  # glued: checked where it is pasted
    ]
    assert _kinds(output_faults(outputs)) == ["decimals", "local path", "method id",
                                              "plural in parentheses"]
    assert output_faults(outputs, tags=["remove-output"]) == []


def test_markdown_prose_is_checked_and_its_code_math_and_links_are_not():
    markdown = ("Runs took `wall_time_s` seconds ($x_{i} = -0.0$), see [the store]"
                "(/work/results/usps.jsonl).\n\n```bash\npython -m dkm run --method dkm-p\n```\n\n"
                "```{code-cell} ipython3\nx = 0.1234567\n```\n\n"
                "| model | ACC |\n|---|---|\n| dkm-a | 70.1 |\n\n"
                "{glue:text}`n_clusters` cluster(s) used by dkm-p.")
    assert sorted((f.kind, f.place) for f in markdown_faults(markdown)) == [
        ("method id", PROSE), ("method id", TABLE), ("plural in parentheses", PROSE)]


def test_the_command_line_checks_a_built_site(tmp_path, capsys):
    (tmp_path / "clean.html").write_text(_page("<p>DKM<sup>p</sup> at 77.3 %</p>"))
    assert main([str(tmp_path)]) == 0
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "faulty.html").write_text(_page("<p>1 cluster(s)</p>"))
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "theme.html").write_text(_page("<p>/tmp/x</p>"))  # not a page
    assert main([str(tmp_path)]) == 1
    assert "notebooks/faulty.html: plural in parentheses" in capsys.readouterr().out
    assert list(site_faults(tmp_path)) == ["notebooks/faulty.html"]


def test_the_report_and_chapter_11_are_held_to_their_length(tmp_path):
    # what a reader reads counts: prose, tables, outputs; code does not
    (tmp_path / "book").mkdir()
    code = "<div class='cell_input'><pre>" + "x = 1\n" * 2000 + "</pre></div>"
    (tmp_path / "book" / "intro.html").write_text(_page("<p>" + "word " * 1500 + "</p>" + code))
    assert site_faults(tmp_path) == {}
    (tmp_path / "book" / "intro.html").write_text(_page("<p>" + "word " * 1501 + "</p>"))
    fault, = site_faults(tmp_path)["book/intro.html"]
    assert (fault.kind, fault.excerpt) == ("length", "1501 words, above the page's 1500")
    (tmp_path / "other.html").write_text(_page("<p>" + "word " * 5000 + "</p>"))  # no budget
    assert list(site_faults(tmp_path)) == ["book/intro.html"]


def test_make_book_runs_the_checks():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["sphinx"]["local_extensions"].get("page_checks") == "book/_ext"


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.name)
def test_a_pages_text_holds_no_fault(source):
    faults = [fault for cell in jupytext.read(source).cells if cell.cell_type == "markdown"
              for fault in markdown_faults(cell.source)]
    assert not faults, f"{source.name}: " + "; ".join(map(str, faults))


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.name)
def test_a_pages_parameters_cell_is_collapsed_or_removed(source):
    shown = [cell.source.splitlines()[0] for cell in jupytext.read(source).cells
             if "parameters" in cell.metadata.get("tags", ())
             and not HIDDEN & set(cell.metadata.get("tags", ()))]
    assert not shown, f"{source.name}: a parameters cell is shown open"


@pytest.mark.parametrize("source", PAGES, ids=lambda path: path.name)
def test_a_section_named_in_the_prose_is_a_link(source):
    # chapter 6 pointed at chapter 11's section *DCN in the authors' code*, which does not exist:
    # a section is named through {ref}, so that a renamed or missing one fails the build
    import re

    notebook = jupytext.read(source)
    prose = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    named = re.findall(r"chapter \d+, [*\"“][^*\"”\n]+[*\"”]", prose)
    assert not named, f"{source.name}: sections named in plain text: {named}"


def test_a_chapter_number_outside_a_link_is_a_fault():
    page = _page("<p>as chapter 7 shows, and <a href='06_results.html'>chapter 7</a></p>"
                 "<div class='cell_input'><pre># chapter 9's search</pre></div>")
    assert [(f.kind, f.excerpt) for f in html_faults(page)] == [
        ("plain chapter reference", "chapter 7")]


def test_a_figure_without_alt_text_is_a_fault():
    named = "<img alt='../_images/0a1b2c3d4e5f60718293a4b5c6d7e8f9.png' src='../_images/0a1b2c3d4e5f60718293a4b5c6d7e8f9.png'/>"
    described = "<img alt='The schedule of α, rising to 28' src='../_images/0a1b2c3d4e5f6071.png'/>"
    assert _kinds(html_faults(_page(named + "<img src='x.png'/>"))) == [
        "figure without alt text"] * 2
    assert html_faults(_page(described)) == []


def test_a_code_cell_shown_open_that_plots_or_glues_is_a_fault():
    def cell(code: str, folded: bool = False) -> str:
        shown = f"<div class='cell_input docutils container'><pre>{code}</pre></div>"
        return f"<details class='hide above-input'>{shown}</details>" if folded else shown

    assert plots_or_glues("fig, ax = plt.subplots()\nax.plot(x)")
    assert plots_or_glues("glue('n', 3, display=False)") and plots_or_glues("import matplotlib")
    assert not plots_or_glues("x = np.sum(y, axis=1)\nprint(x)")
    assert _kinds(html_faults(_page(cell("ax.plot(x)")))) == ["plotting code shown"]
    assert html_faults(_page(cell("ax.plot(x)", folded=True) + cell("x = y + 1"))) == []


@pytest.mark.parametrize("source", PAGES, ids=lambda path: path.name)
def test_every_chapter_named_in_the_prose_is_a_numbered_link(source):
    # a chapter is named through {numref}`chapter %s <chapter-...>`, which writes its number:
    # the parts renumber the chapters, and a typed "chapter 7" would then name another one
    prose = "\n".join(_read(cell.source) for cell in jupytext.read(source).cells
                      if cell.cell_type == "markdown")
    typed = CHAPTER_NUMBER.findall(prose)
    assert not typed, f"{source.name}: chapters named in plain text: {typed}"


def _shows_a_figure(code: str) -> bool:
    return "plt.show()" in code or "figures." in code


@pytest.mark.parametrize("source", PAGES, ids=lambda path: path.name)
def test_every_figure_cell_has_alt_text(source):
    missing = [cell.source.splitlines()[0] for cell in jupytext.read(source).cells
               if cell.cell_type == "code" and _shows_a_figure(cell.source)
               and "remove-cell" not in cell.metadata.get("tags", ())
               and not cell.metadata.get("mystnb", {}).get("image", {}).get("alt")]
    assert not missing, f"{source.name}: figure cells without alt text: {missing}"


@pytest.mark.parametrize("source", PAGES, ids=lambda path: path.name)
def test_no_cell_shown_open_plots_or_glues(source):
    shown = [cell.source.splitlines()[0] for cell in jupytext.read(source).cells
             if cell.cell_type == "code" and not NOT_SHOWN & set(cell.metadata.get("tags", ()))
             and plots_or_glues(cell.source)]
    assert not shown, f"{source.name}: cells shown open that plot or glue: {shown}"


def _chapter_numbers() -> dict[str, int]:
    """Each chapter's number in the sidebar: the order of the numbered parts' files."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [entry["file"] for part in toc["parts"] if part.get("numbered")
             for entry in part["chapters"]]
    return {Path(file).name: number for number, file in enumerate(files, start=1)}


@pytest.mark.parametrize("source", PAGES, ids=lambda path: path.name)
def test_a_figure_s_number_is_its_chapter_s(source):
    # captions number figures by hand ("Figure 6.2."): the chapter's own number, not its file's
    import re

    number = _chapter_numbers().get(source.stem)
    prose = "\n".join(cell.source for cell in jupytext.read(source).cells
                      if cell.cell_type == "markdown")
    wrong = [found for found in re.findall(r"\b[Ff]igures? (\d+)\.\d+", prose)
             if int(found) != number]
    assert not wrong, f"{source.name} (chapter {number}) numbers figures of chapters {wrong}"
