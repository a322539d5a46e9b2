"""Whole-file writes that a reader or an interruption never sees half done.

:func:`atomic_write` gives a binary stream onto a temporary file in the
destination's directory; only when the ``with`` block ends without an error
does that file replace the destination, in one ``os.replace``. On an error the
temporary file is removed and the destination is left as it was.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = ["atomic_write"]


def _default_file_mode() -> int:
    """The mode ``open(path, "w")`` would give a new file: ``0o666`` less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Write ``path`` as a whole: through a temporary file that replaces it at the end.

    Parameters
    ----------
    path : str or path-like
        The file to write; its directory is created if missing.

    Yields
    ------
    BinaryIO
        The stream to write the file's bytes to.

    Notes
    -----
    The temporary file is named ``.<name>.<random>.part``, in the same directory so that the
    final rename stays on one file system. It is flushed to disk before the rename, and it
    takes the permissions an ordinary new file would get (``mkstemp`` alone would leave it
    readable by its owner only).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, _default_file_mode())
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)
