"""Starting TensorFlow without its native start-up lines.

TensorFlow's C++ code writes to the process's standard error (file descriptor 2) as it
starts and probes its devices: "oneDNN custom operations are on…", "Could not find cuda
drivers on your machine…", "failed call to cuInit…", absl's "All log messages before
absl::InitializeLog() is called…". They are written before TensorFlow's log level
(``TF_CPP_MIN_LOG_LEVEL``) applies, so that level does not stop them, and in a notebook's
kernel they land in the output of whichever cell first imports the package's training code.
:func:`start_tensorflow_quietly` imports TensorFlow and probes its devices with that
descriptor sent to ``/dev/null`` meanwhile: the command line (``python -m dkm``, unless
``--verbose``) and the page that runs a reader's data call it. TensorFlow's Python
warnings are not silenced; a page for a reader also drops its C++ errors
(``native_errors=False``).
"""
from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["native_stderr_silenced", "start_tensorflow_quietly"]


@contextmanager
def native_stderr_silenced() -> Iterator[None]:
    """Send what native code writes to stderr (file descriptor 2) to ``/dev/null`` meanwhile."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


@functools.cache
def start_tensorflow_quietly(native_errors: bool = True) -> None:
    """Import TensorFlow and probe its devices without its C++ start-up lines.

    Only a process's first call starts TensorFlow; a process that has imported it already has
    written its lines.

    Parameters
    ----------
    native_errors : bool
        Whether TensorFlow's C++ code may still write its errors as it runs. False raises its
        log level (``TF_CPP_MIN_LOG_LEVEL``) to 3 before it starts, for a page whose output
        a reader reads: the XLA compilation cache writes a harmless "Error parsing
        text-format tensorflow.XlaSerializedCacheEntry" line for each entry it loads
        (:mod:`dkm.compilation`). TensorFlow's failures still raise Python exceptions, which
        carry their messages.
    """
    if not native_errors:
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    with native_stderr_silenced():
        import tensorflow as tf

        tf.config.list_physical_devices("GPU")
