"""dkm.startup: TensorFlow starts without its C++ lines on stderr."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import os
from dkm.startup import start_tensorflow_quietly

start_tensorflow_quietly(native_errors=False)
import tensorflow as tf

print(float(tf.constant(1.0) + 1.0), os.environ["TF_CPP_MIN_LOG_LEVEL"])
"""


def test_tensorflow_starts_and_computes_without_a_native_line():
    """Started plainly here, TensorFlow writes its CUDA probing lines to stderr."""
    environment = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    completed = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                               env={**environment, "PYTHONPATH": str(REPO_ROOT)})
    assert completed.stdout.split() == ["2.0", "3"], completed.stderr
    assert completed.stderr == ""
