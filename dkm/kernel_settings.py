"""What chooses a CPU's kernels: its vector instruction sets and the environment variables that
oneDNN, XLA, OpenMP and TensorFlow's thread pools read when they start.

Read by the records' provenance (:mod:`dkm.protocol.provenance`), the compilation cache's
folder (:mod:`dkm.compilation`) and the reproducible arithmetic (:mod:`dkm.arithmetic`). No
TensorFlow needed.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["VECTOR_EXTENSIONS", "ARITHMETIC_VARIABLES", "cpuinfo_fields"]

#: The CPU flags of the vector instruction sets that oneDNN and XLA may choose kernels for.
VECTOR_EXTENSIONS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                     "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16",
                     "amx_int8")
#: Environment variables that change which kernels run or how many threads share the work.
ARITHMETIC_VARIABLES = ("TF_ENABLE_ONEDNN_OPTS", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA",
                        "XLA_FLAGS", "TF_XLA_FLAGS", "OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS",
                        "TF_NUM_INTEROP_THREADS", "TF_DETERMINISTIC_OPS")


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
