"""A method of a user's own, declared in one module outside the package, runs with
``python -m dkm run`` and shows in ``python -m dkm report``, each a fresh process, as a user
would run them: named with ``--plugin MODULE``, or declared by an installed distribution's entry
point of the group ``dkm.methods``. The module and the commands are the README's (*Your own
method*): AE-GMM, a Gaussian mixture on the pretrained autoencoder's embedding.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dkm.protocol import paper

# the repository root (notebooks/conftest.py shares tests/conftest.py's module name, so
# the test modules do not import from either)
REPO_ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def readme_example() -> tuple[str, list[list[str]]]:
    """The README's plugin module and its commands, run by this interpreter."""
    section = (REPO_ROOT / "README.md").read_text(encoding="utf-8").split(
        "## Your own method\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.S)
    module = next(code for language, code in blocks if language == "python")
    shell = next(code for language, code in blocks if language == "bash")
    commands = [shlex.split(line) for line in shell.replace("\\\n", " ").splitlines()]
    assert all(command[:3] == [".venv/bin/python", "-m", "dkm"] for command in commands)
    return module, [[sys.executable, *command[1:]] for command in commands]


def dkm(command: list[str], cwd: Path, **environment: str) -> subprocess.CompletedProcess:
    """``command`` in a fresh process, its exit status checked."""
    done = subprocess.run(command, cwd=cwd, env={**os.environ, **environment},
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def table_row(report: str, label: str) -> str:
    return next(line for line in report.splitlines() if line.startswith(f"| {label} "))


def test_the_readmes_method_runs_and_reports_through_its_plugin(tmp_path):
    module, (run, report) = readme_example()
    (tmp_path / "aegmm.py").write_text(module, encoding="utf-8")
    dkm(run, tmp_path)
    records = [json.loads(line) for line in (tmp_path / "aegmm.jsonl").read_text().splitlines()]
    seeds = list(paper.PAPER_SEEDS[:2])
    assert sorted((r["method"], r["seed"]) for r in records) == sorted(
        (method, seed) for method in ("ae-gmm", "ae-km") for seed in seeds)
    gmm = [r for r in records if r["method"] == "ae-gmm"]
    assert all(0 < r["metrics"]["test"]["acc"] <= 1 for r in gmm)
    # the two methods started from the same pretrained networks
    assert ({r["seed"]: r["provenance"]["pretraining"] for r in gmm}
            == {r["seed"]: r["provenance"]["pretraining"] for r in records if r not in gmm})
    reported = dkm(report, tmp_path)
    acc = np.array([r["metrics"]["test"]["acc"] for r in gmm]) * 100
    row = table_row(reported.stdout, "AE-GMM")
    assert f"{acc.mean():.1f}±{acc.std(ddof=1):.1f}" in row and "(n=2)" in row, reported.stdout
    assert "nobody declared" not in reported.stderr


def test_an_installed_entry_point_declares_the_method_to_every_command(tmp_path):
    module, _ = readme_example()
    site = tmp_path / "site"  # an installed distribution: its module and its metadata
    (site / "aegmm-1.0.dist-info").mkdir(parents=True)
    (site / "aegmm.py").write_text(module, encoding="utf-8")
    (site / "aegmm-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: aegmm\nVersion: 1.0\n")
    (site / "aegmm-1.0.dist-info" / "entry_points.txt").write_text(
        "[dkm.methods]\naegmm = aegmm:METHODS\n")
    store = tmp_path / "aegmm.jsonl"
    python_dkm = [sys.executable, "-m", "dkm"]
    dkm([*python_dkm, "run", "--dataset", "digits", "--method", "ae-gmm", "--method", "km",
         "--seeds", "1", "--scale", "0.02", "--results", str(store), "--quiet"],
        tmp_path, PYTHONPATH=str(site))
    report = [*python_dkm, "report", "--results", str(store), "--table", "methods"]
    installed = dkm(report, tmp_path, PYTHONPATH=str(site))
    assert "(n=1)" in table_row(installed.stdout, "AE-GMM") and "nobody declared" not in (
        installed.stderr)
    # without the distribution, its records are kept, named in one warning, left out of tables
    bare = dkm(report, tmp_path)
    assert bare.stderr.count("nobody declared") == 1, bare.stderr
    assert "1 record of methods nobody declared, kept" in bare.stderr and "ae-gmm (1)" in (
        bare.stderr)
    assert "| KM " in bare.stdout and "AE-GMM" not in bare.stdout
