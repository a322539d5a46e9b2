"""dkm.protocol.registry: one description per method, and everything derived from it."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from dkm.book import stats
from dkm.cli import PAPER_METHODS
from dkm.protocol import paper, registry


# the repository root (notebooks/conftest.py shares tests/conftest.py's module name, so
# the test modules do not import from either)
REPO_ROOT = Path(__file__).resolve().parents[1]


def test_every_entry_is_consistent_with_its_own_configuration():
    from dkm.methods.common import LoopConfig

    for method in registry.METHODS.values():
        config = method.default_config()
        if method.estimator is None:
            with pytest.raises(ValueError, match=f"{method.id} has no estimator"):
                method.make_estimator(config, LoopConfig(), 10)
        else:  # the estimator of its variant trains its default configuration
            estimator = method.make_estimator(config, LoopConfig(), 10)
            assert estimator.variant == method.variant and estimator._config() == config
            assert method.id == f"{method.family}-{method.variant}" or (
                method.paper_method == f"{method.family}-{method.variant}")
        if method.tradeoff is None:
            assert method.config_field is None
        else:
            assert method.config_field in {f.name for f in dataclasses.fields(config)}
        if hasattr(config, "pretrain_epochs") and method.family != "km":
            assert (config.pretrain_epochs > 0) == method.pretrained
        assert paper.parse_model_label(method.label).method == method.id


def test_the_modules_derive_their_method_lists_from_the_registry():
    assert PAPER_METHODS == ("km", "ae-km", "dcn-np", "dcn-p", "idec-np", "idec-p", "dkm-a", "dkm-p")
    assert stats.PRETRAINED == {"ae-km", "dcn-p", "idec-p", "dkm-p", "dkm-pa", "dcn-p-authors",
                                "ae-km-authors-code", "dcn-p-authors-code", "dkm-p-authors-code"}
    assert stats.NOT_PRETRAINED == {"dcn-np", "idec-np", "dkm-a", "dcn-np-authors",
                                    "dcn-np-authors-code", "dkm-a-authors-code"}
    assert dict(paper.METHOD_LABELS) == {m.id: m.label for m in registry.METHODS.values()}
    assert paper.tradeoff_name("idec-p") == "gamma" and paper.tradeoff_name("dkm-pa") == "lambda"


def test_the_protocol_runs_what_the_registry_says():
    from dkm.protocol.registry import available_methods

    assert available_methods() == tuple(m for m in registry.ids() if not m.endswith("-authors-code"))


def test_an_entry_names_an_estimator_a_fit_function_or_a_runner():
    common = dict(id="x", label="X", family="dkm", pretrained=False, group=None, tradeoff=None,
                  in_paper=False, config="m:C", embedding=True, kmeans_on_embedding=True)
    with pytest.raises(ValueError, match="exactly one of an estimator, a fit function and a runner"):
        registry.Method(**common, estimator="m:E", variant="a", fit="m:f")
    with pytest.raises(ValueError, match="exactly one of an estimator, a fit function and a runner"):
        registry.Method(**common)
    with pytest.raises(ValueError, match="needs its variant"):
        registry.Method(**common, estimator="m:E")


def test_only_km_has_no_embedding():
    assert [m.id for m in registry.METHODS.values() if not m.embedding] == ["km"]


def test_an_unknown_method_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown method 'dec'; choose among km, ae-km"):
        registry.get("dec")


def test_the_authors_dcn_is_the_papers_dcn_with_the_authors_switches():
    from dkm.book.ablations import AUTHORS_DCN, DCNAblationConfig
    from dkm.methods.dcn import DCN_VARIANTS
    from dkm.protocol.experiments import default_tradeoff

    for variant in ("np", "p"):
        entry = registry.get(f"dcn-{variant}-authors")
        assert (entry.paper_method, entry.reported_as, entry.in_paper) == (
            f"dcn-{variant}", f"dcn-{variant}", False)
        assert (entry.label, entry.reported_label) == (f"DCN^{variant} (authors)", f"DCN^{variant}")
        assert entry.default_config() == DCNAblationConfig(**vars(DCN_VARIANTS[variant]),
                                                           **AUTHORS_DCN)
        assert entry.pretrained == registry.get(entry.paper_method).pretrained
        for dataset in ("usps", "mnist", "20news"):  # the paper's λ of its DCN
            assert default_tradeoff(entry.id, dataset) == paper.optimal_tradeoff(
                entry.paper_method, dataset)
        assert paper.reported("table1", entry.id, "usps", "acc") == paper.reported(
            "table1", entry.paper_method, "usps", "acc")
    assert registry.get("dkm-pa").reported_as is None and registry.get("km").reported_as == "km"
    assert registry.get("dkm-pa").reported_label is None and registry.get("km").reported_label == "KM"
    assert paper.parse_model_label("DCN^np (authors) + KM") == paper.ModelRef(
        "dcn-np-authors", None, True)


def test_a_paper_method_implements_no_other():
    with pytest.raises(ValueError, match="dcn-np is one of the paper's methods"):
        dataclasses.replace(registry.get("dcn-np"), paper_method="dcn-p")


def test_a_method_the_package_does_not_train_names_its_runner():
    from dkm.methods.common import LoopConfig
    from dkm.protocol.registry import available_methods

    entry = registry.get("dkm-p-authors-code")
    assert entry.runner == "benchmarks/authors_code.py" and entry.reported_as == "dkm-p"
    assert entry.label == "DKM^p (authors' code)" and entry.tradeoff == "lambda"
    assert "dkm-p-authors-code" not in available_methods() and "dkm-p" in available_methods()
    with pytest.raises(ValueError, match="not trained by the package: benchmarks/authors_code.py"):
        entry.train(None, 10, [0], entry.default_config(), LoopConfig())
    with pytest.raises(ValueError, match="exactly one of an estimator, a fit function and a runner"):
        registry.Method("x", "X", "km", False, group=None, tradeoff=None, in_paper=False,
                        config="dkm.methods.km:KM_CONFIG", embedding=False,
                        kmeans_on_embedding=False, fit="dkm.methods.km:fit_km", runner="run.py")


#: A fresh process reads a store of the book's methods, then imports every module of the package.
BARE_PROCESS = """
import importlib, json, pkgutil, warnings
import dkm
from dkm.protocol import registry
from dkm.protocol.results import ResultsStore

