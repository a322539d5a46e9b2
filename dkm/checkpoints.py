"""Checkpoints of a run's training phases: an interrupted run resumes where it stopped.

A run trains in phases (pretraining, then the method's own training), each a
loop over epochs (:func:`dkm.training.run_epochs`); one seed of MNIST
takes hours on a CPU. At the end of an epoch, the phase's state is the
trainer's variables (:meth:`dkm.training.Trainer.state`: network, Adam,
the objective's state), its minibatch generators
(:meth:`dkm.training.BatchSampler.state`) and the per-epoch history so far;
it decides every later epoch. A :class:`PhaseCheckpoint` keeps it in one
``.npz`` file, written atomically every ``every_s`` seconds and at the end of
the phase, so a run started again from it gives the same numbers as one that
was never interrupted.

:class:`RunCheckpoints` names the files of one run (one configuration and its
seeds, :func:`run_key`) in a folder, one per phase, and lists the phases that
resumed. :func:`dkm.protocol.grid.run_grid` keeps them in ``.checkpoints/``
beside the results store, and :func:`dkm.protocol.experiments.run_seeds` removes a
run's files once it has made its records; :func:`dkm.protocol.experiments.fit_methods`
(so :func:`dkm.book.snapshots.save_snapshot`) removes them once every method is
trained, and an estimator's ``fit`` (its ``checkpoint_dir``) once it has
finished.

Layout of a checkpoint's ``.npz``::

    meta          JSON: epochs done, whether the phase finished, the
                  generators' states, the training seconds, the code that
                  wrote it
    variable_<i>  (…) the trainer's variables, in :meth:`Trainer.state`'s order
    history_<c>   (S, epochs done) per-epoch curve ``c``
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from dkm._atomic import atomic_write

__all__ = ["PhaseState", "PhaseCheckpoint", "RunCheckpoints", "run_key", "code_version"]

#: Seconds between two checkpoints of a phase, by default.
DEFAULT_EVERY_S = 300.0


@dataclass
class PhaseState:
    """A training phase at the end of an epoch.

    Attributes
    ----------
    epochs_done : int
        Epochs trained.
    finished : bool
        The phase ended (its last epoch, or its stopping rule).
    variables : list of numpy.ndarray
        :meth:`dkm.training.Trainer.state`.
    sampler : list of dict
        :meth:`dkm.training.BatchSampler.state`.
    history : dict of str to numpy.ndarray
        Per-epoch curves so far, each ``(S, epochs_done)``.
    seconds : float
        Training time of those epochs, over every process that trained them.
    written_by : str
        The code that wrote it (set on load; a save records the checkpoint's).
    """

    epochs_done: int
    finished: bool
    variables: list[np.ndarray]
    sampler: list[dict[str, Any]]
    history: dict[str, np.ndarray]
    seconds: float = 0.0
    written_by: str = ""


class PhaseCheckpoint:
    """The checkpoint file of one training phase.

    Parameters
    ----------
    path : path
        The ``.npz`` file.
    every_s : float
        Seconds between two saves (:meth:`due`).
    written_by : str
        Recorded in each save: the code that trains.
    """

    def __init__(self, path: str | os.PathLike[str], every_s: float = DEFAULT_EVERY_S,
                 written_by: str = "") -> None:
        if not every_s >= 0:
            raise ValueError(f"every_s must be >= 0, got {every_s!r}")
        self.path = Path(path)
        self.every_s = float(every_s)
        self.written_by = written_by
        self._last_save = time.monotonic()

    def due(self) -> bool:
        """Whether ``every_s`` seconds have passed since the last save (or the start)."""
        return time.monotonic() - self._last_save >= self.every_s

    def save(self, state: PhaseState) -> None:
        """Write ``state`` atomically (an interrupted save leaves the last one whole)."""
        meta = {"epochs_done": state.epochs_done, "finished": state.finished,
                "sampler": state.sampler, "seconds": state.seconds,
                "written_by": self.written_by}
        arrays = {f"variable_{i}": value for i, value in enumerate(state.variables)}
        arrays.update({f"history_{name}": values for name, values in state.history.items()})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(self.path) as stream:
            np.savez(stream, meta=np.array(json.dumps(meta)), **arrays)
        self._last_save = time.monotonic()

    def load(self) -> PhaseState | None:
        """The saved state, or None when there is no checkpoint.

        Raises
        ------
        ValueError
            When the file is not a checkpoint this module wrote.
        """
        if not self.path.exists():
            return None
        try:
            with np.load(self.path, allow_pickle=False) as stored:
                meta = json.loads(str(stored["meta"]))
                n_variables = sum(name.startswith("variable_") for name in stored.files)
                return PhaseState(
                    epochs_done=int(meta["epochs_done"]),
                    finished=bool(meta["finished"]),
                    variables=[stored[f"variable_{i}"] for i in range(n_variables)],
                    sampler=meta["sampler"],
                    history={name.removeprefix("history_"): stored[name]
                             for name in stored.files if name.startswith("history_")},
                    seconds=float(meta["seconds"]),
                    written_by=meta["written_by"],
                )
        except (OSError, EOFError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as error:
            raise ValueError(f"{self.path} is not a readable checkpoint ({error}): a truncated "
                             "or foreign file; delete it to train the phase from its start"
                             ) from error


def code_version(package: Path = Path(__file__).resolve().parent) -> str:
    """The code that trains: HEAD of the checkout holding ``package`` (``dkm`` by default), with
    ``-dirty`` when the package's own tracked files differ from it; ``"unknown"`` outside a
    checkout.

    Other files (the results a long job appends, the notebooks) do not change what a run
    computes, so they do not make it dirty. Each checkpoint records it (``written_by``), and
    so does each record's provenance (:func:`dkm.protocol.provenance.provenance`).
    """
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(package), *args], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()

    try:
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".")
        return git("rev-parse", "HEAD") + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def run_key(config_hashes: Sequence[str]) -> str:
    """Name of a run: the SHA-256 of its seeds' configuration hashes, in order.

    A configuration hash (:func:`dkm.protocol.results.config_hash`) covers the
    dataset, the method, the seed and every hyperparameter; seeds trained
    together are one run.
    """
    return hashlib.sha256(json.dumps(list(config_hashes)).encode()).hexdigest()


@dataclass
class RunCheckpoints:
    """The checkpoints of one run, one file per phase, in ``folder``.

    Attributes
    ----------
    folder : pathlib.Path
        Where the files are (created on the first save).
    key : str
        The run's name (:func:`run_key`).
    every_s : float
        Seconds between two saves of a phase.
    written_by : str
        The code that trains, recorded in each file.
    resumed : list of dict
        One entry per phase that started from a checkpoint: ``phase``,
        ``from_epoch``, ``seconds`` (the training time the checkpoint saved)
        and ``written_by``, filled as the run goes.
    """

    folder: Path
    key: str
    every_s: float = DEFAULT_EVERY_S
    written_by: str = ""
    resumed: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.folder = Path(self.folder)

    def phase(self, name: str) -> PhaseCheckpoint:
        """The checkpoint of phase ``name`` (``"pretraining"``, ``"DCN"`` …)."""
        return PhaseCheckpoint(self.folder / f"{self.key[:24]}-{_slug(name)}.npz",
                               self.every_s, self.written_by)

    def note_resume(self, name: str, state: PhaseState) -> None:
        """Record that phase ``name`` resumed from ``state``."""
        self.resumed.append({"phase": name, "from_epoch": state.epochs_done,
                             "seconds": round(state.seconds, 3), "written_by": state.written_by})

    def seconds_saved(self) -> float:
        """Training time that the resumed phases' checkpoints saved this run."""
        return sum(entry["seconds"] for entry in self.resumed)

    def clear(self) -> None:
        """Remove the run's files (once its records are written)."""
        for path in self.folder.glob(f"{self.key[:24]}-*.npz"):
            path.unlink(missing_ok=True)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")

