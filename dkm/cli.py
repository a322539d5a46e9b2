"""Command-line interface: ``python -m dkm run``, ``ablate``, ``snapshot``, ``report``, ``pending``,
``audit``.

Every command knows the methods of the registry (:mod:`dkm.protocol.registry`): the
package's, those of the entry points of the group ``dkm.methods``, and those of the
plugins named with ``--plugin MODULE``. A command imports TensorFlow and the book's
analysis only when it trains or analyses: ``--help`` and ``report`` do neither.

Bad options, unknown datasets or methods and unreadable files end with a
one-line message on stderr and exit status 2, not a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable, Iterable, Sequence

from dkm.reproducibility.arithmetic import (current_arithmetic, recorded_intra_op_threads,
                            reproducible_environment, use_reproducible_arithmetic)
from dkm.protocol import paper, registry
from dkm.startup import start_tensorflow_quietly

#: The paper's eight methods, in the order of its tables.
PAPER_METHODS = registry.PAPER_METHODS


class CommandError(Exception):
    """A user error: reported as one line, exit status 2."""


def _counted(count: int, noun: str) -> str:
    """``"1 new record"``, ``"2 new records"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def _add_arithmetic_options(command: argparse.ArgumentParser, default: str) -> None:
    """``--reproducible`` and ``--native``: the arithmetic of the runs (dkm.reproducibility.arithmetic)."""
    arithmetic = command.add_mutually_exclusive_group()
    arithmetic.add_argument("--reproducible", dest="arithmetic", action="store_const",
                            const="reproducible",
                            help="run in the reproducible arithmetic: TensorFlow's oneDNN "
                                 "kernels off, XLA's capped at AVX2 without its "
                                 "platform-dependent math, OpenMP on one thread, so that CPUs of "
                                 "other instruction sets give the same bits (dkm.reproducibility.arithmetic); "
                                 + default)
    arithmetic.add_argument("--native", dest="arithmetic", action="store_const", const="native",
                            help="run in the CPU's own kernels instead (faster; another CPU may "
                                 "give other numbers); the records say which arithmetic made them")


def _use_arithmetic(arithmetic: str) -> None:
    """Make this process run in ``arithmetic`` (before TensorFlow starts)."""
    if arithmetic == "reproducible":
        try:
            use_reproducible_arithmetic()
        except RuntimeError as error:
            raise CommandError(str(error)) from None
    elif current_arithmetic() != "native":
        raise CommandError(f"--native: this process's environment sets the reproducible "
                           f"arithmetic's variables ({', '.join(reproducible_environment())}); "
                           "unset them or leave --native out")


