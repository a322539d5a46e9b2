"""What decides a run's numbers, recorded with it: the code, the libraries, the hardware.

A CPU run's float rounding can depend on the CPU's vector instruction set (XLA compiles for
the host's), so a record names the CPU (:func:`cpu_identity`) beside the versions.
"""
from __future__ import annotations

import functools
import os
import platform
import socket
from pathlib import Path

import numpy as np

import dkm
from dkm.checkpoints import code_version

__all__ = ["provenance", "cpu_identity"]


@functools.cache
def provenance() -> dict[str, str]:
    """Package, library and hardware versions recorded with every run."""
    import sklearn
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        device = f"GPU: {details.get('device_name', gpus[0].name)} x{len(gpus)}"
    else:
        device = f"CPU: {_cpu_name()} ({os.cpu_count()} cores)"
    return {
        "dkm_version": dkm.__version__, "git_commit": code_version(),
        "python": platform.python_version(), "tensorflow": tf.__version__,
        "numpy": np.__version__, "scikit_learn": sklearn.__version__,
        "device": device, "cpu": cpu_identity(), "hostname": socket.gethostname(),
    }


def cpu_identity(cpuinfo: str | None = None) -> str:
    """The CPU's vendor, family, model and stepping and its widest vector instruction set.

    A CPU run's float rounding can depend on them: XLA compiles for the host's
    instruction set. Read from ``/proc/cpuinfo`` (or the text given); the
    machine's architecture where that cannot be read.

    Examples
    --------
    >>> cpu_identity("vendor_id : AuthenticAMD\\ncpu family : 25\\nmodel : 17\\n"
    ...              "stepping : 1\\nflags : fpu sse4_2 avx avx2 avx512f")
    'AuthenticAMD family 25 model 17 stepping 1, avx512f'
    """
    fields = _cpuinfo_fields(cpuinfo)
    if "cpu family" not in fields:
        return platform.machine()
    flags = set(fields.get("flags", "").split())
    widest = next((isa for isa in ("avx512f", "avx2", "avx", "sse4_2") if isa in flags), "")
    return (f"{fields.get('vendor_id', '?')} family {fields['cpu family']} model "
            f"{fields.get('model', '?')} stepping {fields.get('stepping', '?')}"
            + (f", {widest}" if widest else ""))


def _cpuinfo_fields(cpuinfo: str | None = None) -> dict[str, str]:
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


def _cpu_name() -> str:
    return (_cpuinfo_fields().get("model name") or platform.processor()
            or platform.machine())
