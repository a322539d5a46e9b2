"""What chooses a CPU's kernels: its vector instruction sets and the environment variables that
oneDNN, XLA, OpenMP and TensorFlow's thread pools read when they start.

Read by the records' provenance (:mod:`dkm.protocol.provenance`) and the reproducible
arithmetic (:mod:`dkm.reproducibility.arithmetic`). No TensorFlow needed, but for
:func:`onednn_enabled`.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["VECTOR_EXTENSIONS", "ARITHMETIC_VARIABLES", "CHECKED_TENSORFLOW",
           "arithmetic_environment", "checked_tensorflow", "cpuinfo_fields", "onednn_enabled"]

#: The CPU flags of the vector instruction sets that oneDNN and XLA may choose kernels for.
VECTOR_EXTENSIONS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                     "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16",
                     "amx_int8")
#: Environment variables that change which kernels run or how many threads share the work.
ARITHMETIC_VARIABLES = ("TF_ENABLE_ONEDNN_OPTS", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA",
                        "XLA_FLAGS", "TF_XLA_FLAGS", "OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS",
                        "TF_NUM_INTEROP_THREADS", "TF_DETERMINISTIC_OPS")
#: The TensorFlow releases whose private interfaces this layer was checked with, by version
#: prefix: the lock's (``requirements.lock``).
CHECKED_TENSORFLOW = ("2.21.",)
# TensorFlow's flag of a persistent compilation cache names a folder, not a kernel
_CACHE_FLAG = "--tf_xla_persistent_cache_directory"


def arithmetic_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The variables of :data:`ARITHMETIC_VARIABLES` that are set, without a persistent
    compilation cache's flag (which names a folder, not a kernel)."""
    settings = {name: " ".join(flag for flag in environ.get(name, "").split()
                               if not flag.startswith(_CACHE_FLAG))
                for name in ARITHMETIC_VARIABLES}
    return {name: value for name, value in settings.items() if value}


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


def checked_tensorflow() -> bool:
    """Whether the installed TensorFlow is one of :data:`CHECKED_TENSORFLOW` (imports it)."""
    import tensorflow as tf

    return tf.__version__.startswith(CHECKED_TENSORFLOW)


def onednn_enabled() -> bool | None:
    """Whether TensorFlow's oneDNN kernels are on, as TensorFlow itself decided: its
    ``IsMklEnabled``, a private interface, read only from a TensorFlow of
    :data:`CHECKED_TENSORFLOW`; None elsewhere, or where it is missing (imports TensorFlow)."""
    if not checked_tensorflow():
        return None
    try:
        from tensorflow.python.util import _pywrap_util_port
    except ImportError:
        return None
    enabled = getattr(_pywrap_util_port, "IsMklEnabled", None)
    return bool(enabled()) if enabled is not None else None