def _add_plugin_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--plugin", action="append", dest="plugins", default=[],
                         metavar="MODULE",
                         help="import MODULE, whose METHODS declares methods of your own "
                              "(a tuple of dkm.protocol.registry.Method); repeat for several. "
                              "Installed packages' methods (entry points of the group "
                              f"{registry.ENTRY_POINT_GROUP}) are known without it")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dkm",
        description="Run the Deep k-Means paper's protocol and report its tables.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser(
        "run", help="train methods for several seeds and append one record per run",
        description="Train each method on the dataset for every seed (the paper: 10), evaluate "
                    "ACC/NMI/ARI on the validation and test split, and append the records to "
                    "the results store. Runs already in the store are skipped, so an interrupted "
                    "command can simply be run again.",
    )
    run.add_argument("--dataset", required=True, action="append",
                     help="a dataset name (mnist, usps, usps-sharp, 20news, rcv1, digits) or a path to a "
                          ".npz/.npy/.csv/svmlight file; repeat for several")
    run.add_argument("--method", action="append", dest="methods", metavar="METHOD",
                     help=f"method id, repeat for several (default: the paper's eight: "
                          f"{', '.join(PAPER_METHODS)}; also "
                          f"{', '.join(m.id for m in registry.METHODS.values() if not m.in_paper and m.runner is None)})")
    run.add_argument("--seeds", type=_positive_int, default=None,
                     help="number of seeds, taken in order from the paper's seeds "
                          f"({', '.join(map(str, paper.PAPER_SEEDS))}); default 10")
    run.add_argument("--seed", type=int, action="append", dest="seed_list", metavar="SEED",
                     help="an explicit seed (repeat); overrides --seeds")
    run.add_argument("--scale", type=_positive_float, default=1.0,
                     help="multiply every epoch count (e.g. 0.02 for a quick run); default 1 "
                          "(the paper's epochs)")
    run.add_argument("--lambda-search", action="store_true",
                     help="run every λ/γ of the paper's grid {1e-4, ..., 1e3} instead of the "
                          "paper's validation-optimal value")
    run.add_argument("--distance", choices=("euclidean", "cosine"), default=None,
                     help="clustering distance of the DKM methods (the supplement's cosine "
                          "variant on 20NEWS); default euclidean")
    run.add_argument("--n-clusters", type=_positive_int, default=None,
                     help="number of clusters for a user file (default: its number of classes)")
    run.add_argument("--label-column", default=None,
                     help="CSV files: the column holding the labels")
    run.add_argument("--seeds-per-batch", type=_positive_int, default=None,
                     help="seeds trained together as one batched computation (default: all "
                          "on a GPU, one at a time on a CPU)")
    run.add_argument("--data-home", default=None,
                     help="directory of the named datasets (default: $DKM_DATA_HOME, then a "
                          "per-user cache)")
    run.add_argument("--results", required=True,
                     help="the JSON Lines results store to read and append to (a file)")
    run.add_argument("--read-also", action="append", dest="read_also", metavar="STORE",
                     help="another store whose runs are read, not run again (repeat for several); "
                          "default: with --lambda-search, the protocol's stores of the datasets in "
                          "the results folder (RESULTS's folder, or the one above native/ or "
                          "reproducible/: <dataset>.jsonl, native/<dataset>.jsonl, "
                          "reproducible/<dataset>.jsonl), which hold the search's runs at the "
                          "paper's value; otherwise none")
    run.add_argument("--yes", action="store_true",
                     help="start the grid without a choice of --method and of --seeds/--seed "
                          "(the paper's eight methods, ten seeds: many CPU-hours at full scale), "
                          "whose plan is otherwise printed and not run")
    run.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="run the grid's pieces on the Dask scheduler at ADDRESS, or on a "
                          "LocalCluster with 'local' (needs pip install 'dkm[cluster]')")
    run.add_argument("--precision", choices=("float32", "bfloat16"), default="float32",
                     help="precision of the networks' matrix products (default float32); "
                          "bfloat16 runs are recorded as such, beside the float32 ones, and "
                          "are faster only where the hardware multiplies bfloat16 natively "
                          "(CPUs with avx512_bf16 or AMX)")
    run.add_argument("--quiet", action="store_true", help="no progress output")
    run.add_argument("--progress", action="store_true",
                     help="draw the progress bars (runs, and epochs of the run in progress) even "
                          "where stderr is not a terminal (a log file)")
    _add_arithmetic_options(run, "the default")
    run.add_argument("--verbose", action="store_true",
                     help="keep TensorFlow's start-up messages (CUDA and oneDNN probing)")

    ablate = commands.add_parser(
        "ablate", help="run an ablation study's variants and append one record per run",
        description="Run every variant of an ablation study (dkm.book.ablations.STUDIES) on the "
                    "datasets for every seed and append the records to RESULTS/<study>.jsonl. "
                    "Runs already in the store are skipped, so an interrupted command can "
                    "simply be run again.",
    )
    ablate.add_argument("--study", required=True,
                        help="the study: dcn-authors, alpha, towards-dkm, weight-decay, "
                             "alpha-rescaling or lambda (alpha-rescaling: 20NEWS only, where "
                             "DKM^p fails at α <= 100; lambda: USPS only, its values are around "
                             "USPS's collapse)")
    ablate.add_argument("--dataset", required=True, action="append",
                        help="a dataset name or a path, as for run; repeat for several")
    ablate.add_argument("--method", action="append", dest="methods", default=None,
                        help="run only the study's variants of this method (repeat for several); "
                             "default: all of them")
    ablate.add_argument("--seeds", type=_positive_int, default=3,
                        help="number of seeds, taken in order from the paper's seeds; default 3")
    ablate.add_argument("--seed", type=int, action="append", dest="seed_list", metavar="SEED",
                        help="an explicit seed (repeat); overrides --seeds")
    ablate.add_argument("--scale", type=_positive_float, default=1.0,
                        help="multiply every epoch count; default 1 (the paper's epochs)")
    ablate.add_argument("--seeds-per-batch", type=_positive_int, default=None,
                        help="seeds trained together, as for run")
    ablate.add_argument("--data-home", default=None, help="directory of the named datasets")
    ablate.add_argument("--results", required=True,
                        help="the folder of the studies' stores (e.g. results/ablations); the "
                             "pretraining cache is the protocol's, beside it")
    ablate.add_argument("--read-also", action="append", dest="read_also", metavar="STORE",
                        help="another store whose runs are read, not run again (repeat for "
                             "several); default: the other studies' stores in RESULTS and the "
                             "protocol's stores of the datasets in the folder above it")
    ablate.add_argument("--quiet", action="store_true", help="no progress output")
    ablate.add_argument("--progress", action="store_true",
                        help="draw the progress bars even where stderr is not a terminal")
    _add_arithmetic_options(ablate, "the default")
    ablate.add_argument("--verbose", action="store_true",
                        help="keep TensorFlow's start-up messages (CUDA and oneDNN probing)")

    snapshot = commands.add_parser(
        "snapshot", help="train methods for one seed and keep their embeddings and curves",
        description="Train the methods for one seed from one shared pretraining, as the "
                    "protocol does, and keep for a fixed sample of points each method's final "
                    "embedding and clusters, its per-epoch curves and its scores, in "
                    "SNAPSHOTS/<dataset>-<seed>.npz (dkm.book.snapshots). With --study, one file "
                    "per variant of the study, SNAPSHOTS/<dataset>-<seed>-<method>-<tag>.npz: "
                    "the files the book's figures read. A file that exists is kept, and "
                    "the training saves its state in SNAPSHOTS/.checkpoints/ as it goes, so "
                    "an interrupted command run again resumes where it stopped.",
    )
    snapshot.add_argument("--dataset", required=True,
                          help="a dataset name or a path, as for run (one)")
    snapshot.add_argument("--seed", type=int, default=paper.PAPER_SEEDS[0],
                          help=f"the seed; default {paper.PAPER_SEEDS[0]}, the paper's first")
    snapshot.add_argument("--method", action="append", dest="methods", default=None,
                          help="a method with an embedding (repeat for several); with --study, "
                               "keep only its variants (default: all of the study's)")
    snapshot.add_argument("--study", default=None,
                          help="snapshot every variant of this ablation study instead")
    snapshot.add_argument("--name", default=None,
                          help="without --study, file the methods under "
                               "<dataset>-<seed>-<name>.npz (beside the protocol's own file)")
    snapshot.add_argument("--n-points", type=_positive_int, default=2_000,
                          help="size of the sample of points kept; default 2000")
    snapshot.add_argument("--scale", type=_positive_float, default=1.0,
                          help="multiply every epoch count; default 1 (the paper's epochs)")
    snapshot.add_argument("--data-home", default=None, help="directory of the named datasets")
    snapshot.add_argument("--snapshots", required=True,
                          help="the folder of the snapshots (e.g. results/snapshots)")
    snapshot.add_argument("--verbose", action="store_true",
                          help="keep TensorFlow's start-up messages (CUDA and oneDNN probing)")
    _add_arithmetic_options(snapshot, "the default")

    pending = commands.add_parser(
        "pending", help="list the runs a results folder lacks, and the commands that add them",
        description="For each protocol store of a results folder (RESULTS/<dataset>.jsonl, the "
                    "paper's eight methods), each line search's store that exists "
                    "(RESULTS/<dataset>-lambda.jsonl: the methods of "
                    "dkm.protocol.declarations.LINE_SEARCHES, the paper's grid, its first three "
                    "seeds) and each ablation study's store (RESULTS/ablations/<study>.jsonl), "
                    "and the same stores of the reruns in RESULTS/reproducible/, list the runs at "
                    "the given scale that have no scored record yet, each with the command that "
                    "adds them; the runs that reruns superseded (RESULTS/native/) are whole. "
                    "First names the stores found, those the book reads "
                    "(dkm.protocol.results.READ) marked *. Only reads the stores.",
    )
    pending.add_argument("--results", required=True, help="the results folder (e.g. results)")
    pending.add_argument("--seeds", type=_positive_int, default=len(paper.PAPER_SEEDS),
                         help="the protocol's seeds: the paper's first SEEDS; default "
                              f"{len(paper.PAPER_SEEDS)}")
    pending.add_argument("--study-seeds", type=_positive_int, default=3,
                         help="the studies' seeds: the paper's first STUDY_SEEDS; default 3")
    pending.add_argument("--scale", type=_positive_float, default=1.0,
                         help="the runs' epoch scale; default 1 (the paper's epochs)")

    audit = commands.add_parser(
        "audit", help="rerun records and say which give their numbers again, bit for bit",
        description="Train the runs of chosen records again (pretraining included) and compare "
                    "their scores bit for bit, in the records' arithmetic and on as many "
                    "TensorFlow intra-op threads as they ran; where the scores differ, name what "
                    "differs between the record's machine and settings and this one's "
                    "(dkm.protocol.audit). Nothing is appended to the store.",
    )
    audit.add_argument("--results", required=True, help="the JSON Lines results store to audit")
    audit.add_argument("--method", action="append", dest="methods", metavar="METHOD",
                       help="audit this method's records (repeat for several); default: all")
    audit.add_argument("--seed", action="append", type=int, dest="seeds", metavar="SEED",
                       help="audit this seed's records (repeat for several); default: all")
    audit.add_argument("--limit", type=_positive_int, default=None,
                       help="audit at most this many records, in the store's order")
    audit.add_argument("--output", default=None,
                       help="append one JSON line per audited record to this file")
    audit.add_argument("--data-home", default=None, help="directory of the named datasets")
    audit.add_argument("--verbose", action="store_true",
                       help="keep TensorFlow's start-up messages (CUDA and oneDNN probing)")
    _add_arithmetic_options(audit, "by default the audited records' own arithmetic")

    report = commands.add_parser(
        "report", help="render the paper's tables from a results store",
        description="Render a table of the paper or its supplement from the records.",
    )
    report.add_argument("--results", required=True, action="append", dest="stores",
                        metavar="RESULTS",
                        help="a JSON Lines results store, or a directory of them (*.jsonl); "
                             "repeat for several")
    report.add_argument("--table", action="append", dest="tables", metavar="NAME",
                        help="table name, repeat for several (default: all): "
                             "table1, table2, ari1, ari2, cosine, friendliness, tradeoff, "
                             "methods")
    report.add_argument("--vs-paper", action="store_true",
                        help="show the paper's value and a per-cell verdict beside each cell")
    report.add_argument("--claims", action="store_true",
                        help="instead of the tables, the paper's claims tested on each dataset "
                             "of the records (holds, fails or inconclusive): at the paper's "
                             "margin on its datasets, at the margin of the records' own spread "
                             "on others")
    report.add_argument("--format", choices=("markdown", "html", "latex"), default="markdown")
    for command in (run, ablate, snapshot, pending, audit, report):  # each reads or runs methods
        _add_plugin_option(command)
    return parser


