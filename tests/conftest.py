"""Shared pytest configuration: the data directory, thread pinning and seeds."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
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


def _script_output(arguments: list[str], environment: dict[str, str | None]) -> dict:
    """The JSON a Python script prints, run in a fresh process from the repository's root.

    Each keyword of ``environment`` sets a variable, or removes it when None;
    ``TF_ENABLE_ONEDNN_OPTS``, ``ONEDNN_MAX_CPU_ISA``, ``XLA_FLAGS`` and ``TF_XLA_FLAGS`` are
    removed unless given, so that only the script chooses the arithmetic."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    for name in ("TF_ENABLE_ONEDNN_OPTS", "ONEDNN_MAX_CPU_ISA", "XLA_FLAGS", "TF_XLA_FLAGS"):
        env.pop(name, None)
    for name, value in environment.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    done = subprocess.run([sys.executable, *arguments], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture
def small_fit():
    """Run ``tests/small_fit.py`` in a fresh process: ``small_fit(mode, **environment)`` gives
    its JSON output as a dict. ``mode`` is ``"reproducible"`` or ``"native"``; ``environment``
    as :func:`_script_output`'s."""
    def run(mode: str, **environment: str | None) -> dict:
        return _script_output([str(REPO_ROOT / "tests" / "small_fit.py"), mode], environment)
    return run


@pytest.fixture
def products():
    """Run ``tests/products.py`` in a fresh process: ``products(*networks, cache_sizes=None,
    **environment)`` gives its JSON output as a dict; with ``cache_sizes`` (L1, L2, L3, bytes),
    through ``benchmarks/with_cache_sizes.py`` instead of the mode's sizes; ``environment`` as
    :func:`_script_output`'s."""
    def run(*networks: str, cache_sizes: tuple[int, int, int] | None = None,
            **environment: str | None) -> dict:
        told = [] if cache_sizes is None else [
            str(REPO_ROOT / "benchmarks" / "with_cache_sizes.py"), *map(str, cache_sizes)]
        return _script_output([*told, str(REPO_ROOT / "tests" / "products.py"), *networks],
                              environment)
    return run


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch):
    """Run the command line ``python -m dkm ARGS...`` in this process, from a folder (the
    repository by default): ``cli(*args, cwd=folder)`` gives a completed process with the
    exit status and the text written to stdout and stderr.

    In this process TensorFlow has started already, so a command costs what it computes and
    not a fresh interpreter's imports; the tests of what only a fresh process shows (start-up
    lines, refusing before TensorFlow starts, an interrupted run, the reproducible arithmetic
    that the commands which train choose by default) start one themselves. Here those
    commands run in this process's native arithmetic: ``--native`` is added where neither
    arithmetic is named."""
    from dkm.cli import main

    def run(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
        if (args and args[0] in ("run", "ablate", "snapshot")
                and not {"--native", "--reproducible"} & set(args)):
            args = (*args, "--native")
        stdout, stderr = io.StringIO(), io.StringIO()
        with monkeypatch.context() as scope, redirect_stdout(stdout), redirect_stderr(stderr):
            scope.chdir(cwd)
            try:
                status = main(list(args))
            except SystemExit as exit_:   # argparse: --help, or a usage error
                status = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
        return subprocess.CompletedProcess([sys.executable, "-m", "dkm", *args], status,
                                           stdout.getvalue(), stderr.getvalue())
    return run


@pytest.fixture(scope="session", autouse=True)
def compiled_epochs_shared() -> None:
    """The suite trains many small networks of few graphs: like the protocol, it opts into
    one compiled epoch per graph (dkm.reproducibility; the numbers are the same either way)."""
    from dkm.reproducibility import share_compiled_epochs

    share_compiled_epochs()
