"""The installed packages against the project's lock and against a record's.

A run's bits depend on the builds of the libraries that compute it (TensorFlow's kernels, XLA
and Eigen; NumPy; SciPy; scikit-learn's k-means++), not only on the code and the CPU. The
repository pins every package of its environment in ``requirements.lock`` (``make lock``);
a record names the lock's digest when the installed packages are the lock's
(:func:`lock_state`), and the versions of the packages that decide its numbers
(:data:`DECIDING_PACKAGES`), so that an audit can say when the packages, not the code or the
CPU, differ (:func:`version_differences`).
"""
from __future__ import annotations

import functools
import hashlib
import platform
import re
from importlib import metadata
from pathlib import Path
from typing import Mapping

__all__ = ["DECIDING_PACKAGES", "LOCK_FILE", "lock_pins", "lock_state", "deciding_versions",
           "version_differences"]

#: The repository's lock (``make lock`` writes it from ``pyproject.toml``); absent where the
#: package is installed from a wheel rather than from the repository.
LOCK_FILE = Path(__file__).resolve().parents[2] / "requirements.lock"

#: The packages whose builds decide a run's numbers: the provenance's key, the distribution's
#: name and the name a message gives it.
DECIDING_PACKAGES: dict[str, tuple[str, str]] = {
    "tensorflow": ("tensorflow", "TensorFlow"),
    "numpy": ("numpy", "NumPy"),
    "scipy": ("scipy", "SciPy"),
    "scikit_learn": ("scikit-learn", "scikit-learn"),
}

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", re.MULTILINE)


def _normalized(name: str) -> str:
    """A distribution's name as PEP 503 compares names."""
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(path: str | Path = LOCK_FILE) -> dict[str, str]:
    """The packages a lock file pins and their versions, by normalized name.

    Raises
    ------
    FileNotFoundError
        Where there is no lock file at ``path``.
    """
    return {_normalized(name): version for name, version in _PIN.findall(Path(path).read_text())}


def _installed() -> dict[str, str]:
    return {_normalized(dist.metadata["Name"]): dist.version
            for dist in metadata.distributions() if dist.metadata["Name"]}


@functools.cache
def lock_state(path: str | Path = LOCK_FILE) -> dict[str, object] | None:
    """The lock a run's environment was installed from, as its record names it.

    Returns
    -------
    dict or None
        ``digest``: the SHA-256 of the lock file; ``differs``: each package the lock pins that
        is missing here or installed at another version (``"tensorflow 2.22.0 installed, 2.21.0
        locked"``), empty when the environment is the lock's. None where there is no lock file
        (the package installed from a wheel).
    """
    path = Path(path)
    if not path.is_file():
        return None
    installed = _installed()
    differs = [f"{name} {installed.get(name, 'not')} installed, {version} locked"
               for name, version in sorted(lock_pins(path).items())
               if installed.get(name) != version]
    return {"digest": hashlib.sha256(path.read_bytes()).hexdigest(), "differs": differs}


def deciding_versions() -> dict[str, str]:
    """The installed versions of :data:`DECIDING_PACKAGES` and Python's, by provenance key
    (read from the distributions' metadata: nothing is imported)."""
    installed = _installed()
    versions = {key: installed.get(_normalized(dist), "not installed")
                for key, (dist, _) in DECIDING_PACKAGES.items()}
    return {**versions, "python": platform.python_version()}


def version_differences(recorded: Mapping[str, object],
                        here: Mapping[str, object] | None = None,
                        recorded_in: str = "the record") -> list[str]:
    """Each deciding package (and Python) whose version here is not the record's.

    Parameters
    ----------
    recorded : mapping
        A record's provenance (:func:`dkm.protocol.provenance.provenance`); a package it does
        not name is not compared.
    here : mapping, optional
        The versions to compare with; by default those installed (:func:`deciding_versions`).
    recorded_in : str
        What holds ``recorded``, as the messages name it.

    Returns
    -------
    list of str
        ``"TensorFlow 2.22.0 here, 2.21.0 in the record"`` for each package that differs, in
        the order of :data:`DECIDING_PACKAGES`, Python last.
    """
    here = deciding_versions() if here is None else here
    shown = {key: label for key, (_, label) in DECIDING_PACKAGES.items()} | {"python": "Python"}
    return [f"{label} {here.get(key)} here, {recorded[key]} in {recorded_in}"
            for key, label in shown.items()
            if key in recorded and recorded[key] != here.get(key)]
