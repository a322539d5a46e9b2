"""Writing tables for a reader: a built table as Markdown, HTML (plain or compact) or LaTeX,
:func:`typeset` for the paper's labels, and a line search's choices as a table and sentences
(:func:`dkm.book.analysis.search_summary`).
"""
from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from dkm.book.tables.cells import Cell, build, figure
from dkm.protocol import paper


@dataclass(frozen=True)
class _Format:
    """How one output format writes text, labels and marks."""

    escape: Callable[[str], str]
    scripts: Callable[[str, str | None], str]
    styles: Mapping[str, Callable[[str], str]]
    style_names: Mapping[str, str]
    compact: bool = False


_LABEL_MARKUP = re.compile(r"\^([a-z]+)(?:_([a-z]+))?")


def _format_label(label: str, fmt: _Format) -> str:
    """Escape a row label, writing ``^p`` and ``_ce`` as super/subscripts."""
    pieces, position = [], 0
    for match in _LABEL_MARKUP.finditer(label):
        pieces.append(fmt.escape(label[position : match.start()]))
        pieces.append(fmt.scripts(match[1], match[2]))
        position = match.end()
    pieces.append(fmt.escape(label[position:]))
    return "".join(pieces)


def _latex_escape(text: str) -> str:
    special = {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\^{}",
        "<": r"$<$",
        ">": r"$>$",
        "±": r"$\pm$",
        "×": r"$\times$",
        "λ": r"$\lambda$",
        "γ": r"$\gamma$",
    }
    return "".join(special.get(char, char) for char in text)


def _latex_scripts(superscript: str, subscript: str | None) -> str:
    """``$^{\\mathrm{a}}_{\\mathrm{ce}}$``: one math group, so that no ``$$`` appears."""
    below = f"_{{\\mathrm{{{subscript}}}}}" if subscript else ""
    return f"$^{{\\mathrm{{{superscript}}}}}{below}$"


_HTML = _Format(
    escape=html.escape,
    scripts=lambda above, below: f"<sup>{above}</sup>" + (f"<sub>{below}</sub>" if below else ""),
    styles={"bold": lambda text: f"<b>{text}</b>", "underline": lambda text: f"<u>{text}</u>"},
    style_names={"bold": "Bold", "underline": "Underlined"},
)

_FORMATS: Mapping[str, _Format] = {
    "markdown": _Format(
        escape=lambda text: text.replace("|", r"\|"),
        scripts=lambda above, below: f"^{above}" + (f"_{below}" if below else ""),
        styles={"bold": lambda text: f"**{text}**", "underline": lambda text: f"_{text}_"},
        style_names={"bold": "Bold", "underline": "Italic (the paper's underline)"},
    ),
    "html": _HTML,
    "html-compact": replace(_HTML, compact=True),
    "latex": _Format(
        escape=_latex_escape,
        scripts=_latex_scripts,
        styles={
            "bold": lambda text: f"\\textbf{{{text}}}",
            "underline": lambda text: f"\\underline{{{text}}}",
        },
        style_names={"bold": "Bold", "underline": "Underlined"},
    ),
}

#: The output formats of :func:`render`.
FORMATS = tuple(_FORMATS)


def typeset(text: str, fmt: str = "html") -> str:
    """``text`` escaped for ``fmt``, the paper's labels in it with their scripts.

    Examples
    --------
    >>> typeset("DKM^p beats DCN^p; DKM^a_ce")
    'DKM<sup>p</sup> beats DCN<sup>p</sup>; DKM<sup>a</sup><sub>ce</sub>'
    """
    if fmt not in _FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    return _format_label(text, _FORMATS[fmt])


_SUPERSCRIPT_DIGITS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(value: float, digits: int = 0) -> str:
    """``value`` in scientific notation for prose, with a superscript exponent.

    Examples
    --------
    >>> power_of_ten(6.2e-08)
    '6 × 10⁻⁸'
    >>> power_of_ten(2384.0, digits=1)
    '2.4 × 10³'
    """
    mantissa, exponent = f"{value:.{digits}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT_DIGITS)}"


def _marked(text: str, marks: Collection[str], fmt: _Format) -> str:
    """Escaped ``text`` with its significance marks (underline inside bold, as the paper)."""
    text = fmt.escape(text)
    for style in ("underline", "bold"):
        if style in marks:
            text = fmt.styles[style](text)
    return text


