"""The project's set-up files agree with each other."""
from __future__ import annotations

import tomllib
from pathlib import Path

import dkm

# the repository root (notebooks/conftest.py shares tests/conftest.py's module name, so
# the test modules do not import from either)
REPO_ROOT = Path(__file__).resolve().parents[1]



def _pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def test_environment_yml_installs_the_package_with_its_extras():
    """pyproject.toml is the one list of packages; environment.yml points at it."""
    environment = (REPO_ROOT / "environment.yml").read_text()
    extras = set(_pyproject()["project"]["optional-dependencies"])
    assert '-e ".[book,test]"' in environment
    assert extras == {"book", "cluster", "test"}


def test_the_test_extra_installs_the_cluster_extra():
    """`make test` runs the cluster test, so the test extra brings dask along."""
    extras = _pyproject()["project"]["optional-dependencies"]
    assert set(extras["cluster"]) <= set(extras["test"])


def test_jupyter_book_is_pinned_to_the_1x_series():
    book = _pyproject()["project"]["optional-dependencies"]["book"]
    assert "jupyter-book>=1.0.4.post1,<2" in book


def test_ci_runs_the_readme_test_command():
    readme = (REPO_ROOT / "README.md").read_text()
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert "make test" in readme and "make test" in ci
    assert readme.index("make book") < readme.index("make test")


def test_the_package_map_lists_every_module():
    """dkm/__init__.py's docstring names every module of the package, private ones included."""
    package = REPO_ROOT / "dkm"
    modules = {
        ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__")
        for path in package.rglob("*.py")
    } - {"dkm"}
    unlisted = sorted(name for name in modules if f"``{name}``" not in dkm.__doc__)
    assert not unlisted, f"modules missing from the package map in dkm/__init__.py: {unlisted}"
