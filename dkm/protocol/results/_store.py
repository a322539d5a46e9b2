"""The JSON Lines store of run records: appended under a lock, read back with the broken
lines skipped, one arithmetic per store.

Crash safety
------------
:meth:`ResultsStore.append` writes a whole line with one ``write`` call on a
file opened in append mode, then flushes it to disk with ``os.fsync``; where
``fcntl`` exists it holds an exclusive ``flock`` meanwhile, so concurrent
appenders do not interleave. A crash can therefore at worst leave a
truncated *last* line. The next append notices that the file does not end
with a newline and starts on a fresh line, and :meth:`ResultsStore.records`
warns about the broken line and skips it.
"""
from __future__ import annotations

import json
import os
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from dkm.protocol import registry
from dkm.protocol.results._record import record_arithmetic, records_to_dataframe, validate_record
from dkm.reproducibility.arithmetic import Arithmetic

try:
    import fcntl
except ImportError:  # Windows: appends are not locked against each other.
    fcntl = None


class ResultsStore:
    """An append-only JSON Lines file of run records.

    Parameters
    ----------
    path : str or os.PathLike
        The file; it and its parent directories are created on the first
        append.

    Examples
    --------
    >>> store = ResultsStore("results/usps.jsonl")          # doctest: +SKIP
    >>> if not store.contains(record["config_hash"]):        # doctest: +SKIP
    ...     store.append(record)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.path)!r})"

    @contextmanager
    def _locked_append_fd(self) -> Iterator[int]:
        """An append-mode descriptor of the file, exclusively locked if possible."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)  # closing releases the lock

    @staticmethod
    def _ends_with_newline(fd: int) -> bool:
        """True for an empty file or one whose last byte is a newline."""
        size = os.fstat(fd).st_size
        return size == 0 or os.pread(fd, 1, size - 1) == b"\n"

    def append(self, record: Mapping[str, Any]) -> None:
        """Validate a record and append it as one line, flushed to disk.

        If the file ends with a truncated line (a crash during an earlier
        append), the record starts on a new line so that the broken fragment
        stays on a line of its own.

        Raises
        ------
        ValueError
            If the record does not follow the schema (:func:`validate_record`).
        """
        validate_record(record)
        line = json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
        with self._locked_append_fd() as fd:
            data = line.encode("utf-8")
            if not self._ends_with_newline(fd):
                data = b"\n" + data
            view = memoryview(data)
            while view:  # one write for a regular file; loop only on a short write
                view = view[os.write(fd, view) :]
            os.fsync(fd)

    def _parse(self, number: int, line: bytes) -> dict[str, Any] | None:
        """The record on a line, or None (with a warning) when it is unusable."""
        try:
            record = json.loads(line)
            validate_record(record, declared=False)
        except ValueError as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            warnings.warn(
                f"{self.path}:{number}: skipping an unreadable record ({error})",
                RuntimeWarning,
                stacklevel=3,
            )
            return None
        return record

    def records(self) -> list[dict[str, Any]]:
        """Every valid record, in file order, whatever the process imported before.

        A line that is not valid JSON (typically the truncated last line of a
        crashed append) or not a valid record is skipped with a
        ``RuntimeWarning`` that names the file and the line number. Blank
        lines are ignored. A missing file holds no records.

        A record of a method nobody declared (:data:`dkm.protocol.registry.METHODS`:
        a plugin's, read without the plugin) is valid: it is kept, and one
        ``RuntimeWarning`` per read names those methods and counts their
        records. The tables (:func:`dkm.book.tables.build`), which label rows
        by the registry, leave such records out.
        """
        if not self.path.exists():
            return []
        records = []
        for number, line in enumerate(self.path.read_bytes().split(b"\n"), start=1):
            record = self._parse(number, line) if line.strip() else None
            if record is not None:
                records.append(record)
        undeclared = Counter(r["method"] for r in records if r["method"] not in registry.METHODS)
        if undeclared:
            methods = ", ".join(f"{method} ({count})" for method, count in undeclared.items())
            warnings.warn(
                f"{self.path}: {undeclared.total()} "
                f"record{'' if undeclared.total() == 1 else 's'} of methods nobody declared, kept "
                f"(the tables leave them out): {methods}; declare them with --plugin MODULE "
                f"or an entry point of the group {registry.ENTRY_POINT_GROUP}",
                RuntimeWarning,
                stacklevel=2,
            )
        return records

    def completed_hashes(self) -> set[str]:
        """The ``config_hash`` of every valid record."""
        return {record["config_hash"] for record in self.records()}

    def contains(self, config_hash: str) -> bool:
        """True if a valid record with this ``config_hash`` is stored."""
        return config_hash in self.completed_hashes()

    def to_dataframe(self) -> pd.DataFrame:
        """The records as a flat DataFrame (see :func:`records_to_dataframe`)."""
        return records_to_dataframe(self.records())

    def arithmetics(self) -> set[Arithmetic]:
        """The arithmetics of its records (:func:`record_arithmetic`); empty for no record."""
        return {record_arithmetic(record) for record in self.records()}


def check_store_arithmetic(store: ResultsStore, arithmetic: Arithmetic) -> None:
    """Refuse to add runs of ``arithmetic`` to a store whose records are of another.

    A store holds the runs of one arithmetic: the same configuration in the two would
    otherwise sit side by side as two sets of numbers for one table.

    Raises
    ------
    ValueError
        Naming the store's arithmetic and how to run in it, or to choose another store.
    """
    others = sorted(store.arithmetics() - {arithmetic})
    if others:
        option = "--native" if others == ["native"] else "--reproducible"
        raise ValueError(f"{store.path} holds runs made in the {' and '.join(others)} "
                         f"arithmetic, and this process runs in the {arithmetic} one: run in the "
                         f"store's arithmetic ({option} on the command line, dkm.reproducibility.arithmetic in "
                         "Python) or give another results store")