def _cell_marks(value: Cell) -> set[str]:
    return {style for style, marked in (("bold", value.bold), ("underline", value.underline))
            if marked}


def _cell_text(value: Any, fmt: _Format) -> str:
    """A cell in a format: marked text, then the unmarked note."""
    if not isinstance(value, Cell):
        return fmt.escape(str(value))
    text = _marked(value.text, _cell_marks(value), fmt)
    return f"{text} {fmt.escape(value.note)}" if value.note else text


#: Marks of the compact format: our figure against the paper's.
VERDICT_MARKS: Mapping[str, str] = {"better": "▲", "worse": "▼", "consistent": ""}
_COMPACT_LEGEND = ("Each model's row gives our figures (mean ± standard deviation over its runs: "
                   "the paper's ten seeds unless n says otherwise), the row under it the paper's; "
                   "▲ / ▼: ours significantly above / below the paper's (Welch t-test, "
                   "p < 0.05; a single run: z test against the paper's standard deviation), "
                   "otherwise consistent; –: no run of ours. The paper's row has the marks "
                   "computed from the paper's figures (Student's t-test, ten runs each); the "
                   "paper tested its runs, so a few differ from its print")


def _compact_cell(value: Any, fmt: _Format) -> tuple[str, str]:
    """Our figure with its marks and verdict on one line, and the paper's figure, which the
    compact format shows in a row of its own under the model's (HTML)."""
    if isinstance(value, Cell) and not value.runs and value.note:
        # not a result cell (a chosen λ, a dataset statistic) or one without runs: our figure (a
        # dash where we have none, the reason in its tooltip), and the note (the paper's)
        text = (f'<span title="{fmt.escape(value.text)}">–</span>' if value.missing
                else _cell_text(replace(value, note=""), fmt))
        note = value.note[1:-1]
        if note == "paper":  # our figure is the paper's own (a value no run of ours chose)
            return f"{text}&nbsp;<small>(the paper's)</small>", ""
        return text, _marked(note.removeprefix("paper "), value.paper_marks, fmt)
    if not isinstance(value, Cell) or value.comparison is None:
        return _cell_text(value, fmt), ""
    comparison = value.comparison
    text = _marked(figure(comparison.mean, comparison.std), _cell_marks(value), fmt)
    mark = VERDICT_MARKS[comparison.verdict]
    if mark:
        text += f'&nbsp;<span class="verdict-{comparison.verdict}">{mark}</span>'
    if comparison.n != len(paper.PAPER_SEEDS):
        text += f"&nbsp;<small>n={comparison.n}</small>"
    return text, _marked(figure(comparison.paper_mean, comparison.paper_std), value.paper_marks,
                         fmt)


def _scale_sentence(scales: str) -> str:
    """The epochs the runs trained for, in words; nothing for ``"1"``, the paper's own epochs,
    nor for ``"none"``, a table without runs (its cells say where their figures come from)."""
    if scales in ("1", "none"):  # the usual case: the text around the table says it once
        return ""
    return f"Runs trained for a fraction of the paper's epochs (scale {scales}; 1 is the paper's)"


def _caption(table: pd.DataFrame, fmt: _Format) -> str:
    """Caption, legend of the marks and scales, as one escaped paragraph."""
    attrs = table.attrs
    sentences = [attrs.get("caption", "")]
    for style, meaning in attrs.get("legend", ()):
        if fmt.compact and meaning.startswith("In parentheses"):
            meaning = _COMPACT_LEGEND
        sentences.append(f"{fmt.style_names[style]}: {meaning}." if style else f"{meaning}.")
    if attrs.get("scales") is not None:
        sentence = _scale_sentence(attrs["scales"])
        sentences.append(sentence + "." if sentence else "")
    return fmt.escape(" ".join(sentence for sentence in sentences if sentence))


def _header_levels(table: pd.DataFrame) -> list[list[str]]:
    """Column labels per header row; levels with one value are dropped (kept if alone)."""
    columns = table.columns
    levels = [[str(value) for value in columns.get_level_values(i)] for i in range(columns.nlevels)]
    varying = [level for level in levels if len(set(level)) > 1]
    return varying or levels[-1:]


def _spans(level: list[str]) -> list[tuple[str, int]]:
    """Runs of equal adjacent labels: ``[("MNIST", 2), ("USPS", 2)]``."""
    spans: list[tuple[str, int]] = []
    for value in level:
        if spans and spans[-1][0] == value:
            spans[-1] = (value, spans[-1][1] + 1)
        else:
            spans.append((value, 1))
    return spans


