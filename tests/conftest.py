"""Shared pytest configuration: the data directory, thread pinning and seeds."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO_ROOT.parent / "shared" / "data").resolve()

# Tests read the real datasets from ../shared/data unless told otherwise.
os.environ.setdefault("DKM_DATA_HOME", str(SHARED_DATA))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--authors-repo", type=Path, default=None,
                     help="a clone of the authors' deep-k-means repository: runs the tests of "
                          "benchmarks/authors_code.py that need their code")


@pytest.fixture
def authors_repo(request: pytest.FixtureRequest) -> Path:
    """The clone given with ``--authors-repo``; skip without one."""
    repo = request.config.getoption("--authors-repo")
    if repo is None:
        pytest.skip("needs the authors' code: pass --authors-repo PATH (a clone of "
                    "MaziarMF/deep-k-means)")
    return repo.resolve()


def _data_home() -> Path:
    return Path(os.environ["DKM_DATA_HOME"])


@pytest.fixture(scope="session")
def data_home() -> Path:
    """The directory holding the real datasets; skip when it is absent."""
    home = _data_home()
    if not home.is_dir():
        pytest.skip(f"real datasets not found: DKM_DATA_HOME={home} is not a directory")
    return home


@pytest.fixture
def small_fit():
    """Run ``tests/small_fit.py`` in a fresh process: ``small_fit(mode, **environment)`` gives
    its JSON output as a dict. ``mode`` is ``"reproducible"`` or ``"native"``; each keyword sets
    an environment variable, or removes it when None; ``ONEDNN_MAX_CPU_ISA``, ``XLA_FLAGS`` and
    ``TF_XLA_FLAGS`` are removed unless given, so that only the mode chooses the arithmetic."""
    def run(mode: str, **environment: str | None) -> dict:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        for name in ("ONEDNN_MAX_CPU_ISA", "XLA_FLAGS", "TF_XLA_FLAGS"):
            env.pop(name, None)
        for name, value in environment.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        done = subprocess.run([sys.executable, str(REPO_ROOT / "tests" / "small_fit.py"), mode],
                              cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout)
    return run


@pytest.fixture
def cli():
    """Run ``python -m dkm ARGS...`` in a folder (the repository by default):
    ``cli(*args, cwd=folder)`` gives the completed process (text output), with this
    checkout's package first on the path."""
    def run(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dkm", *args], capture_output=True,
                              text=True, cwd=cwd,
                              env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3",
                                   "PYTHONPATH": str(REPO_ROOT)})
    return run
