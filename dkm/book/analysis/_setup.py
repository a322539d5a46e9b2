"""The paper's experimental set-up beside the package's defaults, which the runs use."""
from __future__ import annotations

import inspect

import pandas as pd

from dkm.book.tables import power_of_ten, typeset
from dkm.protocol import paper, registry

__all__ = ["setup_comparison"]


def _listed(values) -> str:
    return "-".join(f"{v:g}" for v in values)


def _grid(values) -> str:
    """The powers of ten ``values``, as 10⁻⁴, …, 10³."""
    return ", ".join(power_of_ten(v).removeprefix("1 × ") for v in values)


def setup_comparison() -> pd.DataFrame:
    """One row per setting of :data:`dkm.protocol.paper.SETUP`: the paper's value, the
    package's default (what the protocol's runs use) and whether they agree (✓ or ✗).

    Imports TensorFlow (the methods' configurations, read through the registry, and the
    optimiser are read).
    """
    from dkm.methods.common import LoopConfig
    from dkm.methods.pretraining import PAPER_PRETRAIN_EPOCHS
    from dkm.splits import validation_test_split
    from dkm.training import Adam

    loop, adam = LoopConfig(), inspect.signature(Adam).parameters
    split = inspect.signature(validation_test_split).parameters["validation_fraction"].default
    setup = paper.SETUP
    rows = [
        ("encoder's hidden layers", _listed(setup["hidden_sizes"]), _listed(loop.hidden_sizes)),
        ("minibatch size", setup["batch_size"], loop.batch_size),
        ("Adam's learning rate η", setup["learning_rate"], loop.learning_rate),
        ("Adam's β₁, β₂", setup["adam_betas"],
         (adam["beta_1"].default, adam["beta_2"].default)),
        ("pretraining epochs", setup["pretrain_epochs"], PAPER_PRETRAIN_EPOCHS),
        *((f"epochs of {typeset(label)}", epochs,
           registry.get(paper.method_id(label)).default_config().n_epochs)
          for label, epochs in setup["epochs"].items()),
        ("validation part of the split", f"{setup['validation_fraction']:.0%}", f"{split:.0%}"),
        ("seeds (runs per cell)", setup["seeds"], len(paper.PAPER_SEEDS)),
        ("grid of λ and γ", _grid(setup["tradeoff_grid"]), _grid(paper.TRADEOFF_GRID)),
    ]
    return pd.DataFrame([{"setting": name, "the paper": str(stated), "the package": str(used),
                          "agree": "✓" if str(stated) == str(used) else "✗"}
                         for name, stated, used in rows])
