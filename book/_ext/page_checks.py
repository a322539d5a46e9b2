"""What a reader must not find on a page of the book, and where to look for it.

Each check is a class of fault, not an instance:

``decimals``
    a number with six or more decimals in a table, an output or the prose;
``negative zero``
    a zero printed with a minus sign (``−0.0000``, ``-0.00``);
``method id``
    a method's registry id (``dkm-p``, ``ae-km``) in place of its label, in prose, a table
    or an output;
``snake_case``
    a programmer's name (``wall_time_s``) in prose or a table;
``plural in parentheses``
    ``cluster(s)``: the reader is owed the number's own plural;
``local path``
    an absolute path of the machine that built the page (``/home/…``, ``/tmp/…``), anywhere;
``parameter cell``
    a chapter's papermill ``parameters`` cell shown, neither removed nor collapsed;
``length``
    a page of :data:`WORD_BUDGETS` longer than its budget, in the words a reader reads
    (prose, tables and outputs; not code);
``plain chapter reference``
    "chapter 7" in prose, a table or an output that is not a link: a renumbered chapter
    would leave it wrong ({numref} writes the number and links it);
``figure without alt text``
    an image of the article whose alternative text is missing, empty or its file's name;
``plotting code shown``
    a code cell shown unfolded that plots or glues (matplotlib, ``glue``): plumbing, which a
    reader unfolds if they wish (``hide-input``) or never sees (``remove-input``).

Code is not prose: inline code, code cells and code blocks are exempt from every check but
the local paths; so are the formulas.

The same checks read three forms of a page: the built HTML (:func:`html_faults`; ``make book``
runs them on every page through :func:`setup`, and ``python book/_ext/page_checks.py
_build/html`` on a finished build), a notebook cell's executed outputs
(:func:`output_faults`, run by ``make test`` on every chapter nbval executes) and the
Markdown of a chapter's text (:func:`markdown_faults`).
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

#: Where a piece of text stands on a page.
PROSE, TABLE, OUTPUT, CODE = "prose", "table", "output", "code"

MANY_DECIMALS = re.compile(r"(?<![\w.])\d+\.\d{6,}(?!\d)")
NEGATIVE_ZERO = re.compile(r"(?<![\w.])[−-]0(?:\.0+)?(?:e[+-]?\d+)?(?![\w.])")
PARENTHESISED_PLURAL = re.compile(r"\b[A-Za-z]+\(s\)")
LOCAL_PATH = re.compile(r"(?<![\w.~])/(?:work|home|tmp|root)/")
SNAKE_CASE = re.compile(r"(?<![\w./:=-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/(=-])")
CHAPTER_NUMBER = re.compile(r"\b[Cc]hapters?\s+\d+\b")
FILE_NAME = re.compile(r"^[\w.-]*\.(?:png|svg|jpe?g|gif)$|^[0-9a-f]{16,}$", re.I)
#: The names whose calls draw or glue: a statement on one of them is plumbing.
PLOTTING = frozenset({"plt", "ax", "axes", "axis", "fig", "figure", "figures", "glue",
                      "matplotlib", "myst_nb"})

#: The pages held to a length, in words: the reproduction report, the chapter on reruns and
#: the chapter on ablations.
WORD_BUDGETS = {"book/intro.html": 1_500, "notebooks/11_reproducing.html": 2_500,
                "notebooks/09_ablations.html": 3_000}

#: The checks of each place on a page: (fault, pattern).
CHECKS = {
    PROSE: ("decimals", "negative zero", "method id", "snake_case", "plural in parentheses",
            "local path"),
    TABLE: ("decimals", "negative zero", "method id", "snake_case", "plural in parentheses",
            "local path"),
    OUTPUT: ("decimals", "negative zero", "method id", "plural in parentheses", "local path"),
    CODE: ("local path",),
}


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    from dkm.protocol.registry import ids

    method_ids = "|".join(sorted(map(re.escape, ids()), key=len, reverse=True))
    return {"decimals": MANY_DECIMALS, "negative zero": NEGATIVE_ZERO,
            "method id": re.compile(rf"(?<![\w./^=-])(?:{method_ids})(?![\w/-])"),
            "snake_case": SNAKE_CASE, "plural in parentheses": PARENTHESISED_PLURAL,
            "local path": LOCAL_PATH}


@dataclass(frozen=True)
class Fault:
    """One fault: its class, where on the page it stands, and the text around it."""

    kind: str
    place: str
    excerpt: str

    def __str__(self) -> str:
        return f"{self.kind} in {self.place}: {self.excerpt!r}"


def text_faults(text: str, place: str) -> list[Fault]:
    """The faults of ``text`` standing at ``place`` (:data:`PROSE`, :data:`TABLE`,
    :data:`OUTPUT` or :data:`CODE`)."""
    patterns = _patterns()
    return [Fault(kind, place, text[max(0, m.start() - 30):m.end() + 30].strip())
            for kind in CHECKS[place] for m in patterns[kind].finditer(text)]


# ---------------------------------------------------------------------------- HTML
#: Elements without an end tag.
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
#: Elements that end a run of text: what stands on either side is not one sentence.
BLOCKS = {"p", "div", "li", "td", "th", "tr", "pre", "br", "h1", "h2", "h3", "h4", "h5", "h6",
          "dt", "dd", "caption", "figcaption", "blockquote", "section", "table"}
#: Elements whose text no reader reads as text.
UNREAD = {"script", "style", "head", "svg", "template"}


class _PageReader(HTMLParser):
    """Collects the text of a page's article with its place, and the visible parameter cells."""

    def __init__(self, whole_document: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.whole_document = whole_document  # an output's HTML has no <article>
        self.stack: list[tuple[str, tuple[str, ...]]] = []
        self.pieces: list[tuple[str | None, str]] = []  # None: the end of a block
        self.shown_parameters = 0
        self.faults: list[Fault] = []
        self.shown_code: list[str] | None = None  # the text of a cell input shown unfolded
        self.shown_code_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCKS:
            self.pieces.append((None, "\n"))
        if tag == "img" and self._read():
            alt = (dict(attrs).get("alt") or "").strip()
            source = Path(dict(attrs).get("src") or "").name
            if not alt or FILE_NAME.match(Path(alt).name) or Path(alt).name == source:
                self.faults.append(Fault("figure without alt text", OUTPUT, source))
        if tag in VOID:
            return
        classes = tuple((dict(attrs).get("class") or "").split())
        folded = any(name == "details" for name, _ in self.stack)
        if tag == "div" and "cell_input" in classes and not folded:
            if self._inside("tag_parameters"):
                self.shown_parameters += 1
            if self.shown_code is None:
                self.shown_code, self.shown_code_depth = [], len(self.stack)
        self.stack.append((tag, classes))

    def handle_endtag(self, tag: str) -> None:
        if tag in BLOCKS:
            self.pieces.append((None, "\n"))
        for depth in range(len(self.stack) - 1, -1, -1):  # tolerate unclosed elements
            if self.stack[depth][0] == tag:
                del self.stack[depth:]
                if self.shown_code is not None and len(self.stack) <= self.shown_code_depth:
                    code, self.shown_code = "".join(self.shown_code), None
                    if plots_or_glues(code):
                        self.faults.append(Fault("plotting code shown", CODE,
                                                 code.strip().splitlines()[0][:60]))
                return

    def handle_data(self, data: str) -> None:
        if self.shown_code is not None:
            self.shown_code.append(data)
        if data.strip() and self._read():
            place = self._place()
            self.pieces.append((place, data))
            if place != CODE and not any(tag == "a" for tag, _ in self.stack):
                self.faults += [Fault("plain chapter reference", place, m.group(0))
                                for m in CHAPTER_NUMBER.finditer(data)]

    def _inside(self, css_class: str) -> bool:
        return any(css_class in classes for _, classes in self.stack)

    def _read(self) -> bool:
        if any(tag in UNREAD for tag, _ in self.stack) or self._inside("math"):
            return False
        return not self.whole_document or any(tag == "article" for tag, _ in self.stack)

    def _place(self) -> str:
        tags = {tag for tag, _ in self.stack}
        if self._inside("cell_input") or (not self._inside("cell_output")
                                          and tags & {"pre", "code"}):
            return CODE
        if tags & {"td", "th"}:
            return TABLE
        if self._inside("cell_output") or "pre" in tags:
            return OUTPUT
        return PROSE


def html_faults(html: str, *, whole_document: bool = True,
                word_budget: int | None = None) -> list[Fault]:
    """The faults of a built page, or of a fragment (an output's HTML) when not
    ``whole_document``; a page longer than ``word_budget`` words, when given, is one."""
    reader = _PageReader(whole_document)
    reader.feed(html)
    reader.close()
    pieces = _joined(reader.pieces)
    faults = [fault for place, text in pieces for fault in text_faults(text, place)]
    faults += [Fault("parameter cell", CODE, "a parameters cell is shown")
               ] * reader.shown_parameters
    faults += reader.faults
    words = sum(len(text.split()) for place, text in pieces if place != CODE)
    if word_budget is not None and words > word_budget:
        faults.append(Fault("length", PROSE, f"{words} words, above the page's {word_budget}"))
    return faults


def plots_or_glues(code: str) -> bool:
    """Whether Python ``code`` holds a statement that draws or glues: a call, an assignment
    or an import on one of :data:`PLOTTING` (``plt.subplots``, ``ax.plot``, ``glue(...)``,
    ``import matplotlib.pyplot``). Code that does not parse is not judged."""
    import ast

    try:
        tree = ast.parse("\n".join(line for line in code.splitlines()
                                   if not line.lstrip().startswith("%")))
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in PLOTTING:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [alias.name for alias in node.names] + [getattr(node, "module", "") or ""]
            if any(module.split(".")[0] in PLOTTING for module in modules):
                return True
    return False


def _joined(pieces: Iterable[tuple[str | None, str]]) -> list[tuple[str, str]]:
    """Adjacent pieces of the same place as one text: a sentence split by inline markup
    (a glued number, a link) is read whole; a block's end (place None) ends a line."""
    joined: list[tuple[str, str]] = []
    for place, text in pieces:
        if place is None:
            if joined:
                joined[-1] = (joined[-1][0], joined[-1][1] + text)
        elif joined and joined[-1][0] == place:
            joined[-1] = (place, joined[-1][1] + text)
        else:
            joined.append((place, text))
    return joined


# ------------------------------------------------------------------ executed notebooks
#: The mime types a page shows of an output, the first present: myst-nb's order for HTML.
SHOWN_MIME = ("text/html", "image/svg+xml", "image/png", "image/jpeg", "text/markdown",
              "text/latex", "text/plain")
#: Tags under which a cell's outputs are not on the page.
OUTPUTS_REMOVED = {"remove-cell", "remove-output"}


def output_faults(outputs: Iterable[Mapping[str, Any]],
                  tags: Iterable[str] = ()) -> list[Fault]:
    """The faults of a notebook cell's executed outputs, as its page would show them.

    Glued values (``myst_nb.glue(..., display=False)``) are left to the page they are
    pasted into, where they take their format.
    """
    if OUTPUTS_REMOVED & set(tags):
        return []
    faults = []
    for output in outputs:
        if output.get("output_type") == "stream" and output.get("name") == "stdout":
            faults += text_faults(_text(output.get("text", "")), OUTPUT)
        elif output.get("output_type") in ("display_data", "execute_result") \
                and "scrapbook" not in (output.get("metadata") or {}):
            data = output.get("data") or {}
            mime = next((m for m in SHOWN_MIME if m in data), None)
            if mime == "text/html":
                faults += html_faults(_text(data[mime]), whole_document=False)
            elif mime == "text/markdown":
                faults += markdown_faults(_text(data[mime]), place=OUTPUT)
            elif mime == "text/plain":
                faults += text_faults(_text(data[mime]), OUTPUT)
    return faults


def _text(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


# --------------------------------------------------------------------------- Markdown
FENCE = re.compile(r"^(```+|:::+)\s*(\S*)")
#: Fenced blocks whose body is not prose: code (any language or none), formulas, tables of
#: execution times, glued outputs.
NOT_PROSE_BLOCKS = re.compile(r"^$|^[\w+-]+$|^\{(code-cell|math|nb-exec-table|glue:\w+)\}")
COMMENT = re.compile(r"<!--.*?-->", re.S)
INLINE_NOT_PROSE = re.compile(
    r"\$\$.+?\$\$|\$[^$\n]+\$"    # formulas
    r"|(\{[\w:-]+\})?`[^`]*`"      # inline code and roles ({glue:text}`x`, {cite:p}`key`)
    r"|\]\([^)]*\)"                # link targets
    r"|https?://\S+", re.S)


def markdown_faults(markdown: str, place: str = PROSE) -> list[Fault]:
    """The faults of a chapter's Markdown text (``place`` :data:`PROSE`) or of a Markdown
    output (:data:`OUTPUT`); its tables' cells are :data:`TABLE`, its code :data:`CODE`."""
    code, prose, cells = [], [], []
    fence: str | None = None
    prose_block = True
    for line in COMMENT.sub(" ", markdown).splitlines():
        opening = FENCE.match(line.strip())
        if fence is None and opening:
            fence, prose_block = opening.group(1), not NOT_PROSE_BLOCKS.match(opening.group(2))
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is not None and not prose_block:
            code.append(line)
        elif line.lstrip().startswith("|"):
            cells += line.strip().strip("|").split("|")
        elif not (fence is not None and line.lstrip().startswith(":")):  # a directive's option
            prose.append(line)
    return (text_faults("\n".join(code), CODE)
            + [fault for cell in cells for fault in text_faults(_read(cell), TABLE)]
            + text_faults(_read("\n".join(prose)), place))


def _read(markdown: str) -> str:
    """What a reader reads of Markdown text: without its code, formulas and link targets."""
    return INLINE_NOT_PROSE.sub(" ", markdown)


# ------------------------------------------------------------------------- the site
def site_faults(html_root: str | Path) -> dict[str, list[Fault]]:
    """Every page of a built book with its faults (pages without one left out)."""
    root = Path(html_root)
    found = {}
    for page in sorted(root.rglob("*.html")):
        if {"_static", "_sources", "_images"} & set(page.relative_to(root).parts) \
                or page.name in ("genindex.html", "search.html"):
            continue
        name = page.relative_to(root).as_posix()
        faults = html_faults(page.read_text(encoding="utf-8"), word_budget=WORD_BUDGETS.get(name))
        if faults:
            found[name] = faults
    return found


def _check_build(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    for page, faults in site_faults(app.outdir).items():
        for fault in faults:
            logger.warning(f"{page}: {fault} (book/_ext/page_checks.py)")


def setup(app: Any) -> dict[str, Any]:
    app.connect("build-finished", _check_build)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", nargs="?", default="_build/html", help="a built book's folder")
    args = parser.parse_args(argv)
    found = site_faults(args.html)
    for page, faults in found.items():
        for fault in faults:
            print(f"{page}: {fault}")
    print(f"{sum(map(len, found.values()))} faults on {len(found)} pages", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
