"""The package's layers: the core <- the protocol <- the book <- the command line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# the repository root (notebooks/conftest.py shares tests/conftest.py's module name, so
# the test modules do not import from either)
REPO_ROOT = Path(__file__).resolve().parents[1]

# import-linter with the contracts of pyproject.toml, on the package of this checkout
LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")


def test_each_layer_imports_only_the_layers_below_it_and_no_module_imports_itself_back():
    lint = subprocess.run([sys.executable, "-c", LINT], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "0 broken" in lint.stdout


#: What ``from dkm import DeepKMeans`` loads of the package, in lines at most: the paper's model
#: and what it stands on, nothing of the protocol or the book.
MODEL_LINES = 3_500

FOOTPRINT = """
import json, sys
from dkm import DeepKMeans
loaded = {name: sum(1 for _ in open(module.__file__, encoding="utf-8"))
          for name, module in sys.modules.items() if name == "dkm" or name.startswith("dkm.")}
print(json.dumps(loaded))
"""


def test_the_paper_model_loads_the_core_alone_and_little_of_it():
    run = subprocess.run([sys.executable, "-c", FOOTPRINT], cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=300, check=True)
    loaded = json.loads(run.stdout.splitlines()[-1])
    above = sorted(m for m in loaded if m.startswith(("dkm.protocol", "dkm.book", "dkm.cli")))
    assert not above, above
    assert sum(loaded.values()) <= MODEL_LINES, loaded


@pytest.mark.parametrize("command", [
    ["--help"],
    ["report", "--results", "results/ablations/dcn-authors.jsonl", "--table", "methods"],
])
def test_help_and_report_load_neither_tensorflow_nor_the_books_analysis(command):
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "dkm", *command],
                         cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    loaded = [line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines()
              if line.startswith("import time:")]
    assert "dkm.cli" in loaded
    heavy = [m for m in loaded if m.split(".")[0] in ("tensorflow", "keras")
             or m.startswith(("dkm.book.analysis", "dkm.book.ablations"))]
    assert not heavy, heavy
    if command[0] == "report":  # the book's methods, read through its entry point
        assert "| DCN^p (authors) |" in run.stdout
