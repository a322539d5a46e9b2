"""How much of the package a small ``DeepKMeans(...).fit`` runs through.

Counts, with :func:`sys.setprofile` during one small fit on scikit-learn's digits (a
``32-32-64`` network, one pretraining epoch and one fine-tuning epoch, no XLA cache), the
package's modules and functions that are called at all (a function is counted once, however
often it runs; TensorFlow's tracing calls the training step's Python once per trace), and
the package modules on the call stack at the first call of the optimiser's update: the
path a reader follows from ``fit`` to the gradient step.

Usage::

    python benchmarks/count_fit_calls.py [--update dkm.training:Adam.apply] [--list]

Prints one JSON line: ``modules``, ``functions`` (comprehensions and generator expressions
not counted; ``code_objects`` counts them too), ``path_modules`` (in the order the path
enters them) and, with ``--list``, every function counted.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from types import FrameType
from typing import Any

PACKAGE = Path(__file__).resolve().parent.parent / "dkm"
#: The code objects of comprehensions and generator expressions (not functions a reader opens).
_COMPREHENSION = re.compile(r"<(listcomp|dictcomp|setcomp|genexpr)>$")


def _module(filename: str) -> str | None:
    """The dotted name of a module of the package from its file name, else None."""
    path = Path(filename)
    try:
        parts = path.resolve().relative_to(PACKAGE.resolve()).with_suffix("").parts
    except ValueError:
        return None
    return ".".join(("dkm", *parts)).removesuffix(".__init__")


def count(update: str) -> dict[str, Any]:
    """Fit a small DeepKMeans under a profiler; what it counted (see the module's docstring)."""
    import numpy as np
    from sklearn.datasets import load_digits

    from dkm import DeepKMeans
    from dkm.annealing import constant

    X = load_digits().data[:300].astype(np.float32) / 16
    model = DeepKMeans(n_clusters=5, pretrain_epochs=1, schedule=constant(1000.0, 1),
                       hidden_sizes=(32, 32, 64), batch_size=64, random_state=0, progress=False)
    update_module, update_name = update.split(":")
    functions: set[tuple[str, str]] = set()
    path: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        module = _module(frame.f_code.co_filename)
        if module is None:
            return
        name = frame.f_code.co_qualname
        functions.add((module, name))
        if not path and (module, name) == (update_module, update_name):
            stack, caller = [], frame
            while caller is not None:
                caller_module = _module(caller.f_code.co_filename)
                if caller_module is not None and (not stack or stack[-1] != caller_module):
                    stack.append(caller_module)
                caller = caller.f_back
            path.extend(reversed(stack))

    sys.setprofile(profile)
    try:
        model.fit(X)
    finally:
        sys.setprofile(None)
    if not path:
        raise SystemExit(f"the fit never called {update}: name the optimiser's update "
                         "as MODULE:QUALNAME with --update")
    named = {(m, n) for m, n in functions if not _COMPREHENSION.search(n)}
    return {"modules": len({m for m, _ in functions}), "functions": len(named),
            "code_objects": len(functions), "path_modules": list(dict.fromkeys(path)),
            "listed": sorted(f"{m}:{n}" for m, n in functions)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", default="dkm.training:Adam.apply",
                        help="the optimiser's update, MODULE:QUALNAME")
    parser.add_argument("--list", action="store_true", help="also list every function counted")
    args = parser.parse_args(argv)
    counted = count(args.update)
    if not args.list:
        del counted["listed"]
    print(json.dumps(counted))
    return 0


if __name__ == "__main__":
    sys.exit(main())
