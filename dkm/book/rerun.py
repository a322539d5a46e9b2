"""What a reader needs to rerun the book, read from the repository itself.

The book's "Rerun it" section glues these facts rather than typing them: the commit the book
was built from (:func:`commit`), the versions that decide the numbers (:func:`locked_versions`),
where each dataset's files come from and their digests (:func:`data_sources`), and the command
that remakes each protocol store behind the paper's tables with what its records say it cost
(:func:`table_commands`).
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pandas as pd

#: The packages whose versions decide the numbers: a record names them in its provenance.
DECIDING_PACKAGES = ("tensorflow", "numpy", "scipy", "scikit-learn")

_PINNED = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s\\;]+)")
_CONDA_PYTHON = re.compile(r"^\s*-\s*python\s*=\s*([\d.]+)\s*$", re.M)


def commit(root: str | os.PathLike[str]) -> str:
    """The commit checked out in the repository at ``root``, as git names it (40 hex digits),
    with ``+changes`` appended when tracked files differ from it.

    Raises
    ------
    ValueError
        When ``root`` is not inside a git repository or git is not installed.
    """
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", "-C", str(root), *args], check=True, text=True,
                                  capture_output=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError) as err:
            raise ValueError(f"cannot read the commit of {root}: {err}; build the book from a "
                             "git checkout of the repository") from None

    head = git("rev-parse", "HEAD")
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def locked_versions(lock: str | os.PathLike[str], environment: str | os.PathLike[str],
                    packages: tuple[str, ...] = DECIDING_PACKAGES) -> dict[str, str]:
    """The Python version and the pinned versions of ``packages``.

    Parameters
    ----------
    lock : path-like
        A ``requirements.lock`` (pip's ``name==version`` lines with hashes).
    environment : path-like
        The conda ``environment.yml`` that installs the lock; its ``python=`` line names the
        Python the lock is made for.
    packages : tuple of str
        The package names to read, as the lock spells them.

    Returns
    -------
    dict of str to str
        ``"python"`` and each of ``packages`` to its version, in that order.

    Raises
    ------
    ValueError
        When the environment names no Python or the lock pins none of a package.
    """
    pinned = {}
    for line in Path(lock).read_text(encoding="utf-8").splitlines():
        match = _PINNED.match(line)
        if match:
            pinned[match.group(1).lower()] = match.group(2)
    python = _CONDA_PYTHON.search(Path(environment).read_text(encoding="utf-8"))
    if python is None:
        raise ValueError(f"{environment} names no Python version (a '- python=3.x' line)")
    missing = [name for name in packages if name.lower() not in pinned]
    if missing:
        raise ValueError(f"{lock} pins no version of {', '.join(missing)}; run 'make lock'")
    return {"python": python.group(1), **{name: pinned[name.lower()] for name in packages}}


def data_sources() -> pd.DataFrame:
    """Each file the paper's datasets are read from: where it comes from and its SHA-256.

    Read from the package's declarations of its remote files (``dkm.data``), so that the
    book says what the loader checks.

    Returns
    -------
    pandas.DataFrame
        One row per file: ``datasets`` (the named datasets read from it), ``file``,
        ``url`` (its download address; None where the package does not download it itself),
        ``how`` (how to obtain it by hand) and ``sha256`` (the digests accepted,
        comma-separated).
    """
    from dkm.data import _mnist, _newsgroups, _usps

    files = [("mnist", _mnist._MNIST), ("usps, usps-sharp", _usps._USPS),
             ("usps (its check)", _usps._USPS_LIBSVM_TEST), ("20news", _newsgroups._NEWS20)]
    return pd.DataFrame([{"datasets": names, "file": Path(spec.path).name, "url": spec.url,
                          "how": spec.how_to_obtain, "sha256": ", ".join(spec.sha256)}
                         for names, spec in files])


def table_commands(results: str | os.PathLike[str]) -> pd.DataFrame:
    """The command that remakes each protocol store of ``results`` (the runs behind the
    paper's tables), with what its records say it cost.

    Parameters
    ----------
    results : path-like
        The results folder; its protocol stores are :func:`dkm.protocol.results.dataset_stores`.

    Returns
    -------
    pandas.DataFrame
        One row per store: ``dataset``, ``command`` (``python -m dkm run`` of the paper's
        methods on its seeds, ``--native`` where the store holds native runs), ``runs``,
        ``hours`` (the sum of the records' wall times) and ``cpus`` (the CPUs their
        provenance names, as it names them).
    """
    from dkm.protocol import paper
    from dkm.protocol.results import ResultsStore, dataset_stores, is_full_scale

    folder = Path(results)
    rows = []
    for dataset, store in dataset_stores(folder).items():
        records = [r for r in ResultsStore(store).records() if is_full_scale(r)]
        native = " --native" * (ResultsStore(store).arithmetics() == {"native"})
        rows.append({
            "dataset": dataset,
            "command": (f"python -m dkm run --dataset {dataset} "
                        f"--seeds {len(paper.PAPER_SEEDS)}{native} "
                        f"--results results/{store.relative_to(folder).as_posix()}"),
            "runs": len(records),
            "hours": sum(r["wall_time_s"] for r in records) / 3600,
            "cpus": "; ".join(sorted({r["provenance"]["device"].removeprefix("CPU: ")
                                      for r in records})),
        })
    return pd.DataFrame(rows, columns=["dataset", "command", "runs", "hours", "cpus"])