def _body(table: pd.DataFrame, fmt: _Format) -> list[tuple[str, str, list[str]]]:
    """Rows as (kind, text, cells): ("heading", heading, []) or ("row", label, cells)."""
    rows: list[tuple[str, str, list[str]]] = []
    current = None
    for (heading, label), values in zip(
        table.index, table.itertuples(index=False, name=None), strict=True
    ):
        if heading != current and heading:
            rows.append(("heading", fmt.escape(heading), []))
        current = heading
        if not fmt.compact:
            rows.append(("row", _format_label(str(label), fmt),
                         [_cell_text(value, fmt) for value in values]))
            continue
        ours, theirs = zip(*(_compact_cell(value, fmt) for value in values)) if values else ((), ())
        rows.append(("row", _format_label(str(label), fmt), list(ours)))
        if any(theirs):
            rows.append(("paper", "paper", list(theirs)))
    return rows


def _markdown(table: pd.DataFrame, fmt: _Format) -> str:
    header = [" ".join(parts) for parts in zip(*_header_levels(table), strict=True)]
    width = len(header)
    lines = [
        f"**{fmt.escape(table.attrs.get('title', ''))}**",
        "",
        "| "
        + " | ".join([fmt.escape(table.index.names[-1] or "")] + [fmt.escape(h) for h in header])
        + " |",
        "|:--" + "|:-:" * width + "|",
    ]
    for kind, text, cells in _body(table, fmt):
        row = [text, *cells] if kind == "row" else [f"*{text}*", *[""] * width]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines + ["", _caption(table, fmt), ""])


def _span_attribute(name: str, span: int) -> str:
    return f' {name}="{span}"' if span > 1 else ""


def _html(table: pd.DataFrame, fmt: _Format) -> str:
    levels = _header_levels(table)
    width = len(levels[0])
    title = fmt.escape(table.attrs.get("title", ""))
    caption = f"<caption><b>{title}</b>. {_caption(table, fmt)}</caption>"
    lines = ['<table class="paper-table">', caption, "<thead>"]
    for number, level in enumerate(levels):
        stub_name = fmt.escape(table.index.names[-1] or "")
        stub = (
            f"<th{_span_attribute('rowspan', len(levels))}>{stub_name}</th>" if number == 0 else ""
        )
        spans = "".join(
            f"<th{_span_attribute('colspan', span)}>{fmt.escape(value)}</th>"
            for value, span in _spans(level)
        )
        lines.append(f"<tr>{stub}{spans}</tr>")
    lines += ["</thead>", "<tbody>"]
    for kind, text, cells in _body(table, fmt):
        if kind == "heading":
            lines.append(f'<tr><td colspan="{width + 1}"><i>{text}</i></td></tr>')
        elif kind == "paper":
            lines.append('<tr class="paper-figures">' + "".join(
                f'<td><small style="color:#666">{value}</small></td>'
                for value in [text, *cells]) + "</tr>")
        else:
            lines.append(
                "<tr>" + "".join(f"<td>{value}</td>" for value in [text, *cells]) + "</tr>"
            )
    return "\n".join(lines + ["</tbody>", "</table>", ""])


def _latex(table: pd.DataFrame, fmt: _Format) -> str:
    levels = _header_levels(table)
    width = len(levels[0])
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        f"\\caption{{{fmt.escape(table.attrs.get('title', ''))}. {_caption(table, fmt)}}}",
        f"\\begin{{tabular}}{{@{{}}l{'c' * width}@{{}}}}",
        r"\toprule",
    ]
    for number, level in enumerate(levels):
        stub = fmt.escape(table.index.names[-1] or "") if number == 0 else ""
        spans = [
            value if span == 1 else f"\\multicolumn{{{span}}}{{c}}{{{value}}}"
            for value, span in ((fmt.escape(v), s) for v, s in _spans(level))
        ]
        lines.append(" & ".join([stub, *spans]) + r" \\")
        if number < len(levels) - 1:
            lines.append(rf"\cmidrule(l){{2-{width + 1}}}")
    lines.append(r"\midrule")
    for kind, text, cells in _body(table, fmt):
        if kind == "heading":
            if lines[-1] != r"\midrule":
                lines.append(r"\midrule")
            lines += [rf"\multicolumn{{{width + 1}}}{{c}}{{{text}}} \\", r"\midrule"]
        else:
            lines.append(" & ".join([text, *cells]) + r" \\")
    return "\n".join(lines + [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""])