def _seeds(args: argparse.Namespace, default: int = 10) -> list[int]:
    if args.seed_list:
        return list(args.seed_list)
    count = default if args.seeds is None else args.seeds
    return _first_seeds(count, "--seeds", "; pass more with --seed")


def _first_seeds(count: int, option: str, advice: str = "") -> list[int]:
    """The paper's first ``count`` seeds; more is a user error naming ``option``."""
    if count > len(paper.PAPER_SEEDS):
        raise CommandError(f"{option} {count}: the paper has {len(paper.PAPER_SEEDS)} seeds"
                           + advice)
    return list(paper.PAPER_SEEDS[:count])


def _command_run(args: argparse.Namespace) -> int:
    from dkm.data import load
    from dkm.protocol.grid import default_read_also, run_grid
    from dkm.protocol.results import ResultsStore

    methods = args.methods or list(PAPER_METHODS)
    unknown = [m for m in methods if m not in registry.available_methods()]
    if unknown:
        raise CommandError(f"unknown method {unknown[0]!r}; choose among "
                           f"{', '.join(registry.available_methods())}")
    if args.precision != "float32" and args.arithmetic != "native":
        raise CommandError(f"--precision {args.precision} needs the instructions that the "
                           "reproducible arithmetic caps away (AVX2 has no bfloat16 products); "
                           "add --native")
    datasets = [load(name, args.data_home, n_clusters=args.n_clusters,
                     label_column=args.label_column)
                if args.n_clusters or args.label_column else load(name, args.data_home)
                for name in args.dataset]
    overrides = {"distance": args.distance} if args.distance else None
    if overrides and any(registry.get(m).family != "dkm" for m in methods):
        deep_kmeans = ", ".join(m.id for m in registry.METHODS.values() if m.family == "dkm")
        raise CommandError(f"--distance applies to the DKM methods only ({deep_kmeans})")
    seeds = _seeds(args)
    if args.methods is None or (args.seeds is None and not args.seed_list):
        _plan(args, datasets, methods, seeds)
    ResultsStore(args.results).check_writable()  # before TensorFlow, and before any training
    _warn_about_scale(datasets)
    read_also = (default_read_also(args.results, datasets, lambda_search=args.lambda_search)
                 if args.read_also is None else [Path(path) for path in args.read_also])
    _start_tensorflow(args)
    from dkm.methods.common import LoopConfig

    client = None
    if args.scheduler:
        from dkm.protocol.cluster import connect

        client = connect(args.scheduler)
    try:
        added = run_grid(datasets, methods, seeds, args.results, scale=args.scale,
                         lambda_search=args.lambda_search, overrides=overrides,
                         seeds_per_batch=args.seeds_per_batch,
                         loop=LoopConfig(progress=_bars(args), precision=args.precision),
                         read_also=read_also, progress=_bars(args), log=_log(args),
                         client=client)
    finally:
        if client is not None:
            client.close()
    print(f"{_counted(added, 'new record')} in {args.results}{_read_too(read_also)}")
    return 0


