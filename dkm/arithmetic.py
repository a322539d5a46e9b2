"""Reproducible arithmetic: kernels capped at AVX2 and one OpenMP thread, so that x86-64 CPUs of
different instruction sets run the same kernels.

On a CPU, oneDNN (TensorFlow's matrix products) and XLA (the compiled training
epochs) pick their kernels for the host's widest vector instruction set: a run
on an AVX-512 CPU may round differently from the same run on an AVX2 CPU, and
the two fits drift apart over thousands of steps. Capping both at AVX2, an
instruction set every x86-64 server and desktop CPU of the last decade has,
makes them run the same kernels everywhere (``tests/test_arithmetic.py`` checks,
on each machine the tests run on, that a small fit gives a fixture's bits).
scikit-learn's k-means (which
starts the centres of the pretrained methods) splits its sums between OpenMP
threads, so its bits depend on their number: the reproducible arithmetic runs
it on one. TensorFlow's own thread pools do not change the bits
(``tests/test_arithmetic.py`` checks 1 against 2 intra-op threads).

The caps are environment variables that oneDNN, XLA and OpenMP read when they
start: :func:`use_reproducible_arithmetic` sets them (and limits the thread
pools of libraries loaded already) and must run before TensorFlow is imported
(``python -m dkm run --reproducible`` does). A record names them in its
provenance (:func:`dkm.protocol.provenance.arithmetic_settings`). No TensorFlow
needed.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["REPRODUCIBLE_ISA", "VECTOR_EXTENSIONS", "ARITHMETIC_VARIABLES", "cpuinfo_fields",
           "reproducible_environment", "use_reproducible_arithmetic", "is_reproducible"]

#: The CPU flags of the vector instruction sets that oneDNN and XLA may choose kernels for.
VECTOR_EXTENSIONS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                     "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16",
                     "amx_int8")
#: Environment variables that change which kernels run or how many threads share the work.
ARITHMETIC_VARIABLES = ("TF_ENABLE_ONEDNN_OPTS", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA",
                        "XLA_FLAGS", "TF_XLA_FLAGS", "OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS",
                        "TF_NUM_INTEROP_THREADS", "TF_DETERMINISTIC_OPS")

#: The instruction set every kernel is capped at.
REPRODUCIBLE_ISA = "AVX2"
_XLA_CAP = f"--xla_cpu_max_isa={REPRODUCIBLE_ISA}"


def reproducible_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The variables to set (on top of ``environ``) for the reproducible arithmetic.

    ``ONEDNN_MAX_CPU_ISA`` caps oneDNN; XLA's flag is added to the ``XLA_FLAGS``
    already set, which are kept; ``OMP_NUM_THREADS`` is 1.
    """
    xla_flags = [flag for flag in environ.get("XLA_FLAGS", "").split()
                 if not flag.startswith("--xla_cpu_max_isa=")]
    return {"ONEDNN_MAX_CPU_ISA": REPRODUCIBLE_ISA,
            "XLA_FLAGS": " ".join([*xla_flags, _XLA_CAP]),
            "OMP_NUM_THREADS": "1"}


def is_reproducible(environment: Mapping[str, str]) -> bool:
    """Whether ``environment`` (a process's, or a record's ``arithmetic.environment``) is the
    reproducible arithmetic's: oneDNN and XLA capped at :data:`REPRODUCIBLE_ISA`, one OpenMP
    thread."""
    return (environment.get("ONEDNN_MAX_CPU_ISA") == REPRODUCIBLE_ISA
            and _XLA_CAP in environment.get("XLA_FLAGS", "").split()
            and environment.get("OMP_NUM_THREADS") == "1")


def use_reproducible_arithmetic(cpuinfo: str | None = None) -> None:
    """Cap this process's kernels at AVX2 and its OpenMP threads at one
    (:func:`reproducible_environment`).

    Parameters
    ----------
    cpuinfo : str, optional
        The text of ``/proc/cpuinfo``; read from there when not given.

    Raises
    ------
    RuntimeError
        When TensorFlow is imported already (its libraries have read their
        settings: set the variables before starting Python instead), or when
        the CPU lacks AVX2.
    """
    if "tensorflow" in sys.modules:
        settings = " ".join(f"{k}={v!r}" for k, v in reproducible_environment().items())
        raise RuntimeError("the reproducible arithmetic must be chosen before TensorFlow is "
                           f"imported; start Python with {settings} in the environment instead")
    flags = cpuinfo_fields(cpuinfo).get("flags")
    if flags is not None and "avx2" not in flags.split():
        raise RuntimeError("this CPU has no AVX2: the reproducible arithmetic cannot run here")
    os.environ.update(reproducible_environment())
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # the OpenMP and BLAS pools of the libraries loaded already


def cpuinfo_fields(cpuinfo: str | None = None) -> dict[str, str]:
    """The first processor's fields of ``/proc/cpuinfo`` (or of the text given); none when
    it cannot be read."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return {}
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields
