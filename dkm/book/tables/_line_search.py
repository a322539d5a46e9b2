"""A line search's choices as a reader's table and sentences (:func:`dkm.book.analysis.search_summary`)."""
from __future__ import annotations

import math

import pandas as pd

from dkm.book.tables._render import typeset
from dkm.protocol import paper


def _mean_std(mean: float, std: float) -> str:
    return f"{mean:.1f}" + ("" if math.isnan(std) else f" ± {std:.1f}")


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
            "values × runs": f"{row['values']} × {row.runs}",
            "validation ACC at chosen": f"{row.val_chosen:.1f}",
            "test ACC at chosen": _mean_std(row.test_chosen, row.std_chosen),
            "test ACC at paper's": "—" if math.isnan(row.paper) else
            "not run" if math.isnan(row.test_paper) else _mean_std(row.test_paper, row.std_paper),
            "best test ACC (at)": f"{row.test_best:.1f} ({row.best:g})",
        })
    return pd.DataFrame(rows).set_index("method")


def line_search_verdicts(summary: pd.DataFrame, reference: str) -> str:
    """One Markdown bullet per method (labels in HTML): its value against the paper's, in decades.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`dkm.book.analysis.search_summary`.
    reference : str
        The paper's dataset whose published values the summary compares with.
    """
    place = paper.dataset_label(reference)
    lines = []
    for method, row in summary.iterrows():
        label, symbol = typeset(paper.METHOD_LABELS[method]), paper.TRADEOFF_SYMBOLS[row.tradeoff_name]
        if math.isnan(row.paper):
            lines.append(f"* {label}: {symbol} = {row.chosen:g}; the paper gives no value.")
        elif row.chosen == row.paper:
            lines.append(f"* {label}: {symbol} = {row.chosen:g}, the paper's value on {place}.")
        else:
            decades = round(math.log10(row.chosen / row.paper))
            at_paper = (f"against {row.test_paper:.1f} % at the paper's"
                        if not math.isnan(row.test_paper) else "the paper's value not run yet")
            lines.append(
                f"* {label}: {symbol} = {row.chosen:g}, {abs(decades)} decade"
                f"{'s' if abs(decades) > 1 else ''} {'above' if decades > 0 else 'below'} the "
                f"paper's {row.paper:g} on {place}; test ACC {row.test_chosen:.1f} % at the "
                f"chosen value, {at_paper}.")
    return "\n".join(lines)