def _read_too(stores: Sequence[Path]) -> str:
    """What a command's last line says of the other stores it read."""
    if not stores:
        return ""
    holds = "holds" if len(stores) == 1 else "hold"
    return f" (the runs {', '.join(map(str, stores))} {holds} read, not run again)"


def _bars(args: argparse.Namespace) -> bool:
    """Whether to draw progress bars: not with --quiet; where stderr is a terminal, or with
    --progress."""
    return not args.quiet and (args.progress or sys.stderr.isatty())


def _plan(args: argparse.Namespace, datasets: Sequence, methods: Sequence[str],
          seeds: Sequence[int]) -> None:
    """Print the plan of a grid whose methods or seeds were not chosen, with the time its
    runs took where the committed stores recorded them; without --yes, refuse to start it."""
    from dkm.protocol.grid import recorded_seconds
    from dkm.protocol.results import results_folder

    folders = [Path(__file__).resolve().parents[1] / "results",
               results_folder(args.results)]
    seconds, unknown = recorded_seconds(folders, [data.name for data in datasets], methods)
    runs = len(datasets) * len(methods) * len(seeds)
    total = sum(seconds.values()) * len(seeds) * args.scale
    estimate = (f"about {total / 3600:.1f} CPU-hours, from the median wall time of each "
                "method's full-scale runs recorded in " + ", ".join(
                    str(folder) for folder in dict.fromkeys(folders) if folder.is_dir())
                + (f" times the scale {args.scale:g}" if args.scale != 1 else "")
                if seconds else "no recorded run to estimate its time from")
    if unknown:
        estimate += f" (no recorded run of {', '.join(unknown)}: not counted)"
    print(f"the grid: {len(methods)} methods ({', '.join(methods)}) × {len(seeds)} seeds "
          f"({', '.join(map(str, seeds))}) × {len(datasets)} dataset"
          f"{'' if len(datasets) == 1 else 's'} ({', '.join(data.name for data in datasets)}) "
          f"at scale {args.scale:g}: {runs} runs (those {args.results} holds are skipped); "
          f"{estimate}", file=sys.stderr, flush=True)
    if not args.yes:
        raise CommandError("the grid's methods or seeds were not chosen: add --yes to start "
                           "the plan above, or choose with --method and --seeds/--seed")


def _warn_about_scale(datasets: Sequence) -> None:
    """A line for each dataset whose features are far from unit scale
    (:func:`dkm.data.feature_scale_advice`)."""
    from dkm.data import feature_scale_advice

    for data in datasets:
        advice = feature_scale_advice(data)
        if advice:
            print(f"warning: {advice}", file=sys.stderr, flush=True)


def _log(args: argparse.Namespace) -> Callable[[str], None]:
    """Progress messages to stderr, or nowhere with --quiet."""
    return (lambda message: None) if args.quiet else (lambda message: print(message, file=sys.stderr))


def _command_ablate(args: argparse.Namespace) -> int:
    from dkm.book.ablations import run_study, study, study_read_also
    from dkm.data import load
    from dkm.protocol.results import ResultsStore, store_path

    _start_tensorflow(args)  # the studies' models import it
    name = study(args.study).name
    datasets = [load(dataset, args.data_home) for dataset in args.dataset]
    ResultsStore(store_path(args.results, name)).check_writable()
    _warn_about_scale(datasets)
    read_also = (study_read_also(name, args.results, [data.name for data in datasets])
                 if args.read_also is None else [Path(path) for path in args.read_also])
    added = run_study(name, datasets, _seeds(args, default=3), args.results,
                      methods=args.methods, scale=args.scale,
                      seeds_per_batch=args.seeds_per_batch, read_also=read_also,
                      progress=_bars(args), log=_log(args))
    print(f"{_counted(added, 'new record')} in {store_path(args.results, name)}"
          f"{_read_too(read_also)}")
    return 0


def _command_snapshot(args: argparse.Namespace) -> int:
    from dkm.book.snapshots import save_snapshot, snapshot_name
    from dkm.data import load

    data = load(args.dataset, args.data_home)
    folder = Path(args.snapshots)
    if args.study is None:
        if not args.methods:
            raise CommandError("name the methods to keep with --method (or a study with --study)")
        name = snapshot_name(data.name, args.seed)
        if args.name:
            name = name.removesuffix(".npz") + f"-{args.name}.npz"
        # (method list, overrides) of each file to write, by its name
        planned = {name: (args.methods, None)}
    else:
        from dkm.book.ablations import study

        if args.name:
            raise CommandError("--name names a protocol snapshot; a study's files are named "
                               "by their variants")
        _start_tensorflow(args)  # the studies' models import it
        planned = {}
        for variant in study(args.study).variants_for(data.name, args.methods):
            overrides = variant.overrides_for(data.name)
            planned[snapshot_name(data.name, args.seed, variant.method, overrides)] = (
                [variant.method], {variant.method: overrides} if overrides else None)
    _start_tensorflow(args)
    for name, (methods, overrides) in planned.items():
        path = folder / name
        if path.exists():
            print(f"kept {path} (it exists)")
            continue
        save_snapshot(data, methods, args.seed, path, n_points=args.n_points, scale=args.scale,
                      overrides=overrides, checkpoint_dir=folder / ".checkpoints")
        print(f"wrote {path}")
    return 0


