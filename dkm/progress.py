"""The progress bar of long work: tqdm's, in a terminal or a notebook.

``tqdm.auto`` draws a widget in a Jupyter kernel and falls back to the text bar where
ipywidgets is not installed, warning first ("IProgress not found. Please update jupyter and
ipywidgets."), a line that would stand in the output of a chapter's cell. The package's bars
(:mod:`dkm.methods.common`, :mod:`dkm.protocol.grid`, :mod:`dkm.protocol.cluster`) import
:data:`tqdm` from here, where that warning is not shown; the fallback is the same.
"""
from __future__ import annotations

import warnings

from tqdm.std import TqdmWarning

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "IProgress not found", TqdmWarning)
    from tqdm.auto import tqdm

__all__ = ["tqdm"]
