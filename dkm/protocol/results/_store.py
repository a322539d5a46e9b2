"""The JSON Lines store of run records: appended under a lock, one record per run whatever
runs at once, read back with the broken lines skipped, one arithmetic per store.

Crash safety
------------
:meth:`ResultsStore.append` writes a whole line with one ``write`` call on a
file opened in append mode, then flushes it to disk with ``os.fsync``; where
``fcntl`` exists it holds an exclusive ``flock`` meanwhile, so concurrent
appenders do not interleave. A crash can therefore at worst leave a
truncated *last* line. The next append notices that the file does not end
with a newline and starts on a fresh line, and :meth:`ResultsStore.records`
warns about the broken line and skips it.

One record per run
------------------
Several processes may run overlapping grids into one store. A process claims
a run (:meth:`ResultsStore.claim`) before it trains it: a lock on one byte,
named by the run's configuration hash, of the lock file beside the store
(``<store>.lock``). Another process that finds the run claimed leaves it, and
waits for it once its own runs are done; the claim goes with the process that
holds it, whether it ends or is killed, and a run its dead holder left
unfinished is then trained by the one that waited. :meth:`ResultsStore.append_new`
appends a record only when the store holds no record of its run, checked under
the append lock.
"""
from __future__ import annotations

import errno
import json
import os
import tempfile
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from dkm.protocol import registry
from dkm.protocol.results._record import record_arithmetic, records_to_dataframe, validate_record
from dkm.reproducibility.arithmetic import Arithmetic

try:
    import fcntl
except ImportError:  # Windows: appends are not locked against each other, nor runs claimed.
    fcntl = None


def _claim_offset(run: str) -> int:
    """The byte of the lock file that stands for a run: its configuration hash's first 60 bits."""
    return int(run[:15], 16)


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

    def check_writable(self) -> None:
        """Refuse, before anything is computed for it, a store that records cannot be
        appended to: a directory, a folder under a file, a file or folder that this process
        cannot write (its permissions, a read-only filesystem).

        The store's file is opened for appending (and closed, unchanged), or where it does
        not exist yet, a temporary file is made (and removed) in its nearest folder that
        exists; no other file is left behind.

        Raises
        ------
        ValueError
            One line naming the path and what to do.
        """
        if self.path.is_dir():
            raise ValueError(f"the results store {self.path} is a directory: name a file in it, "
                             f"e.g. {self.path / 'runs.jsonl'}")
        folder = self.path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            raise ValueError(f"the results store {self.path} cannot be made: {folder} is a file, "
                             "not a folder; name another store")
        for probed, probe in ((self.path, lambda: open(self.path, "ab")),
                              (folder, lambda: tempfile.TemporaryFile(dir=folder))):
            if probed == self.path and not self.path.exists():
                continue  # the lock file and the folders are made in ``folder``
            try:
                with probe():
                    pass
            except OSError as error:
                raise ValueError(f"the results store {self.path} cannot be written ({probed}: "
                                 f"{error.strerror or error}): name a store in a writable "
                                 "folder") from None

    @property
    def lock_path(self) -> Path:
        """The file whose bytes stand for the runs claimed (:meth:`claim`): ``<store>.lock``."""
        return self.path.with_name(self.path.name + ".lock")

    @contextmanager
    def claim(self, runs: Iterable[str], *, wait: bool = False) -> Iterator[set[str]]:
        """Claim runs for this process while the ``with`` block lasts, so that no other
        process trains them meanwhile.

        Parameters
        ----------
        runs : iterable of str
            Configuration hashes.
        wait : bool
            False: leave out the runs another process holds. True: wait until it lets
            them go (the runs are claimed in one order, so two waiting processes cannot
            hold each other up).

        Yields
        ------
        set of str
            The runs claimed: all of them where ``fcntl`` is missing (Windows). A claim ends
            with the block, or with the process; claims of one process do not exclude each
            other, and a process holds one :meth:`claim` of a store at a time.
        """
        runs = sorted(set(runs))
        if fcntl is None or not runs:
            yield set(runs)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            claimed = set()
            for run in runs:
                try:
                    fcntl.lockf(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB), 1,
                                _claim_offset(run))
                except OSError as error:
                    if error.errno not in (errno.EACCES, errno.EAGAIN):
                        raise
                    continue  # another process holds it
                claimed.add(run)
            yield claimed
        finally:
            os.close(fd)  # closing releases this process's claims

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
        with self._locked_append_fd() as fd:
            self._write(fd, record)

    def append_new(self, record: Mapping[str, Any]) -> bool:
        """Append a record as :meth:`append` does unless the store holds a valid record of its
        run (its ``config_hash``), checked under the append lock: another process may have
        made the run meanwhile.

        Returns
        -------
        bool
            Whether the record was appended.
        """
        validate_record(record)
        with self._locked_append_fd() as fd:
            size = os.fstat(fd).st_size
            held = {found["config_hash"]
                    for found in self._valid(os.pread(fd, size, 0), warn=False)}
            if record["config_hash"] in held:
                return False
            self._write(fd, record)
        return True

    def _write(self, fd: int, record: Mapping[str, Any]) -> None:
        """Write a record as one line on the locked descriptor, flushed to disk."""
        data = (json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
        if not self._ends_with_newline(fd):
            data = b"\n" + data
        view = memoryview(data)
        while view:  # one write for a regular file; loop only on a short write
            view = view[os.write(fd, view) :]
        os.fsync(fd)

    def _valid(self, data: bytes, *, warn: bool = True) -> list[dict[str, Any]]:
        """The valid records of the file's bytes, in order; each unusable line skipped, with a
        warning when ``warn``."""
        records = []
        for number, line in enumerate(data.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                validate_record(record, declared=False)
            except ValueError as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
                if warn:
                    warnings.warn(f"{self.path}:{number}: skipping an unreadable record ({error})",
                                  RuntimeWarning, stacklevel=3)
                continue
            records.append(record)
        return records

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
        records = self._valid(self.path.read_bytes())
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

    def require_records(self) -> list[dict[str, Any]]:
        """Its records (:meth:`records`), or a refusal where it has none to read.

        Raises
        ------
        FileNotFoundError
            When the file does not exist.
        ValueError
            When it is empty, or none of its lines is a record (a file of another kind): one
            line naming the file and what it holds.
        """
        if not self.path.is_file():
            raise FileNotFoundError(f"no results store at {self.path}")
        data = self.path.read_bytes()
        if not data.strip():
            raise ValueError(f"{self.path} holds no record (the file is empty): run "
                             f"`python -m dkm run ... --results {self.path}` first")
        if not self._valid(data, warn=False):
            raise ValueError(f"{self.path} is not a JSON Lines store of run records: none of its "
                             f"lines is a record; name a store that `python -m dkm run` wrote")
        return self.records()

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