def _command_pending(args: argparse.Namespace) -> int:
    from dkm.book import ablations, analysis
    from dkm.protocol.declarations import LINE_SEARCHES
    from dkm.protocol.experiments import LINE_SEARCH_SEEDS, TRADEOFF_GRID
    from dkm.data import paper_dataset
    from dkm.protocol.results import ResultsStore, dataset_stores, record_scale, store_path

    folder = Path(args.results)
    if not folder.is_dir():
        raise CommandError(f"no results folder {folder}")
    seeds = _first_seeds(args.seeds, "--seeds")
    study_seeds = _first_seeds(args.study_seeds, "--study-seeds")
    search_seeds = list(paper.PAPER_SEEDS[:LINE_SEARCH_SEEDS])
    scale = "" if args.scale == 1.0 else f" --scale {args.scale:g}"

    def at_scale(records: Iterable[dict]) -> list[dict]:
        return [r for r in records if record_scale(r) == args.scale]

    def settings(store: Path) -> str:
        """The scale, and ``--native`` for a store of native runs (the commands' default is
        the reproducible arithmetic, which such a store refuses)."""
        return scale + " --native" * (ResultsStore(store).arithmetics() == {"native"})

    def seed_options(missing: Sequence[int]) -> str:
        return " ".join(f"--seed {seed}" for seed in missing)

    lines, found = [], []
    stores = ablations.identified_stores(folder)
    for sub in _RUN_FOLDERS:  # the stores runs are added to: the superseded ones are whole
        for dataset, store in dataset_stores(folder / sub).items():
            found.append(store)
            records = at_scale(ResultsStore(store).records())
            for distance, methods in paper.protocol_grid(dataset).items():
                # a run of one distance is not a run of the other
                missing = analysis.missing_seeds(
                    [r for r in records if r["params"].get("distance", "euclidean") == distance],
                    dataset, methods, seeds)
                if not missing:
                    continue
                total = sum(map(len, missing.values()))
                named = "" if distance == "euclidean" else f" with the {distance} distance"
                lines.append(f"{store}: {total} of {len(methods) * len(seeds)} runs{named} missing")
                options = settings(store) + ("" if distance == "euclidean"
                                             else f" --distance {distance}")
                lines += [f"  python -m dkm run --dataset {dataset} --method {method} "
                          f"{seed_options(left)}{options} --results {store}"
                          for method, left in missing.items()]
        for dataset, methods in LINE_SEARCHES.items():
            store = store_path(folder / sub, f"{dataset}-lambda")
            if not store.exists():
                continue
            found.append(store)
            # the search's runs with those another store holds (the paper's value: the protocol's)
            _, searched = analysis.stored_search(store, dataset, methods)
            missing = analysis.missing_search_seeds(at_scale(searched), paper_dataset(dataset),
                                                    methods, TRADEOFF_GRID, search_seeds)
            if missing:
                total = sum(map(len, missing.values()))
                lines.append(f"{store}: the line search misses {total} of "
                             f"{len(methods) * len(search_seeds)} seeds' grids")
                options = settings(store)
                lines += [f"  python -m dkm run --dataset {dataset} --method {method} "
                          f"--lambda-search {seed_options(left)}{options} --results {store}"
                          for method, left in missing.items()]
        for name, study in ablations.STUDIES.items():
            store = store_path(folder / sub / "ablations", name)
            if not store.exists():
                continue
            found.append(store)
            # another study's runs too
            records = at_scale(ablations.load_study(name, store.parent, stores=stores))
            datasets = study.datasets or sorted({r["dataset"] for r in records})
            rows = ablations.pending(name, records, datasets, study_seeds)
            if len(rows):
                lines.append(f"{store}: {sum(map(len, rows.missing))} runs missing")
                options = settings(store)
                for (dataset, method), group in rows.groupby(["dataset", "method"], sort=False):
                    left = [seed for seed in study_seeds if any(seed in m for m in group.missing)]
                    lines.append(f"  python -m dkm ablate --study {name} --dataset {dataset} "
                                 f"--method {method} {seed_options(left)}{options} "
                                 f"--results {store.parent}")
    lines += _native_snapshots(folder)
    print(_found_stores(folder, found))
    print("\n".join(lines) if lines else f"every run of the stores in {folder} is there")
    return 0


#: The folders of a results folder whose stores runs are added to: its own, and that of the
#: reruns in the reproducible arithmetic (the runs those supersede lie whole under ``native/``).
_RUN_FOLDERS = ("", "reproducible")


def _found_stores(folder: Path, found: Sequence[Path]) -> str:
    """The stores ``pending`` read, those the book reads (:data:`dkm.protocol.results.READ`)
    marked ``*``."""
    from dkm.protocol.results import declared_stores

    read = set(declared_stores(folder))
    return (f"the stores of {folder} (* the book reads its datasets' runs there): "
            + ", ".join(f"{store.relative_to(folder).as_posix()}{'*' * (store in read)}"
                        for store in found))


