"""nbval runs every chapter in `make test`; here each cell's outputs are checked as a page shows them.

A cell with an unindented ``plt.show()`` or ``fig, ... = plt.subplots(...)`` draws whatever
the data; when it runs without an
image among its outputs (a kernel left on a non-interactive backend such as ``MPLBACKEND=Agg``
shows nothing and says nothing), that cell's test fails. And a cell whose shown outputs hold a
fault a reader must not see (``book/_ext/page_checks.py``: a number at six decimals, a negative
zero, a method's id, a local path, ``cluster(s)``) fails too.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
from page_checks import output_faults  # noqa: E402

#: A line that shows a figure unconditionally.
SHOWS_A_FIGURE = re.compile(r"^(plt\.show\(\)|fig\b.*= plt\.subplots\()", re.M)
IMAGE = "image/png"


def has_image(outputs) -> bool:
    """Whether a cell's outputs hold a PNG image."""
    return any(IMAGE in (out.get("data") or {}) for out in outputs or ())


def _fault(item) -> str | None:
    """Why a cell's outputs are not fit to be shown, or None."""
    cell = item.cell
    outputs = getattr(item, "test_outputs", None)
    if SHOWS_A_FIGURE.search(cell.source) and not has_image(outputs):
        return ("the cell draws a figure but shows no image; is the kernel's matplotlib backend "
                "inline (`%matplotlib inline` in the chapter's first cells)?")
    faults = output_faults(outputs or (), cell.metadata.get("tags", ()))
    if faults:
        return "its outputs show " + "; ".join(map(str, faults))
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    if outcome.excinfo is not None or getattr(item, "cell", None) is None:
        return
    fault = _fault(item)
    if fault:
        outcome.force_exception(AssertionError(f"{item.name}: {fault}"))
