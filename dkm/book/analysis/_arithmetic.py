"""What the arithmetic gives on other CPUs and settings: the reproducible fixture's fit on each
CPU, the products that other cache sizes round otherwise, the probe of a snapshot's arithmetic
on another CPU."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dkm.book.analysis._check_runs import check_runs
from dkm.reproducibility.arithmetic import is_reproducible


def isa_probe_table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The lines of ``benchmarks/probe_cpu_isa.py`` as a table, the snapshot's last.

    Parameters
    ----------
    rows : iterable of mapping
        Its JSON lines: one per setting (``kind`` ``"setting"``) and the
        snapshot's (``kind`` ``"snapshot"``).

    Returns
    -------
    pandas.DataFrame
        One row per line: ``setting`` (``"the snapshot"`` for its own line),
        ``first_epoch_loss``, ``commit`` (seven digits, ``-dirty`` kept), ``cpu``
        (missing where the provenance predates it), ``same_as_snapshot`` and
        ``same_as_machine`` (the loss equals, bit for bit, the snapshot's or the
        one of the setting ``"as the machine runs it"``); empty without lines.

    Raises
    ------
    ValueError
        When there are lines but not exactly one snapshot line.
    """
    rows = list(rows)
    if not rows:
        return pd.DataFrame(columns=["setting", "first_epoch_loss", "commit", "cpu",
                                     "same_as_snapshot", "same_as_machine"])
    snapshots = [r for r in rows if r["kind"] == "snapshot"]
    if len(snapshots) != 1:
        raise ValueError(f"a probe has one snapshot line, these lines have {len(snapshots)}")
    settings = [r for r in rows if r["kind"] == "setting"]
    machine = next((r["first_epoch_loss"] for r in settings
                    if r["setting"] == "as the machine runs it"), None)
    frame = pd.DataFrame([{
        "setting": r["setting"] if r["kind"] == "setting" else "the snapshot",
        "first_epoch_loss": float(r["first_epoch_loss"]),
        "commit": _short_commit(r["provenance"]["git_commit"]),
        "cpu": r["provenance"].get("cpu"),
    } for r in [*settings, *snapshots]])
    frame["same_as_snapshot"] = frame.first_epoch_loss == snapshots[0]["first_epoch_loss"]
    frame["same_as_machine"] = frame.first_epoch_loss == machine
    return frame


def _short_commit(commit: str) -> str:
    return commit[:7] + ("-dirty" if commit.endswith("-dirty") else "")


#: The parts of the reproducible fixture's fit that :func:`reproducible_fits` compares.
FIT_PARTS = {"labels": ("labels",), "pretraining losses": ("pretrain_loss",),
             "fine-tuning losses": ("loss",), "centres": ("centers",), "weights": ("weights",)}


def _same_parts(line: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, bool]:
    """Whether each part of :data:`FIT_PARTS` is the same, bit for bit, in two fits."""
    return {part: all(line.get(key) == other.get(key) for key in keys)
            for part, keys in FIT_PARTS.items()}


def in_present_settings(line: Mapping[str, Any]) -> bool:
    """Whether a benchmark's line (``mode`` and ``environment``) was made natively or in the
    reproducible arithmetic's present settings (:func:`dkm.reproducibility.arithmetic.is_reproducible`), not in
    an earlier version of the mode."""
    return line["mode"] == "native" or is_reproducible(line["environment"])