def _native_snapshots(folder: Path) -> list[str]:
    """The snapshots made in the native arithmetic of a dataset whose protocol runs the book
    reads in the reproducible one (:data:`dkm.protocol.results.READ`): a page reads a dataset
    in one arithmetic."""
    from dkm.reproducibility.arithmetic import recorded_arithmetic
    from dkm.book.snapshots import load_snapshot
    from dkm.protocol.results import ResultsStore, protocol_store, READ

    lines = []
    for dataset in READ:
        protocol = protocol_store(folder, dataset)
        if not protocol.is_file() or ResultsStore(protocol).arithmetics() != {"reproducible"}:
            continue
        for path in sorted((folder / "snapshots").glob(f"{dataset}-*.npz")):
            if recorded_arithmetic(load_snapshot(path).meta.get("provenance", {})) == "native":
                lines.append(f"{path}: made in the native arithmetic; make it again with "
                             "python -m dkm snapshot --reproducible (its methods, seed and "
                             "study as its file names them)")
    return lines


def _command_audit(args: argparse.Namespace) -> int:
    import json

    from dkm.data import load
    from dkm.protocol.audit import audit_record
    from dkm.protocol.environment import deciding_versions, version_differences
    from dkm.protocol.results import ResultsStore, record_arithmetic

    store = Path(args.results)
    scored = [r for r in ResultsStore(store).require_records() if r.get("metrics") is not None]
    chosen = [r for r in scored
              if (args.methods is None or r["method"] in args.methods)
              and (args.seeds is None or r["seed"] in args.seeds)]
    if not chosen:
        seeds: dict[str, set[int]] = {}
        for record in scored:
            seeds.setdefault(record["method"], set()).add(record["seed"])
        held = "; ".join(f"{method} seeds {', '.join(map(str, sorted(found)))}"
                         for method, found in seeds.items())
        raise CommandError(f"no scored record of {store} is of the methods and seeds asked; "
                           f"it holds {held or 'no scored record'}")
    chosen = chosen[:args.limit]
    arithmetics = sorted({record_arithmetic(record) for record in chosen})
    if len(arithmetics) > 1:
        raise CommandError(f"the records chosen were made in {' and '.join(arithmetics)} "
                           "arithmetic: audit them apart (--method, --seed)")
    if args.arithmetic not in (None, arithmetics[0]):
        raise CommandError(f"--{args.arithmetic}: the records were made in the {arithmetics[0]} "
                           f"arithmetic, and a rerun in another is another run; leave "
                           f"--{args.arithmetic} out")
    threads = {recorded_intra_op_threads(record.get("provenance", {})) for record in chosen}
    threads.discard(None)
    if len(threads) > 1:
        raise CommandError(f"the records chosen ran TensorFlow on "
                           f"{' and '.join(map(str, sorted(threads)))} intra-op threads: audit "
                           "them apart (--method, --seed)")
    if threads:  # a larger fit's bits depend on the number
        os.environ["TF_NUM_INTRAOP_THREADS"] = str(threads.pop())
    here = deciding_versions()  # read once: every record is compared with the same
    for versions in dict.fromkeys(tuple(version_differences(record.get("provenance", {}), here))
                                  for record in chosen):
        if versions:
            print(f"the packages differ from the record's ({'; '.join(versions)}): the rerun may "
                  "differ for that alone; `make test` installs the lock's versions",
                  file=sys.stderr, flush=True)
    _use_arithmetic(arithmetics[0])
    _start_tensorflow(args)
    datasets = {}
    for record in chosen:
        if record["dataset"] not in datasets:
            datasets[record["dataset"]] = load(record["dataset"], args.data_home)
        audit = audit_record(record, datasets[record["dataset"]])
        summary = audit.summary()
        print(f"{record['dataset']} {record['method']} seed {record['seed']}: {audit.verdict} "
              f"(test ACC {100 * summary['recorded_test']['acc']:.2f} recorded, "
              f"{100 * summary['rerun_test']['acc']:.2f} rerun): {audit.reason}", flush=True)
        for difference in audit.score_differences:
            print(f"  {difference}", flush=True)
        if args.output is not None:
            with open(args.output, "a", encoding="utf-8") as output:
                output.write(json.dumps({**summary, "store": str(store)}) + "\n")
    return 0


def _store_files(paths: Sequence[str]) -> list[Path]:
    """The stores named: files as given, directories by their ``*.jsonl``."""
    files = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            if not found:
                raise CommandError(f"no results store (*.jsonl) in the directory {name}")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise CommandError(f"no results store at {name}: run `python -m dkm run ... "
                               f"--results {name}` first")
    return files


