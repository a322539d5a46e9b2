"""Where the named datasets' files live and how they arrive.

The data directory (:func:`get_data_home`), the description of a dataset's
file (:class:`_RemoteFile`: local path, SHA-256 digests, download source, how
to obtain it by hand), SHA-256 checks cached per process, atomic verified
downloads, and the errors that say which file is missing where. The only
function that touches the network is :func:`_open_url`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from numpy.typing import ArrayLike

from dkm._atomic import atomic_write

#: Environment variable naming the data directory.
DATA_HOME_VARIABLE = "DKM_DATA_HOME"

_SCIKIT_LEARN_HOME = "scikit_learn_data"
_DOWNLOAD_TIMEOUT_S = 60
_CHUNK_BYTES = 1 << 20


def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """Return the directory of the dataset files (it may not exist yet).

    Parameters
    ----------
    data_home : str or path-like, optional
        Explicit directory. When ``None``: the ``DKM_DATA_HOME`` environment
        variable, else ``$XDG_CACHE_HOME/dkm``, else ``~/.cache/dkm``.

    Returns
    -------
    pathlib.Path
    """
    if data_home is not None:
        return Path(data_home).expanduser()
    from_environment = os.environ.get(DATA_HOME_VARIABLE)
    if from_environment:
        return Path(from_environment).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "dkm"


@dataclasses.dataclass(frozen=True)
class _Options:
    """What :func:`load` passes on to the loader of a named dataset."""

    download: bool
    verify: bool
    rcv1_seed: int
    rcv1_rows: ArrayLike | None


@dataclasses.dataclass(frozen=True)
class _RemoteFile:
    """A file of a named dataset: where it lives and how to get it."""

    path: str
    sha256: tuple[str, ...]
    url: str | None
    how_to_obtain: str


def _digest_record(path: Path) -> Path:
    """The file recording the digest of a file this package downloaded."""
    return path.with_name(path.name + ".sha256")


def _accepted_digests(spec: _RemoteFile, path: Path) -> tuple[str, ...]:
    """The pinned digests of ``spec`` plus the one recorded at download time."""
    record = _digest_record(path)
    if not record.is_file():
        return spec.sha256
    return (*spec.sha256, record.read_text(encoding="ascii").split()[0])


def _record_digest(path: Path) -> None:
    """Record the digest of a freshly built file, in ``sha256sum`` format."""
    _digest_record(path).write_text(f"{_file_sha256(path)}  {path.name}\n", encoding="ascii")


@functools.lru_cache(maxsize=None)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    """SHA-256 of a file; cached per path, size and modification time."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    """SHA-256 of ``path``, hashed once per process unless the file changes."""
    status = path.stat()
    return _sha256_of(str(path.resolve()), status.st_size, status.st_mtime_ns)


def _verify(spec: _RemoteFile, path: Path) -> None:
    """Raise if the digest of ``path`` is not one of those accepted."""
    digest = _file_sha256(path)
    accepted = _accepted_digests(spec, path)
    if digest not in accepted:
        raise ValueError(
            f"checksum mismatch for {path}: its SHA-256 is {digest}, expected "
            f"{' or '.join(accepted)}. The file is corrupt or a different version. "
            f"Delete it to have it downloaded again, or replace it: {spec.how_to_obtain} "
            "Pass verify=False to skip this check."
        )


def _open_url(url: str) -> BinaryIO:
    """Open ``url`` for reading (the one place that touches the network)."""
    import urllib.request

    return urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S)


def _download(url: str, destination: Path, accepted: tuple[str, ...]) -> None:
    """Download ``url`` to ``destination``, verified, via an atomic rename.

    The bytes go to a temporary file in the destination directory, which
    replaces ``destination`` only once its digest is one of ``accepted``; on
    any failure the temporary file is removed.
    """
    with atomic_write(destination) as output, _open_url(url) as response:
        digest = hashlib.sha256()
        for chunk in iter(lambda: response.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
            output.write(chunk)
        if digest.hexdigest() not in accepted:
            raise ValueError(
                f"the file downloaded from {url} has SHA-256 {digest.hexdigest()}, expected "
                f"{' or '.join(accepted)}; it was discarded and nothing was written to "
                f"{destination}"
            )


def _missing_message(what: str, path: Path, reason: str, how_to_obtain: str) -> str:
    """Say which file is expected where, why it is absent and how to get it."""
    return (
        f"{what} is not available: expected {path} ({reason}). {how_to_obtain} "
        f"Then put it at that path, or point data_home (or the {DATA_HOME_VARIABLE} "
        "environment variable) to the directory that holds it."
    )


def _fetch_failure(options: _Options, err: OSError) -> str:
    """Why scikit-learn's fetcher could not provide a dataset."""
    if not options.download:
        return "download=False"
    return f"scikit-learn's download failed: {err}"


def _local_file(spec: _RemoteFile, home: Path, options: _Options) -> Path:
    """Path of a verified local copy of ``spec``, downloading it if needed."""
    path = home / spec.path
    if path.is_file():
        if options.verify:
            _verify(spec, path)
        return path
    if not options.download or spec.url is None:
        reason = "download=False" if spec.url is not None else "no download source"
        raise FileNotFoundError(_missing_message(spec.path, path, reason, spec.how_to_obtain))
    try:
        _download(spec.url, path, spec.sha256)
    except OSError as err:
        reason = f"the download from {spec.url} failed: {err}"
        message = _missing_message(spec.path, path, reason, spec.how_to_obtain)
        raise FileNotFoundError(message) from err
    return path


@contextlib.contextmanager
def _reading(spec: _RemoteFile, path: Path) -> Iterator[None]:
    """Turn a failure to read a named dataset's file into a clear error."""
    try:
        yield
    except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile) as err:
        raise ValueError(
            f"cannot read {path} ({type(err).__name__}: {err}). The file is corrupt or "
            f"not the expected one: delete it to have it downloaded again, or replace it. "
            f"{spec.how_to_obtain}"
        ) from err
