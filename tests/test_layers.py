"""The package's layers: the core <- the protocol <- the book <- the command line."""
from __future__ import annotations

import subprocess
import sys

from conftest import REPO_ROOT

# import-linter with the contracts of pyproject.toml, on the package of this checkout
LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")


def test_each_layer_imports_only_the_layers_below_it_and_no_module_imports_itself_back():
    lint = subprocess.run([sys.executable, "-c", LINT], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "0 broken" in lint.stdout
