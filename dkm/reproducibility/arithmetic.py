"""Reproducible arithmetic: kernels capped at AVX2 on x86-64 CPUs of different instruction sets.

On a CPU, the bits of a fit depend on more than its inputs. oneDNN (TensorFlow's
matrix products) and XLA (the compiled training epochs) pick their kernels for
the host's widest vector instruction set, so a run on an AVX-512 CPU may round
differently from the same run on an AVX2 CPU, and the two fits drift apart over
thousands of steps. TensorFlow turns its oneDNN kernels on by default only on
CPUs with neural-network instructions (AVX512_VNNI, AVX512_BF16, AVX_VNNI or
AMX: ``DefaultOneDnnPolicy`` in TensorFlow's ``port.cc``) and runs its own
(Eigen's) kernels elsewhere. And XLA's "platform dependent math", on by default,
may give "faster code at the expense of consistent results across CPUs" (its
flag's description). The reproducible
arithmetic therefore turns TensorFlow's oneDNN kernels off
(``TF_ENABLE_ONEDNN_OPTS=0``) and caps oneDNN at AVX2 wherever it still runs,
caps XLA at AVX2 (an instruction set every x86-64 server and desktop CPU of the
last decade has) without its platform-dependent math, and runs OpenMP on one
thread: scikit-learn's k-means (which starts the centres of the pretrained
methods) splits its sums between OpenMP threads, so its bits depend on their
number. TensorFlow's own intra-op pool splits a larger fit's sums too (a small
fit keeps its bits on 1 or 2 threads, ``tests/test_arithmetic.py`` checks it; a
quarter of the digits does not), so the mode runs it on
:data:`REPRODUCIBLE_INTRA_OP_THREADS` threads whatever the machine's cores,
unless ``TF_NUM_INTRAOP_THREADS`` names another number (the tests and ``make
book`` use one); a record names the number and an audit reruns it on as many
(:func:`recorded_intra_op_threads`). And TensorFlow's matrix products compute in
blocks whose sizes Eigen works out from the CPU's cache sizes, so the mode pins
those to :data:`REPRODUCIBLE_CACHE_SIZES` (:mod:`dkm.reproducibility.cache_sizes`). That test
file also compares, on each machine the tests run on, a small fit with a
fixture's bits; the book's chapter on reproducing says on which CPUs they agree.

The settings are environment variables that TensorFlow, oneDNN, XLA and OpenMP
read when they start: :func:`use_reproducible_arithmetic` sets them for the whole
process, limits the thread pools of libraries loaded already, and must run before
TensorFlow is imported (``python -m dkm run --reproducible`` does); it pins the
cache sizes too, in TensorFlow's libraries, which it loads. A process started with
the variables already set (by a parent in the mode: a Dask worker, say) pins them by
calling :func:`pin_reproducible_cache_sizes` before its first product. A record
names the settings and the sizes in its provenance
(:func:`dkm.protocol.provenance.arithmetic_settings`). No TensorFlow import needed.
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import Literal

from dkm.reproducibility.cache_sizes import CacheSizes, pin_cache_sizes, tensorflow_cache_sizes
from dkm.reproducibility.kernel_settings import cpuinfo_fields

__all__ = ["ARITHMETICS", "Arithmetic", "REPRODUCIBLE_ISA", "REPRODUCIBLE_XLA_FLAGS",
           "REPRODUCIBLE_CACHE_SIZES", "pin_reproducible_cache_sizes",
           "REPRODUCIBLE_INTRA_OP_THREADS", "intra_op_threads", "recorded_intra_op_threads",
           "recorded_arithmetic",
           "reproducible_environment", "use_reproducible_arithmetic", "is_reproducible",
           "current_arithmetic"]

#: The two arithmetics a run may be made in: the CPU's own kernels, or the reproducible ones.
Arithmetic = Literal["native", "reproducible"]
ARITHMETICS: tuple[Arithmetic, ...] = ("native", "reproducible")

#: The instruction set every kernel is capped at.
REPRODUCIBLE_ISA = "AVX2"
#: The XLA flags of the reproducible arithmetic, each replacing any value of its own flag.
REPRODUCIBLE_XLA_FLAGS = (f"--xla_cpu_max_isa={REPRODUCIBLE_ISA}",
                          "--xla_cpu_enable_platform_dependent_math=false")
#: TensorFlow's intra-op threads in the reproducible arithmetic where ``TF_NUM_INTRAOP_THREADS``
#: names no number: a fixed count rather than one per core, since it can change a fit's bits.
REPRODUCIBLE_INTRA_OP_THREADS = 2
#: The L1 data, L2 and L3 cache sizes (bytes) by which the mode's matrix products block their sums,
#: whatever the CPU's: those Eigen read (``cpuid``'s, as it decodes them) on the CPU that made
#: the mode's first USPS records, so that those records stay the mode's.
REPRODUCIBLE_CACHE_SIZES: CacheSizes = (32 * 1024, 512 * 1024, 256 * 1024 * 1024)


def reproducible_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The variables to set (on top of ``environ``) for the reproducible arithmetic.

    ``TF_ENABLE_ONEDNN_OPTS`` turns TensorFlow's oneDNN kernels off and
    ``ONEDNN_MAX_CPU_ISA`` caps oneDNN; :data:`REPRODUCIBLE_XLA_FLAGS` are added to
    the ``XLA_FLAGS`` already set, whose other flags are kept; ``OMP_NUM_THREADS``
    is 1; ``TF_NUM_INTRAOP_THREADS`` keeps its value in ``environ``, or is
    :data:`REPRODUCIBLE_INTRA_OP_THREADS`.
    """
    names = {flag.split("=")[0] for flag in REPRODUCIBLE_XLA_FLAGS}
    xla_flags = [flag for flag in environ.get("XLA_FLAGS", "").split()
                 if flag.split("=")[0] not in names]
    return {"TF_ENABLE_ONEDNN_OPTS": "0",
            "ONEDNN_MAX_CPU_ISA": REPRODUCIBLE_ISA,
            "XLA_FLAGS": " ".join([*xla_flags, *REPRODUCIBLE_XLA_FLAGS]),
            "OMP_NUM_THREADS": "1",
            "TF_NUM_INTRAOP_THREADS": (environ.get("TF_NUM_INTRAOP_THREADS")
                                       or str(REPRODUCIBLE_INTRA_OP_THREADS))}


