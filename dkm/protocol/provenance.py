"""What decides a run's numbers, recorded with it: the code, the libraries, the hardware.

A CPU run's float rounding can depend on the CPU's vector instruction set (oneDNN and XLA pick
their kernels for the host's), so a record names the CPU (:func:`cpu_identity`) beside the
versions and the lock the environment was installed from (:mod:`dkm.protocol.environment`),
and the settings that choose the kernels and split the work (:func:`arithmetic_settings`).
"""
from __future__ import annotations

import functools
import os
import platform
import socket

import dkm
from dkm.reproducibility.arithmetic import intra_op_threads
from dkm.reproducibility.cache_sizes import tensorflow_cache_sizes
from dkm.checkpoints import code_version
from dkm.reproducibility.kernel_settings import arithmetic_environment, onednn_enabled
from dkm.reproducibility.kernel_settings import VECTOR_EXTENSIONS, cpuinfo_fields
from dkm.protocol.environment import deciding_versions, lock_state

__all__ = ["provenance", "cpu_identity", "arithmetic_settings", "tensorflow_intra_op_threads"]

@functools.cache
def provenance() -> dict[str, str]:
    """Package, library and hardware versions recorded with every run.

    ``lock`` is :func:`dkm.protocol.environment.lock_state`: the lock's digest and the
    packages installed otherwise than it pins (None without a lock file).
    """
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        device = f"GPU: {details.get('device_name', gpus[0].name)} x{len(gpus)}"
    else:
        device = f"CPU: {_cpu_name()} ({os.cpu_count()} cores)"
    return {
        "dkm_version": dkm.__version__, "git_commit": code_version(),
        **deciding_versions(), "lock": lock_state(),
        "device": device, "cpu": cpu_identity(), "hostname": socket.gethostname(),
        "arithmetic": arithmetic_settings(),
    }


def arithmetic_settings(cpuinfo: str | None = None) -> dict[str, object]:
    """What decides a run's floating-point arithmetic besides the code, the data and the seed.

    Parameters
    ----------
    cpuinfo : str, optional
        The text of ``/proc/cpuinfo``; read from there when not given.

    Returns
    -------
    dict
        ``vector_extensions``: the CPU's flags among :data:`VECTOR_EXTENSIONS`;
        ``environment``: each of :data:`dkm.reproducibility.kernel_settings.ARITHMETIC_VARIABLES` that is set, with
        its value (oneDNN's and XLA's instruction-set caps, the thread counts),
        leaving out a persistent compilation cache's folder;
        ``onednn``: whether TensorFlow runs its oneDNN kernels (by default only on
        CPUs with VNNI, bfloat16 or AMX instructions; ``TF_ENABLE_ONEDNN_OPTS``
        decides otherwise), None where TensorFlow does not say;
        ``intra_op_threads``: the number of TensorFlow's intra-op threads
        (:func:`tensorflow_intra_op_threads`; records made before it said so: 0,
        one per core); ``inter_op_threads``: its inter-op pool (0: one thread per core);
        ``cache_sizes``: the L1, L2 and L3 sizes by which TensorFlow's matrix products
        blocked their sums (:func:`dkm.reproducibility.cache_sizes.tensorflow_cache_sizes`; pinned in the
        reproducible arithmetic), None before TensorFlow has multiplied matrices.
    """
    import tensorflow as tf

    flags = set(cpuinfo_fields(cpuinfo).get("flags", "").split())
    cache_sizes = tensorflow_cache_sizes()
    return {
        "vector_extensions": [isa for isa in VECTOR_EXTENSIONS if isa in flags],
        "environment": arithmetic_environment(),
        "onednn": onednn_enabled(),
        "intra_op_threads": tensorflow_intra_op_threads(),
        "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
        "cache_sizes": None if cache_sizes is None else list(cache_sizes),
    }


def tensorflow_intra_op_threads() -> int:
    """The number of intra-op threads this process's TensorFlow runs: the one its
    configuration sets (``tf.config.threading``), else the one it started with
    (:func:`dkm.reproducibility.arithmetic.intra_op_threads`)."""
    import tensorflow as tf

    return tf.config.threading.get_intra_op_parallelism_threads() or intra_op_threads()


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
    fields = cpuinfo_fields(cpuinfo)
    if "cpu family" not in fields:
        return platform.machine()
    flags = set(fields.get("flags", "").split())
    widest = next((isa for isa in ("avx512f", "avx2", "avx", "sse4_2") if isa in flags), "")
    return (f"{fields.get('vendor_id', '?')} family {fields['cpu family']} model "
            f"{fields.get('model', '?')} stepping {fields.get('stepping', '?')}"
            + (f", {widest}" if widest else ""))


def _cpu_name() -> str:
    return (cpuinfo_fields().get("model name") or platform.processor()
            or platform.machine())
