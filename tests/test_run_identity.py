"""A run's identity is declared (dkm.methods.config.RunIdentity): every committed record's
configuration hash is the one the package builds from its fields today, and a configuration
field that its class does not declare stops the record instead of moving every hash."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dkm.protocol import registry
from dkm.protocol.audit import rebuilt_hash
from dkm.protocol.results import ResultsStore, every_store, config_hash

REPO_ROOT = Path(__file__).resolve().parents[1]


def _committed_records() -> list[dict]:
    """Every record of every store of the results folder (its audits are not records)."""
    return [record for store in every_store(REPO_ROOT / "results")
            for record in ResultsStore(store).records()]


RECORDS = _committed_records()


def test_every_committed_record_is_rebuilt_to_its_hash():
    trained = [r for r in RECORDS if registry.get(r["method"]).runner is None]
    assert len(trained) > 600  # the results folder's full-scale records
    rebuilt = {r["config_hash"]: rebuilt_hash(r) for r in trained}
    moved = [(r["dataset"], r["method"], r["seed"]) for r in trained
             if rebuilt[r["config_hash"]] != r["config_hash"]]
    assert moved == []
    assert all(config_hash(r["dataset"], r["method"], r["seed"], r["params"]) == r["config_hash"]
               for r in RECORDS)


def test_a_field_its_class_does_not_declare_stops_the_record():
    from dkm.methods.dkm import DKMConfig
    from dkm.protocol.experiments import run_params
    from dkm.methods.common import LoopConfig

    @dataclasses.dataclass(frozen=True)
    class Warmer(DKMConfig):
        warmup: int = 0  # neither in DKMConfig.IDENTITY nor a study's switch

    with pytest.raises(ValueError, match=r"Warmer has the field\(s\) warmup, which its IDENTITY "
                                         r"\(version 1\) does not declare"):
        run_params("dkm-p", Warmer(), LoopConfig(), 1.0, "0" * 16)


def test_each_package_configuration_declares_every_field():
    from dkm.methods.config import identity_params

    for method in registry.available_methods():
        config = registry.get(method).default_config()
        assert type(config).IDENTITY.version == 1, method
        identity_params(config)  # raises for an undeclared field