def intra_op_threads(environ: Mapping[str, str] = os.environ) -> int:
    """The number of intra-op threads TensorFlow starts with in a process of ``environ``:
    ``TF_NUM_INTRAOP_THREADS``, or one per core the process may run on."""
    return int(environ.get("TF_NUM_INTRAOP_THREADS") or 0) or len(os.sched_getaffinity(0))


def recorded_intra_op_threads(provenance: Mapping[str, object]) -> int | None:
    """The number of TensorFlow's intra-op threads a record's run had, from its provenance.

    Its ``arithmetic`` names the number (records made before it did: 0, and
    ``TF_NUM_INTRAOP_THREADS`` where it was set); where it does not, TensorFlow ran
    one per core, and the number of cores is the one its ``device`` names. None
    when the provenance tells neither.
    """
    arithmetic = provenance.get("arithmetic")
    if isinstance(arithmetic, Mapping):
        environment = arithmetic.get("environment") or {}
        named = (int(arithmetic.get("intra_op_threads") or 0)
                 or int(environment.get("TF_NUM_INTRAOP_THREADS") or 0))
        if named:
            return named
    cores = re.search(r"\((\d+) cores\)", str(provenance.get("device", "")))
    return int(cores.group(1)) if cores else None


def recorded_arithmetic(provenance: Mapping[str, object]) -> Arithmetic:
    """The arithmetic a run was made in, as its provenance's settings describe it (a record's,
    an audit's or a snapshot's ``provenance``): ``"native"`` where it names none, as
    provenances written before the settings were recorded do."""
    settings = provenance.get("arithmetic")
    environment = settings.get("environment") if isinstance(settings, Mapping) else None
    return current_arithmetic(environment or {})