_WRITERS: Mapping[str, Callable[[pd.DataFrame, _Format], str]] = {
    "markdown": _markdown,
    "html": _html,
    "html-compact": _html,
    "latex": _latex,
}


def render(table: pd.DataFrame | str, fmt: str = "markdown", **build_options: Any) -> str:
    """Write a table as Markdown, HTML or LaTeX.

    Parameters
    ----------
    table : pandas.DataFrame or str
        A table from :func:`build` (any DataFrame with a two-level row index
        ``(group, label)`` renders; non-:class:`Cell` values are written with
        ``str``), or a table name, built with ``build_options``.
    fmt : str
        ``"markdown"``, ``"html"``, ``"html-compact"`` (a result cell shows our
        figure with a ▲ / ▼ verdict mark and the paper's figure below it) or
        ``"latex"`` (booktabs; the LaTeX needs ``\\usepackage{booktabs}``).
    **build_options
        ``records``, ``vs_paper``, ``missing_reason`` of :func:`build` when
        ``table`` is a name.

    Returns
    -------
    str
        The title, the table and a caption with the legend of the marks and
        the scale(s) of the runs.
    """
    if fmt not in _FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    if isinstance(table, str):
        table = build(table, **build_options)
    elif build_options:
        raise ValueError("build options are only accepted with a table name")
    if table.index.nlevels != 2:
        raise ValueError(
            "render expects rows indexed by (group, label), as built by dkm.book.tables.build"
        )
    return _WRITERS[fmt](table, _FORMATS[fmt])


def one_line(text: str) -> str:
    """``text`` with no-break spaces: an HTML table keeps the cell on one line.

    Examples
    --------
    >>> one_line("77.2 ± 2.8") == "77.2\u00a0±\u00a02.8"
    True
    """
    return text.replace(" ", "\u00a0")


#: The vendors' names in a CPU's identity (:func:`dkm.protocol.provenance.cpu_identity`), as
#: a reader knows them.
_VENDORS = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}


def cpu_label(identity: str) -> str:
    """A CPU's identity as a page names it: its maker, family and model.

    Examples
    --------
    >>> cpu_label("GenuineIntel family 6 model 167 stepping 1, avx512f")
    'Intel family 6 model 167'
    """
    vendor, *rest = identity.split(",")[0].split()
    return " ".join([_VENDORS.get(vendor, vendor), *rest[:4]])


def _mean_std(mean: float, std: float) -> str:
    return f"{mean:.1f}" if math.isnan(std) else one_line(f"{mean:.1f} ± {std:.1f}")


def _decades(chosen: float, theirs: float) -> str:
    """Where a chosen grid value lies from the paper's, in decades of the grid (display text)."""
    if math.isnan(theirs):
        return "—"
    decades = round(math.log10(chosen / theirs))
    if decades == 0:
        return "the same"
    return f"{abs(decades)} decade{'s' if abs(decades) > 1 else ''} " + (
        "above" if decades > 0 else "below")


def line_search_table(summary: pd.DataFrame, reference: str) -> pd.DataFrame:
    """The summary of a line search as display text (HTML), one row per method (its label).

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`dkm.book.analysis.search_summary`.
    reference : str
        The paper's dataset whose published values the summary compares with.
    """
    place = paper.dataset_label(reference)
    rows = []
    for method, row in summary.iterrows():
        rows.append({
            "method": typeset(paper.METHOD_LABELS[method]),
            "chosen (validation)": f"{row.chosen:g}",
            f"paper ({place})": "none" if math.isnan(row.paper) else f"{row.paper:g}",
            "chosen against paper's": _decades(row.chosen, row.paper),
            "values × runs": f"{row['values']} × {row.runs}",
            "validation ACC at chosen": f"{row.val_chosen:.1f}",
            "test ACC at chosen": _mean_std(row.test_chosen, row.std_chosen),
            "test ACC at paper's": "—" if math.isnan(row.paper) else
            "not run" if math.isnan(row.test_paper) else _mean_std(row.test_paper, row.std_paper),
            "best test ACC (at)": one_line(f"{row.test_best:.1f} ({row.best:g})"),
        })
    return pd.DataFrame(rows).set_index("method")