def _cache_sizes(line: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The cache sizes a reproducible fit's matrix products blocked by, where its line names
    them (a native fit's are its CPU's own)."""
    sizes = line.get("cache_sizes") if line["mode"] == "reproducible" else None
    return None if sizes is None else tuple(sizes)


def _last_fits(directory: str | Path) -> dict[tuple, Mapping[str, Any]]:
    """The last line of ``reproducible-fits.jsonl`` for each CPU, mode and cache sizes, of
    those :func:`in_present_settings`."""
    return {(line["cpu"], line["mode"], _cache_sizes(line)): line
            for line in check_runs("reproducible-fits", directory) if in_present_settings(line)}


def reproducible_fits(directory: str | Path, fixture: str | Path) -> pd.DataFrame:
    """What each CPU gave for the reproducible fixture's fit, in either arithmetic.

    Parameters
    ----------
    directory : str or Path
        Where ``reproducible-fits.jsonl`` lies (``benchmarks/reproducible_fits.py``'s lines).
    fixture : str or Path
        The fixture, ``tests/fixtures/reproducible-dkm-p.json``.

    Returns
    -------
    pandas.DataFrame
        One row per CPU, mode and cache sizes (the last line of each; reproducible
        fits made in earlier settings of the mode are left out): ``cpu``, ``mode``
        (``"reproducible"``, ``"native"``), ``cache_sizes`` (the L1, L2 and L3 sizes
        its matrix products blocked by, as the reproducible arithmetic pins them or
        ``benchmarks/with_cache_sizes.py`` set them; None for a native fit and where the
        line does not name them: the CPU's own), ``fit`` (a digest of the parts of
        :data:`FIT_PARTS`: two rows with the same digest computed the same fit), then for
        each part whether it is the fixture's, bit for bit, ``centres_differing``, how
        many of the centres' coordinates are not the fixture's bits, and ``centres_ulps``,
        the most units in the last place by which a coordinate differs from the fixture's.
        Empty when there is no line.
    """
    reference = json.loads(Path(fixture).read_text())
    last = _last_fits(directory)
    centres = np.frombuffer(bytes.fromhex(reference["centers"]), np.float32)

    def centres_compared(line: Mapping[str, Any]) -> dict[str, int]:
        # each coordinate's distance from the fixture's in units in the last place: the
        # float32 values' bits read as integers (the coordinates keep their signs)
        other = np.frombuffer(bytes.fromhex(line["centers"]), np.float32)
        ulps = np.abs(other.view(np.int32).astype(np.int64) - centres.view(np.int32))
        return {"centres_differing": int(np.sum(ulps > 0)), "centres_ulps": int(np.max(ulps))}

    def digest(line: Mapping[str, Any]) -> str:
        parts = json.dumps([line.get(key) for keys in FIT_PARTS.values() for key in keys])
        return hashlib.sha256(parts.encode()).hexdigest()[:12]

    rows = [{"cpu": cpu, "mode": mode, "cache_sizes": sizes, "fit": digest(line),
             **_same_parts(line, reference), **centres_compared(line)}
            for (cpu, mode, sizes), line in last.items()]
    return pd.DataFrame(rows, columns=["cpu", "mode", "cache_sizes", "fit", *FIT_PARTS,
                                       "centres_differing", "centres_ulps"])


def cache_size_products(directory: str | Path) -> pd.DataFrame:
    """Which of a fit's products rounded otherwise with other cache sizes than the mode's.

    Parameters
    ----------
    directory : str or Path
        Where ``cache-size-products.jsonl`` lies (``benchmarks/cache_size_products.py``'s
        lines: the products computed with the mode's sizes and with others, each compared).

    Returns
    -------
    pandas.DataFrame
        One row per CPU, told sizes and computation (the last line of each CPU and sizes):
        ``cpu``, ``pinned`` and ``told`` (the L1, L2 and L3 sizes, bytes, as tuples),
        ``network`` (a paper's dataset's label, or ``"small fit"``), ``phase``
        (``"training step"``, ``"embedding"``), ``shape``, ``part`` (of a training step's
        layer: ``"forward"``, ``"input gradient"``, ``"weight gradient"``; empty for an
        embedding) and ``differs``. Empty when there is no line.
    """
    last = {(line["cpu"], tuple(line["told"])): line
            for line in check_runs("cache-size-products", directory)}
    rows = [{"cpu": cpu, "pinned": tuple(line["pinned"]), "told": told, **product}
            for (cpu, told), line in last.items() for product in line["products"]]
    return pd.DataFrame(rows, columns=["cpu", "pinned", "told", "network", "phase", "shape",
                                       "part", "differs"])
