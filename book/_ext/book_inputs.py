"""Re-execute the book's pages when the records or the package they read change.

Jupyter Book re-reads a page, and so re-executes its notebook, only when the page's
source changed. The chapters also read the committed records (``results/``,
``benchmarks/results/``) and call the ``dkm`` package: without this extension a
record that lands, or a change to the package, leaves a later ``make book`` showing
the numbers of the build before. Here every page that holds code cells is also
out of date when one of those files (a new one included) is newer than the page's
last reading.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: What the executed pages read, relative to the book's root.
INPUTS = ("dkm/**/*.py", "results/**/*.jsonl", "results/snapshots/*.npz",
          "benchmarks/results/*.jsonl")
#: A page whose source holds this executes code.
CODE_CELL = "{code-cell}"


def newest_input(root: str | os.PathLike[str], patterns: Iterable[str] = INPUTS) -> int:
    """The latest modification time of the files matching ``patterns``.

    In microseconds, as Sphinx counts them; 0 when no file matches.
    """
    root = Path(root)
    return max((path.stat().st_mtime_ns // 1_000 for pattern in patterns
                for path in root.glob(pattern) if path.is_file()), default=0)


def stale_pages(read_at: Mapping[str, int], sources: Mapping[str, str | os.PathLike[str]],
                newest: int) -> list[str]:
    """The executed pages last read before ``newest``.

    Parameters
    ----------
    read_at : mapping
        Each page's last reading, in microseconds (Sphinx's ``env.all_docs``).
    sources : mapping
        Each page's source file.
    newest : int
        The latest modification time of the inputs, in microseconds.
    """
    return sorted(page for page, when in read_at.items()
                  if when < newest and page in sources and Path(sources[page]).is_file()
                  and CODE_CELL in Path(sources[page]).read_text(encoding="utf-8"))


def _outdated(app: Any, env: Any, added: set, changed: set, removed: set) -> list[str]:
    newest = newest_input(app.srcdir)
    return stale_pages(env.all_docs, {page: env.doc2path(page) for page in env.all_docs}, newest)


def setup(app: Any) -> dict[str, Any]:
    app.connect("env-get-outdated", _outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
