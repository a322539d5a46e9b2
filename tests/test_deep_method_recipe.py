"""The README's recipe for a deep method of one's own (*Your own deep method*): its module and
its declaration, taken from the README, train through the method's estimator, through
``python -m dkm run`` (a fresh process that reads the declaration) and pass scikit-learn's
estimator checks.
"""
from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from sklearn.datasets import load_digits
from sklearn.utils.estimator_checks import check_estimator

REPO_ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def recipe() -> tuple[str, str, list[str]]:
    """The README's method module, its declaration module and its command."""
    section = (REPO_ROOT / "README.md").read_text(encoding="utf-8").split(
        "## Your own deep method\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.S)
    module, declaration = [code for language, code in blocks if language == "python"]
    shell, = [code for language, code in blocks if language == "bash"]
    command = shlex.split(shell.replace("\\\n", " "))
    assert command[:3] == [".venv/bin/python", "-m", "dkm"]
    return module, declaration, [sys.executable, *command[1:]]


@pytest.fixture(scope="module")
def hardkm(tmp_path_factory):
    """The recipe's two modules, written where this process and its children import them."""
    folder = tmp_path_factory.mktemp("recipe")
    module, declaration, _ = recipe()
    (folder / "hardkm.py").write_text(module, encoding="utf-8")
    (folder / "hardkm_methods.py").write_text(declaration, encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        yield folder, importlib.import_module("hardkm")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("hardkm", None)


def test_the_recipes_method_trains_through_its_estimator(hardkm):
    _, module = hardkm
    X = load_digits().data[:300].astype(np.float32) / 16
    model = module.DeepHardKMeans(n_clusters=5, pretrain_epochs=2, epochs=3, hidden_sizes=(32, 32),
                                  random_state=0, progress=False).fit(X)
    assert model.labels_.shape == (300,) and set(model.labels_) <= set(range(5))
    assert model.history_["clustering"].shape == (3,)
    assert np.isfinite(model.history_["loss"]).all()
    assert "lam : float" in type(model).__doc__ and "batch_size : int" in type(model).__doc__


def test_the_recipes_method_passes_scikit_learns_checks(hardkm):
    _, module = hardkm
    tf.config.run_functions_eagerly(True)  # ~150 tiny fits: tracing each would cost more
    try:
        check_estimator(module.DeepHardKMeans(n_clusters=2, hidden_sizes=(8,), pretrain_epochs=1,
                                              epochs=1, progress=False, jit_compile=False))
    finally:
        tf.config.run_functions_eagerly(False)


def test_the_recipes_method_runs_in_the_protocol_with_its_declared_tradeoff(hardkm):
    folder, _ = hardkm
    *_, command = recipe()
    path = os.pathsep.join([str(folder), str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(command, cwd=folder, env={**os.environ, "PYTHONPATH": path},
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    record, = [json.loads(line) for line in (folder / "hardkm.jsonl").read_text().splitlines()]
    assert record["method"] == "hard-km" and record["params"]["lambda"] == 0.1
    assert "gamma" not in record["params"] and 0 < record["metrics"]["test"]["acc"] <= 1
