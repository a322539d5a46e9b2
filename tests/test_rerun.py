"""The book's "Rerun it" facts (dkm.book.rerun): read from git, the lock, the package's data
declarations and the records, never typed."""
from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from dkm.book import rerun
from dkm.cli import build_parser
from dkm.protocol.results import ResultsStore, config_hash, dataset_stores

ROOT = Path(__file__).resolve().parents[1]
SCORES = {"acc": 0.5, "nmi": 0.5, "ari": 0.5}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, text=True,
                          capture_output=True).stdout.strip()


def test_commit_is_the_checked_out_one_and_says_when_files_changed(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one\n")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-q", "-m", "one")
    head = _git(tmp_path, "rev-parse", "HEAD")
    assert rerun.commit(tmp_path) == head
    (tmp_path / "a.txt").write_text("two\n")
    assert rerun.commit(tmp_path) == head + "+changes"


def test_commit_outside_a_repository_says_what_to_do(tmp_path):
    with pytest.raises(ValueError, match="git checkout"):
        rerun.commit(tmp_path)


def test_locked_versions_read_the_pins_and_the_python(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text("numpy==2.4.6 \\\n    --hash=sha256:aa\n    # via tensorflow\n"
                    "scikit-learn==1.9.1 \\\n    --hash=sha256:bb\nnumpydoc==1.0\n")
    environment = tmp_path / "environment.yml"
    environment.write_text("dependencies:\n  - python=3.11\n  - pip\n")
    assert rerun.locked_versions(lock, environment, ("numpy", "scikit-learn")) == {
        "python": "3.11", "numpy": "2.4.6", "scikit-learn": "1.9.1"}
    with pytest.raises(ValueError, match="pins no version of scipy"):
        rerun.locked_versions(lock, environment, ("numpy", "scipy"))
    environment.write_text("dependencies:\n  - pip\n")
    with pytest.raises(ValueError, match="names no Python"):
        rerun.locked_versions(lock, environment, ("numpy",))


def test_the_repositorys_lock_pins_every_deciding_package():
    versions = rerun.locked_versions(ROOT / "requirements.lock", ROOT / "environment.yml")
    assert list(versions) == ["python", *rerun.DECIDING_PACKAGES]
    assert all(version[0].isdigit() for version in versions.values())


def test_data_sources_are_the_digests_the_loader_checks():
    sources = rerun.data_sources()
    assert {"mnist", "usps", "20news"} <= {name.strip() for names in sources.datasets
                                           for name in names.split(",")}
    for digests in sources.sha256:
        assert all(re.fullmatch("[0-9a-f]{64}", d) for d in digests.split(", "))
    from dkm.data import _usps

    by_file = sources.set_index("file")
    assert by_file.sha256["usps.h5"] == ", ".join(_usps._USPS.sha256)
    assert by_file.url["usps.h5"] == _usps._USPS.url
    assert pd.isna(by_file.url["20news-bydate_py3.pkz"])  # scikit-learn downloads it
    assert "fetch_20newsgroups" in by_file.how["20news-bydate_py3.pkz"]


def _record(dataset: str, seed: int, seconds: float, device: str, arithmetic: bool) -> dict:
    params = {"scale": 1.0, **({"arithmetic": "reproducible"} if arithmetic else {})}
    return {"schema": 1, "dataset": dataset, "method": "dkm-p", "seed": seed, "params": params,
            "config_hash": config_hash(dataset, "dkm-p", seed, params),
            "metrics": {split: SCORES for split in ("validation", "test")},
            "kmeans_on_embedding": None, "wall_time_s": seconds,
            "provenance": {"device": device}, "created": "2026-01-01T00:00:00+00:00"}


def test_table_commands_sum_the_records_and_parse_as_commands(tmp_path):
    rows = {"usps": [_record("usps", 1, 1800.0, "CPU: AMD EPYC (2 cores)", True),
                     _record("usps", 2, 5400.0, "CPU: Intel Xeon (2 cores)", True)],
            "mnist": [_record("mnist", 1, 3600.0, "CPU: AMD EPYC (2 cores)", False)]}
    for dataset, records in rows.items():
        (tmp_path / f"{dataset}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in records))
    commands = rerun.table_commands(tmp_path).set_index("dataset")
    assert commands.hours["usps"] == pytest.approx(2.0)
    assert commands.cpus["usps"] == "AMD EPYC (2 cores); Intel Xeon (2 cores)"
    assert "--native" in commands.command["mnist"] and "--native" not in commands.command["usps"]
    for command in commands.command:
        words = shlex.split(command)
        assert words[:3] == ["python", "-m", "dkm"]
        build_parser().parse_args(words[3:])


def test_table_commands_cover_every_protocol_store_of_the_repository():
    commands = rerun.table_commands(ROOT / "results")
    stores = dataset_stores(ROOT / "results")
    assert list(commands.dataset) == list(stores)
    for row in commands.itertuples():
        records = list(ResultsStore(stores[row.dataset]).records())
        assert row.runs == len(records) and row.hours > 0
