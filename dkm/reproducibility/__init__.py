"""What makes a run rerunnable bit for bit, and a grid of runs quick: opted into, never
imported by the paper's model.

The models, their training, the data and the metrics (the core, :mod:`dkm`) change
nothing in the process beyond what a fit's own call scopes and restores. What follows
changes the process for good, so it is a choice, made in one call each:

``dkm.reproducibility.arithmetic``       the reproducible arithmetic: kernels capped at AVX2,
                                         fixed thread counts, the products' cache sizes pinned
                                         (:func:`use_reproducible_arithmetic`, before TensorFlow
                                         is imported).
``dkm.reproducibility.cache_sizes``      the cache sizes TensorFlow's matrix products block by:
                                         read, and pinned in a checked ``libtensorflow_cc``.
``dkm.reproducibility.shared_functions`` one compiled epoch per distinct graph, shared by a
                                         process's trainers (:func:`share_compiled_epochs`).
``dkm.reproducibility.kernel_settings``  what chooses a CPU's kernels: its vector extensions,
                                         the variables read.

The protocol (:mod:`dkm.protocol`) opts into both for its runs; a user calls
:func:`use_reproducible_arithmetic` for fits that another CPU reruns bit for bit. Each use
of a private interface of TensorFlow is here, behind a check of the TensorFlow it was
written for (:data:`dkm.reproducibility.cache_sizes.CHECKED_KERNELS`,
:data:`dkm.reproducibility.kernel_settings.CHECKED_TENSORFLOW`). Importing this package
does not import TensorFlow.
"""
from __future__ import annotations

from dkm.reproducibility.arithmetic import (current_arithmetic, pin_reproducible_cache_sizes,
                                            use_reproducible_arithmetic)

__all__ = ["current_arithmetic", "pin_reproducible_cache_sizes", "share_compiled_epochs",
           "use_reproducible_arithmetic"]


def share_compiled_epochs(shared: bool = True) -> None:
    """Run the epochs of every trainer of the process through one compiled function per
    distinct graph (:func:`dkm.reproducibility.shared_functions.share_compiled_epochs`);
    imports TensorFlow."""
    from dkm.reproducibility import shared_functions

    shared_functions.share_compiled_epochs(shared)
