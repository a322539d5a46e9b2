"""Deep k-Means (Moradi Fard, Thonet and Gaussier, 2018) in TensorFlow 2.

The package has four layers, each importing only the ones below it (an import-linter
contract in ``pyproject.toml``, checked by the tests):

1. the core, ``dkm`` itself: what a reader of the paper needs, the models, their training,
   the data and the metrics;
2. ``dkm.reproducibility``: what a process opts into for runs that rerun bit for bit and
   grids that compile once (the reproducible arithmetic, the pinned cache sizes, the
   shared compiled epochs);
3. ``dkm.protocol``: the paper's protocol, the method registry, runs, records and grids;
4. ``dkm.book``: what the book is built from: statistics, tables, claims, ablations,
   snapshots and figures;

and on top of them the command line, ``dkm.cli``. Each module has one job.

The core. Data:

``dkm.data``                 the paper's datasets and the user's own files (:func:`dkm.data.load`),
                             one private module per job or source, all re-exported by ``dkm.data``:
``dkm.data._dataset``        the ``Dataset`` container, the checks of its fields, ``from_arrays``.
``dkm.data._fetch``          the data directory, downloads and SHA-256 checksums.
``dkm.data._mnist``          MNIST.
``dkm.data._usps``           USPS: sharp, the paper's smoothed variant, LIBSVM's test part.
``dkm.data._newsgroups``     20 Newsgroups, tf-idf of its 2,000 top words.
``dkm.data._rcv1``           RCV1: the paper's 4-class subset and its loader.
``dkm.data._digits``         scikit-learn's bundled 8x8 digits.
``dkm.data._files``          the user's ``.npz``, ``.npy``, ``.csv`` and svmlight files.
``dkm.splits``               the validation / test split of the protocol.

Models, their training and their evaluation:

``dkm.annealing``            the inverse-temperature schedules of the paper.
``dkm.autoencoder``          the ``d-500-500-2000-K`` autoencoder.
``dkm.losses``               distances, the stable soft assignment and the DKM loss.
``dkm.training``             the one minibatch training loop every method shares: one model's epoch.
``dkm.replicas``             several seeds trained as one computation: their replicas' layouts.
``dkm.checkpoints``          a training phase's state at an epoch's end: interrupted runs resume.
``dkm.startup``              TensorFlow started without its native start-up lines.
``dkm.progress``             the progress bar of long work, in a terminal or a notebook.
``dkm.paths``                paths as a reader sees them: relative to the current folder.
``dkm.methods``              the methods of the paper, one module each:
``dkm.methods.config``       how a configuration is recorded: the fields of a run's identity,
                             declared with a version (no TensorFlow needed).
``dkm.methods.parameters``   an estimator's parameter declared once: default, constraint, doc.
``dkm.methods.common``       what every method shares: its loop settings and its result.
``dkm.methods.pretraining``  the autoencoder pretraining the pretrained methods share.
``dkm.methods.template``     the one fit of the deep methods: data, network, objective, epochs,
                             result.
``dkm.methods.km``           the two non-deep baselines, KM and AE-KM.
``dkm.methods.estimator``    the scikit-learn estimator every deep method's estimator extends,
                             through which the protocol trains the deep methods.
``dkm.methods.dkm``          Deep k-Means: DKM^a, DKM^p and DKM^pa, and ``DeepKMeans``.
``dkm.methods.dcn``          DCN^p and DCN^np as Yang et al. describe them, and ``DCN``.
``dkm.methods.idec``         IDEC^p and IDEC^np, and ``IDEC``.
``dkm.metrics``              ACC, NMI and ARI (no TensorFlow needed).
``dkm._atomic``              whole-file writes: a temporary file, then one rename.

None of them changes the process beyond a fit's own call: importing :mod:`dkm` sets no
environment variable, no TensorFlow flag and no thread pool. What does, for good, is the
opt-in layer, which the paper's model does not import:

``dkm.reproducibility``      what a process opts into, in one call each (no TensorFlow needed):
``dkm.reproducibility.arithmetic`` the reproducible arithmetic: kernels capped at AVX2 on every
                             CPU, fixed thread counts, the products' cache sizes pinned.
``dkm.reproducibility.cache_sizes`` the cache sizes TensorFlow's matrix products block by:
                             read, and pinned in a checked ``libtensorflow_cc``.
``dkm.reproducibility.shared_functions`` one compiled epoch per distinct graph, shared by a
                             process's trainers.
``dkm.reproducibility.kernel_settings`` what chooses a CPU's kernels: its vector extensions,
                             the variables read.

The protocol, ``dkm.protocol``:

``dkm.protocol.registry``    every method described once (label, family, pretraining, estimator,
                             ...), read from declarations (package, entry points, plugins).
``dkm.protocol.declarations`` the package's methods, declared: the one file that writes their ids.
``dkm.protocol.paper``       the paper's transcription: its seeds, validation-optimal λ and γ,
                             labels, datasets and reported figures.
``dkm.protocol.experiments`` a run: seeded runs of a method, one record each; a grid's pieces.
``dkm.protocol.grid``        a resumable grid into a results store, here or on a cluster.
``dkm.protocol.cluster``     a grid's pieces on a Dask cluster, with one writer (optional).
``dkm.protocol.results``     run records, their stores and the results folder, one private
                             module per job, all re-exported by ``dkm.protocol.results``:
``dkm.protocol.results._record`` a record: its schema, configuration hash and validation.
``dkm.protocol.results._store`` the JSON Lines store: locked appends, one arithmetic per store.
``dkm.protocol.results._folder`` the results folder: its stores, the runs it holds, its
                             full-scale records.
``dkm.protocol.results._layout`` which stores the book reads, by dataset: the declaration.
``dkm.protocol.provenance``  what decides a run's numbers (code, libraries, CPU), recorded.
``dkm.protocol.environment`` the installed packages against the lock's and a record's versions.
``dkm.protocol.audit``       a record rerun and compared bit for bit; why the numbers differ.

The book, ``dkm.book``:

``dkm.book.stats``           summaries, the paper's significance marks, comparisons with the paper.
``dkm.book.tables``          the tables of the paper and its supplement, rebuilt from records
                             (:func:`dkm.book.tables.build`, :func:`dkm.book.tables.render`), in
                             three modules, all re-exported by ``dkm.book.tables``:
``dkm.book.tables.spec``     ``TableSpec`` and ``TABLES``: each table's rows, columns and marks.
``dkm.book.tables.cells``    record -> frame -> selection -> cell -> table (``build``); every
                             result cell against the paper.
``dkm.book.tables.render``   Markdown, HTML, compact HTML and LaTeX (``render``, ``typeset``); a
                             line search's choices as a reader's table and sentences.
``dkm.book.analysis``        questions asked of the records, one private module per job, all
                             re-exported by ``dkm.book.analysis``:
``dkm.book.analysis._paired`` a model's scores by seed; the same-seed difference of two models.
``dkm.book.analysis._claims`` the paper's claims tested on the records: verdicts and their tables.
``dkm.book.analysis._cells`` the result cells against the paper's figures, counted.
``dkm.book.analysis._your_data`` the paper's questions on any dataset: scores, claims, the run drawn.
``dkm.book.analysis._line_search`` a line search's runs, curves and choices; the paper's λ or γ.
``dkm.book.analysis._coverage`` how many seeds each dataset and method has run (a search: at each value).
``dkm.book.analysis._variants`` a data variant's runs under its paper dataset, and its effect.
``dkm.book.analysis._setting_effect`` the same runs in two settings: scores, verdicts, standings.
``dkm.book.analysis._side_by_side`` two programs or settings timed in processes taking turns.
``dkm.book.analysis._check_runs`` the runs of the benchmarks' check scripts and their gaps.
``dkm.book.analysis._reruns`` reruns of committed records, in the stores or kept apart, and audits.
``dkm.book.analysis._arithmetic`` the arithmetic on other CPUs: the fixture's fits, cache sizes.
``dkm.book.analysis._setup`` the paper's experimental set-up beside the package's defaults.
``dkm.book.analysis._standin`` the GPU stand-in's output as tables: throughput, runs, precision, α.
``dkm.book.analysis._authors_code`` the authors' own code beside the package and the paper.
``dkm.book.figures``         figures drawn from records (the λ line search's curves).
``dkm.book.declarations``    the methods the book adds to the registry: the DKM authors' DCN.
``dkm.book.ablations``       the ablation studies, a run's switches and their effect against the
                             protocol's runs, one private module per job, all re-exported by
                             ``dkm.book.ablations``:
``dkm.book.ablations._switches`` the models whose switches the studies turn: subclasses of the
                             paper's DKM and of DCN (the DKM authors' DCN, the walk to DKM).
``dkm.book.ablations._studies`` the studies and their variants, run and read; whose a record is.
``dkm.book.ablations._compare`` a variant against the protocol's runs and the paper; its wording.
``dkm.book.ablations._tradeoff`` the scores against λ at full scale; where they collapse.
``dkm.book.ablations._temperature`` what α does: its effects, an assignment's hardness, α rescaled.
``dkm.book.ablations._walk`` from DCN^p to DKM^p one switch at a time.
``dkm.book.ablations._shrinking`` the embedding's norm through a snapshot's two phases.
``dkm.book.snapshots``       a full-scale run's embeddings, saved for the paper's figures.
``dkm.book.embeddings``      an embedding's size, spread and separation of the true classes.
``dkm.book.computed_once``   a slow result (t-SNE, KM) kept with its inputs' digest, read back.
``dkm.book.rerun``           what a reader needs to rerun the book: the commit, the locked versions,
                             the data's sources and digests, each protocol store's command.

The command line:

``dkm.cli``                  ``python -m dkm run ...``, ``ablate ...``, ``snapshot ...``,
                             ``report ...``, ``pending ...`` and ``audit ...`` (``dkm.__main__``).

TensorFlow is imported only by the modules that train networks, so that
``import dkm`` and the metrics and data modules stay fast.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_LAZY_ATTRIBUTES = {
    "DeepKMeans": "dkm.methods.dkm",
    "DCN": "dkm.methods.dcn",
    "IDEC": "dkm.methods.idec",
}

__all__ = ["__version__", *_LAZY_ATTRIBUTES]


def __getattr__(name: str) -> Any:
    """Import the TensorFlow-backed public classes on first use."""
    if name in _LAZY_ATTRIBUTES:
        return getattr(import_module(_LAZY_ATTRIBUTES[name]), name)
    raise AttributeError(f"module 'dkm' has no attribute {name!r}")