with warnings.catch_warnings():
    warnings.simplefilter("error")
    records = ResultsStore("results/ablations/dcn-authors.jsonl").records()
declared = registry.ids()
for module in pkgutil.walk_packages(dkm.__path__, "dkm."):
    if module.name != "dkm.__main__":
        importlib.import_module(module.name)
print(json.dumps({"records": len(records), "methods": sorted({r["method"] for r in records}),
                  "same after every import": registry.ids() == declared}))
"""


def test_a_bare_process_reads_every_record_and_no_import_declares_a_method():
    done = subprocess.run([sys.executable, "-c", BARE_PROCESS], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = (REPO_ROOT / "results" / "ablations" / "dcn-authors.jsonl").read_text().splitlines()
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "records": len(lines), "methods": ["dcn-np-authors", "dcn-p-authors"],
        "same after every import": True}


def plugin(monkeypatch, name: str, **attributes) -> str:
    """A module ``name`` holding ``attributes``, importable for this test."""
    module = types.ModuleType(name)
    vars(module).update(attributes)
    monkeypatch.setitem(sys.modules, name, module)
    return name


@pytest.mark.parametrize("attributes, refusal", [
    ({}, "module refused declares no METHODS"),
    ({"METHODS": ("km",)}, "declares 'km', not a dkm.protocol.registry.Method"),
    ({"METHODS": (dataclasses.replace(registry.get("dkm-pa"), id="mine"),
                  registry.get("dkm-pa"))},
     "declares the method 'dkm-pa', which the package declares already"),
    ({"METHODS": (dataclasses.replace(registry.get("km"), id="km-too"),)},
     "declares 'km-too' as one of the paper's methods; only the package declares those"),
])
def test_a_plugin_is_refused_whole_when_a_declaration_is_wrong(monkeypatch, attributes, refusal):
    declared = registry.ids()
    with pytest.raises(ValueError, match=refusal):
        registry.load_plugins([plugin(monkeypatch, "refused", **attributes)])
    assert registry.ids() == declared and registry.plugins() == ()


def test_the_command_line_names_a_plugin_it_cannot_load(cli):
    refused = cli("report", "--plugin", "no_such_plugin", "--results", "results")
    assert refused.returncode == 2
    assert "--plugin no_such_plugin: No module named 'no_such_plugin'" in refused.stderr


@pytest.mark.parametrize("method", ["dkm-a", "dkm-p", "dkm-pa", "dcn-np", "dcn-p", "idec-np",
                                    "idec-p"])
def test_an_estimator_of_a_variant_trains_the_protocols_tradeoff_where_the_paper_did_not_run(
        method):
    # one default per variant: `DeepKMeans(variant="a")` trains the λ the protocol trains DKM^a
    # with on a dataset of the user's
    from dkm.protocol.experiments import default_tradeoff
    from dkm.protocol.registry import _load

    entry = registry.get(method)
    estimator = _load(entry.estimator)(variant=entry.variant)
    trained = getattr(estimator._config(), entry.config_field)
    assert trained == default_tradeoff(method, "my-data.npz")
