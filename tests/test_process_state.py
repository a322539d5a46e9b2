"""The core changes nothing in the process: ``import dkm`` and a fit leave the environment and
TensorFlow's settings as they were, and load none of the opt-in layer (dkm.reproducibility)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The opt-in layer's modules that change the process (dkm.reproducibility).
OPT_IN = ("dkm.reproducibility.cache_sizes", "dkm.reproducibility.arithmetic",
          "dkm.reproducibility.shared_functions")


def _state() -> tuple[dict, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, str(REPO_ROOT / "tests" / "program_state.py")],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout), done.stderr


def test_import_and_fit_leave_the_process_as_they_found_it():
    state, stderr = _state()
    assert state["changed_by_import"] == [] and state["changed_by_fit"] == []
    assert not [name for name in state["modules_after_import"] if name.startswith("tensorflow")]
    assert not set(OPT_IN) & set(state["modules_after_import"])
    assert state["settings_after_fit"] == state["settings_before_fit"]
    # no line of a compilation cache or of the package's own machinery
    assert "XlaSerializedCacheEntry" not in stderr
