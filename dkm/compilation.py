"""XLA's persistent compilation cache: a rerun loads the training epochs it compiled before.

The training loop (:mod:`dkm.training`) runs each epoch as one XLA-compiled
function. Compiling it takes a few seconds, as long as several epochs of a small
dataset, and without a cache a process that runs again what an earlier one ran
(the same command, notebook, benchmark or test) compiles the same functions
again. TensorFlow can keep the compiled executables in a folder (its
``--tf_xla_persistent_cache_directory`` flag) and load them instead of
compiling; a loaded executable is the one the compiler produced, so the numbers
do not change (``tests/test_compilation.py`` checks that a fit loaded from the
cache gives the compiled fit's bits).

Which runs find an entry: TensorFlow names a compiled function after its trace,
and a trace's name counts the functions the process traced before it. So a
process finds its epochs in the cache when it repeats the runs of an earlier
process in the same order (a rerun), not when another program reaches the same
network. (Within one process, networks of the same graph share one compiled
function whatever the order: :mod:`dkm.shared_functions`.) Loading an entry,
TensorFlow first tries to read it as text and logs one harmless line, ``Error
parsing text-format tensorflow.XlaSerializedCacheEntry``, before reading it as
the binary it is.

TensorFlow keys a cached executable by the compiled function and its input
shapes only, not by the machine it was compiled for: an executable compiled on
an AVX-512 CPU, or without the reproducible arithmetic's cap
(:mod:`dkm.arithmetic`), would be loaded on a CPU or in a mode it does not
belong to. So the cache here is a folder per *arithmetic*: the folder's name
hashes TensorFlow's version, the CPU (vendor, family, model, stepping and every
flag) and the environment variables that choose kernels
(:data:`dkm.kernel_settings.ARITHMETIC_VARIABLES`).

Where it lives: ``$DKM_XLA_CACHE`` when set (``off`` turns the cache off), else
``$XDG_CACHE_HOME/dkm/xla`` (``~/.cache/dkm/xla``). TensorFlow reads its flag
once, when it creates its first tensor in the process, so
:func:`use_compilation_cache` runs when :mod:`dkm` is imported (a program that
made tensors before importing the package goes without the cache); a persistent
cache folder already named in ``TF_XLA_FLAGS`` is kept.
TensorFlow creates the folder when it saves its first entry, and writes each
entry to a temporary file that it then renames, so processes can share a folder.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from dkm.kernel_settings import ARITHMETIC_VARIABLES, cpuinfo_fields

__all__ = ["CACHE_VARIABLE", "arithmetic_environment", "compilation_cache_directory",
           "use_compilation_cache"]

#: The environment variable naming the cache's root folder, or ``off``.
CACHE_VARIABLE = "DKM_XLA_CACHE"
_FLAG = "--tf_xla_persistent_cache_directory"
_CPU_FIELDS = ("vendor_id", "cpu family", "model", "stepping", "flags")
_TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-intel", "tf-nightly",
                             "tf-nightly-cpu")


def arithmetic_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The variables of :data:`~dkm.kernel_settings.ARITHMETIC_VARIABLES` that are set, without
    the cache's own flag (which names a folder, not a kernel)."""
    settings = {name: " ".join(flag for flag in environ.get(name, "").split()
                               if not flag.startswith(_FLAG))
                for name in ARITHMETIC_VARIABLES}
    return {name: value for name, value in settings.items() if value}


def _arithmetic_key(environ: Mapping[str, str], cpuinfo: str | None, tensorflow: str) -> str:
    """A short hash of what decides the compiled code besides the function itself."""
    cpu = cpuinfo_fields(cpuinfo)
    described = {
        "tensorflow": tensorflow,
        "cpu": {field: cpu.get(field, "") for field in _CPU_FIELDS},
        "environment": arithmetic_environment(environ),
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:16]


def _installed_tensorflow() -> str | None:
    """The installed TensorFlow's version, from its distribution's metadata."""
    for distribution in _TENSORFLOW_DISTRIBUTIONS:
        try:
            return f"{distribution} {metadata.version(distribution)}"
        except metadata.PackageNotFoundError:
            continue
    return None


def compilation_cache_directory(environ: Mapping[str, str] = os.environ,
                                cpuinfo: str | None = None,
                                tensorflow: str | None = None) -> Path | None:
    """The folder of this machine's and this arithmetic's compiled epochs; None when off.

    Parameters
    ----------
    environ : mapping, optional
        The environment (``os.environ`` by default): ``DKM_XLA_CACHE``,
        ``XDG_CACHE_HOME`` and the variables that choose kernels.
    cpuinfo : str, optional
        The text of ``/proc/cpuinfo``; read from there when not given.
    tensorflow : str, optional
        TensorFlow's version; the installed one's when not given (read from the
        installed distributions, without importing TensorFlow).

    Returns
    -------
    pathlib.Path or None
        ``ROOT/<16 hex digits>``; None when ``DKM_XLA_CACHE`` is ``off``, or when
        no installed TensorFlow names its version.
    """
    root = _cache_root(environ)
    if root is None:
        return None
    if tensorflow is None:
        tensorflow = _installed_tensorflow()
        if tensorflow is None:
            return None
    return root / _arithmetic_key(environ, cpuinfo, tensorflow)


def _cache_root(environ: Mapping[str, str]) -> Path | None:
    """The folder that holds one folder per arithmetic; None when the cache is off."""
    root = environ.get(CACHE_VARIABLE, "").strip()
    if root.lower() == "off":
        return None
    if not root:
        base = environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        root = str(Path(base) / "dkm" / "xla")
    return Path(root).expanduser()


def use_compilation_cache() -> Path | None:
    """Point TensorFlow's persistent XLA cache at :func:`compilation_cache_directory`.

    Adds the flag to ``TF_XLA_FLAGS``, or moves a flag that names another folder
    of the package's root (one chosen for another arithmetic, by this process
    before its arithmetic changed, or by the process that started it) to this
    environment's folder: TensorFlow's cache does not tell executables compiled
    under other XLA flags apart. A folder named elsewhere (the user's) is kept.
    Does nothing when the cache is off. A folder that cannot be created or
    written to turns the cache off with a warning (TensorFlow would otherwise
    fail the compilation that tries to save into it). Has an effect only before
    TensorFlow creates its first tensor, so :func:`dkm.arithmetic.use_reproducible_arithmetic`
    calls it again after changing the arithmetic.

    Returns
    -------
    pathlib.Path or None
        The folder in use (the one ``TF_XLA_FLAGS`` names, when it names the
        user's); None when the cache is off.
    """
    flags = os.environ.get("TF_XLA_FLAGS", "").split()
    root = _cache_root(os.environ)
    named = [Path(flag.partition("=")[2]) for flag in flags if flag.startswith(_FLAG + "=")]
    if named and named[-1].parent != root:
        return named[-1]
    flags = [flag for flag in flags if not flag.startswith(_FLAG + "=")]
    directory = compilation_cache_directory()
    if directory is None:
        return None
    existing = next(folder for folder in (directory, *directory.parents) if folder.exists())
    if not (existing.is_dir() and os.access(existing, os.W_OK)):
        warnings.warn(f"the XLA compilation cache {directory} cannot be written to: every "
                      f"epoch function is compiled afresh; set {CACHE_VARIABLE} to a writable "
                      f"folder, or to 'off'", RuntimeWarning, stacklevel=2)
        os.environ["TF_XLA_FLAGS"] = " ".join(flags)
        return None
    os.environ["TF_XLA_FLAGS"] = " ".join([*flags, f"{_FLAG}={directory}"])
    return directory