def _command_report(args: argparse.Namespace) -> int:
    if args.claims and (args.tables or args.vs_paper):
        raise CommandError("--claims replaces the tables: give it without --table and "
                           "--vs-paper")
    stores = _store_files(args.stores)
    from dkm.book import tables
    from dkm.protocol.results import ResultsStore

    names = args.tables or [n for n in tables.TABLES if n != "datasets"]
    unknown = [n for n in names if n not in tables.TABLES]
    if unknown:
        raise CommandError(f"unknown table {unknown[0]!r}; choose among {', '.join(tables.TABLES)}")
    named = {Path(name) for name in args.stores}  # a directory's stores may be empty, not all
    records = [r for store in map(ResultsStore, stores)
               for r in (store.require_records() if store.path in named else store.records())]
    if not records:
        raise CommandError(f"no record in {', '.join(map(str, stores))}: run `python -m dkm run "
                           "... --results STORE` first")
    print(f"read {_counted(len(records), 'record')} from {', '.join(map(str, stores))}",
          file=sys.stderr)
    if args.claims:
        return _report_claims(records, args.format)
    for name in names:
        frame = tables.build(name, records, vs_paper=args.vs_paper,
                             missing_reason={"rcv1": "not run: data unavailable"})
        print(f"\n## {name}\n")
        print(tables.render(frame, fmt=args.format))
    return 0


def _load_plugins(plugins: Sequence[str]) -> None:
    """Add the methods the plugins declare to the registry (:func:`registry.load_plugins`)."""
    for plugin in plugins:
        try:
            registry.load_plugins([plugin])
        except (ImportError, ValueError) as error:
            raise CommandError(f"--plugin {plugin}: {error}") from None


def _report_claims(records: list[dict], fmt: str) -> int:
    """Print the paper's claims tested on each dataset of ``records``, one table each: the
    front page's test (:func:`dkm.book.analysis.check_claims`) on the paper's datasets and
    their variants, those of the page on a reader's data
    (:func:`dkm.book.analysis.check_claims_on_data`) on others;
    claims between methods the records do not hold are left out."""
    from dkm.book import analysis, tables
    from dkm.data import paper_dataset

    for dataset in dict.fromkeys(record["dataset"] for record in records):
        if paper_dataset(dataset) in paper.DATASET_LABELS:
            checked, margin = analysis.check_claims(records, datasets=[dataset]), "the paper's"
        else:
            checked, margin = analysis.check_claims_on_data(records, dataset), "its runs' spread"
        checked = checked[checked["n"] > 0]
        print(f"\n## {dataset}: the paper's claims, margin from {margin}\n")
        if checked.empty:
            print("No claim of the paper is between two methods of these records.")
            continue
        print(tables.render(analysis.verdict_table(checked, f"The paper's claims on {dataset}"),
                            fmt=fmt))
    return 0


def _start_tensorflow(args: argparse.Namespace) -> None:
    """Import TensorFlow for a command whose arguments are checked, quietly unless ``--verbose``.

    Commands call it once they have refused what they can refuse without it,
    so that a mistyped argument is reported without TensorFlow's start-up time.
    """
    if not getattr(args, "verbose", False):
        start_tensorflow_quietly()


def _start_tensorflow_without_keras() -> None:
    """Keep Keras out of this process's TensorFlow, which the package does not use.

    TensorFlow imports Keras's optimisers as it starts, at a cost in start-up time and
    memory (``benchmarks/README.md``), unless ``TF_USE_LEGACY_KERAS`` asks for the separate ``tf_keras``
    package; where that package is not installed, TensorFlow's attempt fails
    quietly and no Keras loads. So the variable is set, before TensorFlow
    starts, when neither it nor ``tf_keras`` is there; a value set by the user
    is kept. ``tf.keras`` is then unavailable in the process.
    """
    from importlib.util import find_spec

    if "tensorflow" not in sys.modules and find_spec("tf_keras") is None:
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")


def _is_usage_error(error: BaseException) -> bool:
    """Whether ``error`` is a bad option, file or value, reported as one line: a
    :class:`CommandError`, or a ``ValueError``, ``FileNotFoundError`` or ``ImportError`` the
    package raised itself (its messages are written for the user: a file that cannot be read,
    a value out of range, a store of the other arithmetic). The same errors raised inside
    another library (TensorFlow, NumPy, ...), and every other exception, are faults."""
    if isinstance(error, CommandError):
        return True
    if not isinstance(error, (ValueError, FileNotFoundError, ImportError)):
        return False
    frame = error.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    module = "" if frame is None else frame.tb_frame.f_globals.get("__name__", "")
    return module == "dkm" or module.startswith("dkm.")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m dkm``; returns the exit status."""
    args = build_parser().parse_args(argv)
    _start_tensorflow_without_keras()
    try:
        if args.command in ("run", "ablate", "snapshot"):  # before a plugin imports TensorFlow
            _use_arithmetic(args.arithmetic or "reproducible")
        _load_plugins(args.plugins)
        return {"run": _command_run, "ablate": _command_ablate, "snapshot": _command_snapshot,
                "report": _command_report, "pending": _command_pending,
                "audit": _command_audit}[args.command](args)
    except Exception as error:
        if not _is_usage_error(error):
            raise  # a fault: its traceback is kept
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"python -m dkm {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kept = ("finished snapshots are kept, the one in progress checkpointed"
                if args.command == "snapshot" else "finished runs are in the results store")
        print(f"interrupted: {kept}; run the same command again to continue", file=sys.stderr)
        return 130
