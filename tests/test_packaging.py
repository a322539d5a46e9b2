"""The project's set-up files agree with each other."""
from __future__ import annotations

import tomllib
from pathlib import Path

import dkm
from dkm.protocol.environment import LOCK_FILE, lock_pins, lock_state

# the repository root (notebooks/conftest.py shares tests/conftest.py's module name, so
# the test modules do not import from either)
REPO_ROOT = Path(__file__).resolve().parents[1]



def _pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def _locked_requirements() -> list:
    """Every requirement of the package and of the extras the lock is made for."""
    from packaging.requirements import Requirement

    project = _pyproject()["project"]
    extras = project["optional-dependencies"]
    return [Requirement(line) for line in
            project["dependencies"] + extras["test"] + extras["book"]]


def test_the_lock_pins_every_requirement_of_pyproject_at_a_version_it_allows():
    """A requirement added to pyproject.toml, or one the lock's pin no longer satisfies, fails
    here until `make lock` is run."""
    from packaging.utils import canonicalize_name

    pins = lock_pins(LOCK_FILE)
    disagreements = []
    for requirement in _locked_requirements():
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        pinned = pins.get(canonicalize_name(requirement.name))
        if pinned is None or not requirement.specifier.contains(pinned, prereleases=True):
            disagreements.append(f"{requirement} (locked: {pinned})")
    assert not disagreements, ("pyproject.toml asks for what requirements.lock does not pin; run "
                               f"`make lock`: {disagreements}")


def test_the_lock_names_no_index_and_hashes_every_pin():
    text = LOCK_FILE.read_text()
    assert "--index-url" not in text and "--extra-index-url" not in text and "://" not in text
    assert text.count("==") == len(lock_pins(LOCK_FILE))
    entries = text.split("==")[1:]
    assert all("--hash=sha256:" in entry for entry in entries)


def test_the_environment_is_the_lock():
    """`make test` syncs .venv to the lock: each package the lock pins is installed at its
    version, and nothing else is, apart from the package itself and the installers."""
    state = lock_state(LOCK_FILE)
    assert state is not None and state["differs"] == [], state
    from importlib import metadata

    from packaging.utils import canonicalize_name

    unlocked = {canonicalize_name(dist.metadata["Name"]) for dist in metadata.distributions()}
    unlocked -= set(lock_pins(LOCK_FILE)) | {"dkm", "pip", "uv"}
    assert not unlocked, f"installed but not in requirements.lock: {sorted(unlocked)}"


def test_environment_yml_installs_the_lock():
    """pyproject.toml is the one list of packages, the lock its exact versions;
    environment.yml installs the lock."""
    environment = (REPO_ROOT / "environment.yml").read_text()
    extras = set(_pyproject()["project"]["optional-dependencies"])
    assert "-r requirements.lock" in environment
    assert "python=3.11" in environment
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
