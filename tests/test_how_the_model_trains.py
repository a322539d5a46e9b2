"""The README's map of how the model trains (*How the model trains*) holds: every function it
names exists where it says, and a small fit calls each one of its numbered steps."""
from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_digits

REPO_ROOT = Path(__file__).resolve().parents[1]


def named_in_the_map() -> list[str]:
    """The package's names in the map's numbered steps, in order."""
    section = (REPO_ROOT / "README.md").read_text(encoding="utf-8").split(
        "## How the model trains\n", 1)[1].split("\n## ", 1)[0]
    steps = section.split("\n1. ", 1)[1].split("\n\n", 1)[0]
    return list(dict.fromkeys(re.findall(r"`(dkm(?:\.\w+)+)`", steps)))


def resolve(name: str) -> Any:
    """The module, class or function a dotted name names (the longest importable module, then
    its attributes)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[end:]:
            found = getattr(found, attribute)
        return found
    raise AssertionError(f"{name}: no such module")


def test_the_map_names_the_path_from_fit_to_the_gradient_step():
    names = named_in_the_map()
    assert names[0] == "dkm.methods.estimator.DeepClusteringEstimator.fit"
    assert {"dkm.training.Trainer._step", "dkm.training.Adam.apply",
            "dkm.methods.dkm.DKMObjective.per_sample_loss"} <= set(names)
    for name in names:
        resolve(name)  # raises where the map names what does not exist


@pytest.mark.slow
def test_a_small_fit_calls_every_function_of_the_map():
    from dkm import DeepKMeans
    from dkm.annealing import constant

    functions = {name: inspect.unwrap(found) for name in named_in_the_map()
                 if inspect.isfunction(found := resolve(name))}
    called = set()
    X = load_digits().data[:200].astype(np.float32) / 16
    model = DeepKMeans(n_clusters=3, pretrain_epochs=1, schedule=constant(1000.0, 1),
                       hidden_sizes=(16,), batch_size=64, random_state=0, progress=False)
    sys.setprofile(lambda frame, event, arg: called.add(frame.f_code) if event == "call" else None)
    try:
        model.fit(X)
    finally:
        sys.setprofile(None)
    uncalled = [name for name, function in functions.items() if function.__code__ not in called]
    assert not uncalled, f"the map names functions a fit does not call: {uncalled}"
    assert len(functions) >= 15
