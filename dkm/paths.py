"""Paths as a reader sees them: relative to the current folder where that names the same file.

What the package prints or writes for a reader (a dataset's description, a store in a
chapter's output) names a file inside the current folder by its relative path, not by the
machine's absolute one; a file elsewhere keeps the path it was given.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["shown_path"]


def shown_path(path: str | os.PathLike[str], start: str | os.PathLike[str] | None = None) -> str:
    """``path`` relative to ``start`` (the current folder by default) when it lies inside it,
    else as given.

    Examples
    --------
    >>> shown_path("/data/runs/store.jsonl", start="/data")
    'runs/store.jsonl'
    >>> shown_path("/elsewhere/store.jsonl", start="/data")
    '/elsewhere/store.jsonl'
    """
    start = Path(start if start is not None else Path.cwd()).absolute()
    absolute = Path(path).absolute()
    return str(absolute.relative_to(start)) if absolute.is_relative_to(start) else str(path)