def is_reproducible(environment: Mapping[str, str]) -> bool:
    """Whether ``environment`` (a process's, or a record's ``arithmetic.environment``) is the
    reproducible arithmetic's (:func:`reproducible_environment`)."""
    xla_flags = environment.get("XLA_FLAGS", "").split()
    return (environment.get("TF_ENABLE_ONEDNN_OPTS") == "0"
            and environment.get("ONEDNN_MAX_CPU_ISA") == REPRODUCIBLE_ISA
            and all(flag in xla_flags for flag in REPRODUCIBLE_XLA_FLAGS)
            and environment.get("OMP_NUM_THREADS") == "1")


def current_arithmetic(environ: Mapping[str, str] = os.environ) -> Arithmetic:
    """The arithmetic this process runs in (or ``environ`` describes): ``"reproducible"`` when
    its environment is :func:`reproducible_environment`'s, ``"native"`` otherwise.

    A run's arithmetic is part of what the run is: its record names it
    (:func:`dkm.protocol.experiments.run_params`), so that the same configuration
    and seed in the two arithmetics are two runs with two configuration hashes.
    """
    return "reproducible" if is_reproducible(environ) else "native"


def use_reproducible_arithmetic(cpuinfo: str | None = None) -> None:
    """Choose the reproducible arithmetic for this process (:func:`reproducible_environment`):
    kernels capped at AVX2 on every x86-64 CPU, one OpenMP thread, TensorFlow's intra-op
    threads fixed and the matrix products' cache sizes pinned
    (:func:`pin_reproducible_cache_sizes`). The settings are the process's: every fit that
    follows computes in the mode, the user's own TensorFlow code too.

    Parameters
    ----------
    cpuinfo : str, optional
        The text of ``/proc/cpuinfo``; read from there when not given.

    Raises
    ------
    RuntimeError
        When TensorFlow is imported already (its libraries have read their
        settings: set the variables before starting Python instead), when
        the CPU lacks AVX2, or when TensorFlow's cache sizes cannot be pinned.
    """
    if "tensorflow" in sys.modules:
        settings = " ".join(f"{k}={v!r}" for k, v in reproducible_environment().items())
        raise RuntimeError("the reproducible arithmetic must be chosen before TensorFlow is "
                           f"imported; start Python with {settings} in the environment "
                           "instead, and import dkm before TensorFlow")
    flags = cpuinfo_fields(cpuinfo).get("flags")
    if flags is not None and "avx2" not in flags.split():
        raise RuntimeError("this CPU has no AVX2: the reproducible arithmetic cannot run here")
    os.environ.update(reproducible_environment())
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # the OpenMP and BLAS pools of the libraries loaded already
    pin_reproducible_cache_sizes()


def pin_reproducible_cache_sizes() -> None:
    """Pin TensorFlow's matrix products to :data:`REPRODUCIBLE_CACHE_SIZES` where this process
    runs in the reproducible arithmetic (:func:`current_arithmetic`); nothing otherwise, or
    where they are pinned already.

    :func:`use_reproducible_arithmetic` calls it; a process whose parent set the mode's
    variables calls it before its first product. TensorFlow's start-up lines, written as its
    libraries load, are silenced (:func:`dkm.startup.native_stderr_silenced`).

    Raises
    ------
    RuntimeError
        When TensorFlow's libraries hold no copy of the sizes to pin
        (:mod:`dkm.reproducibility.cache_sizes`).
    """
    if (current_arithmetic() != "reproducible"
            or tensorflow_cache_sizes() == REPRODUCIBLE_CACHE_SIZES):
        return
    from dkm.startup import native_stderr_silenced

    with native_stderr_silenced():
        pin_cache_sizes(REPRODUCIBLE_CACHE_SIZES)
