"""nbval runs every chapter in `make test`; here each cell that shows a figure must show one.

A cell with an unindented ``plt.show()`` or ``fig, ... = plt.subplots(...)`` draws whatever
the data; when it runs without an
image among its outputs (a kernel left on a non-interactive backend such as ``MPLBACKEND=Agg``
shows nothing and says nothing), that cell's test fails.
"""
from __future__ import annotations

import re

import pytest

#: A line that shows a figure unconditionally.
SHOWS_A_FIGURE = re.compile(r"^(plt\.show\(\)|fig\b.*= plt\.subplots\()", re.M)
IMAGE = "image/png"


def has_image(outputs) -> bool:
    """Whether a cell's outputs hold a PNG image."""
    return any(IMAGE in (out.get("data") or {}) for out in outputs or ())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    cell = getattr(item, "cell", None)
    if outcome.excinfo is not None or cell is None or not SHOWS_A_FIGURE.search(cell.source):
        return
    if not has_image(getattr(item, "test_outputs", None)):
        outcome.force_exception(AssertionError(
            f"{item.name}: the cell draws a figure but shows no image; is the kernel's "
            "matplotlib backend inline (`%matplotlib inline` in the chapter's first cells)?"))
