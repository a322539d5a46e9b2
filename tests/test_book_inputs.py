"""The book's local Sphinx extension: executed pages go stale when what they read changes."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from book_inputs import newest_input, stale_pages  # noqa: E402


def _touch(path: Path, seconds: int, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, ns=(seconds * 10**9, seconds * 10**9))
    return path


def test_newest_input_looks_at_records_snapshots_and_package_only(tmp_path):
    _touch(tmp_path / "results" / "usps.jsonl", 10)
    _touch(tmp_path / "results" / "ablations" / "alpha.jsonl", 20)  # a study's store
    _touch(tmp_path / "dkm" / "ablations" / "_walk.py", 15)
    _touch(tmp_path / "results" / "notes.txt", 90)  # not an input
    _touch(tmp_path / "results" / ".pretraining-cache" / "pretrain.npz", 95)  # not read by a page
    assert newest_input(tmp_path) == 20 * 10**6  # microseconds, as Sphinx counts
    _touch(tmp_path / "benchmarks" / "results" / "rerun-mnist.jsonl", 30)  # a new file counts
    assert newest_input(tmp_path) == 30 * 10**6
    assert newest_input(tmp_path / "nothing here") == 0


def test_only_executed_pages_read_before_the_newest_input_are_stale(tmp_path):
    chapter = _touch(tmp_path / "chapter.md", 1, "```{code-cell} ipython3\nx = 1\n```\n")
    prose = _touch(tmp_path / "references.md", 1, "# References\n")
    read_at = {"chapter": 5 * 10**6, "references": 5 * 10**6, "rebuilt": 50 * 10**6,
               "gone": 5 * 10**6}
    sources = {"chapter": chapter, "references": prose, "rebuilt": chapter,
               "gone": tmp_path / "gone.md"}
    assert stale_pages(read_at, sources, newest=20 * 10**6) == ["chapter"]
    assert stale_pages(read_at, sources, newest=4 * 10**6) == []


def test_the_book_loads_the_extension():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    path = config["sphinx"]["local_extensions"]["book_inputs"]
    assert (ROOT / path / "book_inputs.py").is_file()
