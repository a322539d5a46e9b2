"""The paper's claims, tested on the records: same-seed paired differences and verdicts.

The paper's "Clustering results" section and its supplement make comparative
claims ("DKM^a markedly outperforms DCN^np on all datasets"). Each claim is
here a :class:`Claim`: two of the paper's models, the datasets it covers, and
the kind of comparison. :func:`check_claims` confronts it with the records: for
every dataset and metric, the difference of the two models' scores on the same
seeds (same initial network, minibatches and pretraining, so the pair
removes what the seeds share), its mean and t interval, the difference of the
paper's published means, an equivalence margin (:func:`paper_margin`: the
smallest difference the paper's own test could detect, from the spread it
reports), and a verdict:

``holds``, ``fails``, ``inconclusive``
    by :func:`dkm.book.stats.claim_verdict` on the paired interval and the
    margin: a "better" claim by a superiority test, "on par" by an
    equivalence test (two one-sided tests), "not worse" by a non-inferiority
    test; an interval too wide to decide is inconclusive.
``not testable``
    the dataset is not in the records (RCV1), or fewer seed pairs than
    :data:`MIN_PAIRS`.
``excepted``
    a cell the paper itself leaves out of the claim (DKM^p against IDEC^p
    in NMI on MNIST); its numbers are still given.

:func:`verdicts_given` keeps the verdicts of the first three kinds;
:func:`claim_methods` names a claim's two methods.

The runs of a model are those the result tables use (:mod:`dkm.book.tables`): the
method's records for the dataset and distance at the trade-off value with the
best mean validation ACC, which for the protocol's stores is the paper's own
value.

Any dataset
-----------
On a dataset the paper did not use there are no published figures to take a margin from:
:func:`check_claims_on_data` tests the claims a run of the protocol can test
(:data:`DATA_CLAIMS`) at :func:`spread_margin`, :func:`paper_margin`'s rule on the records' own
spread, and :func:`verdict_table` sets the verdicts out for a reader; :func:`method_scores`
gives each model's mean, spread and interval over the seeds, :func:`embedding_run` the run
whose embedding a page draws (:func:`plane_view` puts it in the plane),
:func:`cluster_shares` how the points spread over the clusters, :func:`search_reference`
the paper's dataset a line search is compared with.

Beyond the claims
-----------------
The same records answer the book's other questions, one private module per subject:

``_line_search``
    a line search's runs and curves, and the value validation chooses against the paper's:
    :func:`search_records`, :func:`stored_search`, :func:`seeds_with_whole_grid`,
    :func:`complete_searches`, :func:`search_curves`, :func:`search_summary`,
    :func:`search_scores`, :func:`chosen_against_paper`, :func:`paper_tradeoff`.
``_coverage``
    the runs made and missing: :func:`coverage` (seeds per dataset and method),
    :func:`missing_seeds`, :func:`missing_search_seeds`, :func:`progress`, :func:`wall_hours`,
    :func:`compute` (every record of a results folder, once, with its cost),
    :func:`missing_in_arithmetic`.
``_cells``
    the result cells (:func:`distinct_cells`) consistent with the paper's figures, above and
    below them (:func:`cell_counts`, :data:`STANDINGS`).
``_variants``
    a data variant's runs and what the variant changes: :func:`on_paper_dataset`,
    :func:`variant_effect`.
``_setting_effect``
    what another setting of the same runs (the products' precision, the arithmetic) changes:
    :func:`setting_effect`, :func:`seed_differences`, :func:`verdict_changes`,
    :func:`standing_changes`, :func:`arithmetic_comparison`.
``_side_by_side``
    two programs or settings timed in processes that take turns: :func:`side_by_side`.
``_check_runs``
    the runs of the benchmarks' check scripts and their gaps: :func:`check_runs`,
    :func:`check_gap`, :func:`protocol_gap`.
``_reruns``
    reruns of committed records against their records: :func:`rerun_gaps`,
    :func:`repeated_runs` (configurations recorded twice), :func:`reruns` (both kinds in one
    table), :func:`kept_reruns`, :func:`audited_reruns` and :func:`reruns_apart` (those kept
    apart), :func:`every_rerun` (the one table of the native records' reruns that every page
    reads), :func:`with_reruns` (the latest rerun in its record's place), :func:`audits`.
``_arithmetic``
    what the arithmetic gives on other CPUs: :func:`reproducible_fits` (the reproducible
    fixture's fit), :func:`cache_size_products`, :func:`in_present_settings`,
    :func:`isa_probe_table` (the probe of a snapshot's arithmetic).
``_standin``
    the GPU stand-in's runs (:func:`standin_rows`, :data:`STANDIN_KINDS`): at each α
    (:func:`standin_alpha_curves`, :func:`standin_alpha_scores`), α rescaled
    (:func:`standin_rescaling_effect`), at each λ (:func:`standin_tradeoff_points`,
    :func:`standin_tradeoff_table`), where they lose clusters (:func:`standin_cluster_loss`).
``_authors_code``, ``_setup``
    the authors' own code beside the package and the paper (:func:`authors_code_comparison`);
    the paper's experimental set-up beside the package's defaults (:func:`setup_comparison`).
"""
from __future__ import annotations

# One private module per job (dkm/__init__.py maps them); every public name is
# re-exported here, the one place to import it from.
from dkm.book.analysis._authors_code import AUTHORS_CODE_COLUMNS, authors_code_comparison
from dkm.book.analysis._arithmetic import (
    FIT_PARTS, cache_size_products, in_present_settings, isa_probe_table, reproducible_fits,
)
from dkm.book.analysis._check_runs import check_gap, check_runs, protocol_gap
from dkm.book.analysis._claims import (
    CLAIMS,
    COLUMNS,
    FLIP_SYMBOL,
    KIND_SYMBOLS,
    MIN_PAIRS,
    SIZE_SYMBOLS,
    TESTED,
    VERDICT_SYMBOLS,
    VERDICTS,
    Claim,
    MarginRule,
    check_claims,
    claim_methods,
    claims_table,
    flips,
    paper_margin,
    two_source_grid,
    collapsed_verdicts,
    COLLAPSE_SYMBOL,
    COLLAPSED_NMI,
    SOURCES,
    verdicts_given,
)
from dkm.book.analysis._cells import STANDINGS, cell_counts, distinct_cells
from dkm.book.analysis._coverage import (
    compute, coverage, missing_in_arithmetic, missing_search_seeds, missing_seeds, progress,
    wall_hours,
)
from dkm.book.analysis._line_search import (
    SEARCH_SUMMARY_COLUMNS,
    chosen_against_paper,
    paper_tradeoff,
    search_curves,
    search_records,
    search_scores,
    search_summary,
    complete_searches,
    seeds_with_whole_grid,
    stored_search,
)
from dkm.protocol.results import search_store  # the store of a dataset's search the book reads
from dkm.book.analysis._side_by_side import SIDE_BY_SIDE_MEASURES, side_by_side, warm_rate
from dkm.book.analysis._setting_effect import (
    SETTING_EFFECT_COLUMNS, ArithmeticComparison, arithmetic_comparison, seed_differences,
    setting_effect, standing_changes, verdict_changes,
)
from dkm.book.analysis._reruns import (
    audited_reruns, audits, every_rerun, kept_reruns, machine_moved, repeated_runs, rerun_gaps, reruns,
    reruns_apart, with_reruns,
)
from dkm.book.analysis._paired import paired_difference, seed_scores, signed, unpaired_difference
from dkm.book.analysis._setup import setup_comparison
from dkm.book.analysis._standin import (
    STANDIN_KINDS,
    standin_alpha_curves,
    standin_alpha_scores,
    standin_cluster_loss,
    standin_rescaling_effect,
    standin_rows,
    standin_tradeoff_points,
    standin_tradeoff_table,
)
from dkm.book.analysis._variants import on_paper_dataset, variant_effect
from dkm.book.analysis._your_data import (
    DATA_CLAIM_COLUMNS,
    DATA_CLAIMS,
    MARGIN_FLOOR,
    METHOD_SCORE_COLUMNS,
    VERDICT_TABLE_CAPTION,
    check_claims_on_data,
    cluster_shares,
    embedding_run,
    method_scores,
    plane_view,
    search_reference,
    spread_margin,
    verdict_table,
)

__all__ = ["Claim", "CLAIMS", "VERDICTS", "TESTED", "VERDICT_SYMBOLS", "MIN_PAIRS", "seed_scores",
           "MarginRule", "paper_margin",
           "paired_difference", "unpaired_difference", "signed", "COLUMNS", "SIZE_SYMBOLS",
           "FLIP_SYMBOL", "flips", "KIND_SYMBOLS",
           "check_claims", "claim_methods", "verdicts_given",
           "two_source_grid", "collapsed_verdicts", "COLLAPSE_SYMBOL", "COLLAPSED_NMI", "SOURCES",
           "coverage", "missing_seeds", "missing_search_seeds", "wall_hours", "compute",
           "missing_in_arithmetic",
           "cell_counts",
           "distinct_cells", "STANDINGS",
           "progress", "on_paper_dataset", "check_runs", "check_gap", "protocol_gap", "variant_effect",
           "isa_probe_table", "repeated_runs", "reruns", "kept_reruns", "audited_reruns", "reruns_apart",
           "every_rerun", "machine_moved", "audits",
           "claims_table", "search_records", "paper_tradeoff", "search_curves",
           "search_summary", "search_store", "stored_search", "seeds_with_whole_grid", "complete_searches",
           "SEARCH_SUMMARY_COLUMNS", "standin_alpha_curves",
           "standin_alpha_scores", "standin_rescaling_effect", "standin_tradeoff_points",
           "standin_tradeoff_table", "standin_cluster_loss", "STANDIN_KINDS",
           "standin_rows", "rerun_gaps", "with_reruns", "authors_code_comparison", "AUTHORS_CODE_COLUMNS", "search_scores",
           "chosen_against_paper",
           "setting_effect", "seed_differences", "SETTING_EFFECT_COLUMNS", "verdict_changes",
           "standing_changes", "ArithmeticComparison", "arithmetic_comparison", "side_by_side",
           "warm_rate", "SIDE_BY_SIDE_MEASURES", "reproducible_fits", "cache_size_products",
           "in_present_settings", "FIT_PARTS",
           "DATA_CLAIMS", "DATA_CLAIM_COLUMNS", "MARGIN_FLOOR", "METHOD_SCORE_COLUMNS",
           "VERDICT_TABLE_CAPTION",
           "check_claims_on_data", "cluster_shares", "embedding_run", "method_scores",
           "plane_view", "search_reference", "spread_margin", "verdict_table", "setup_comparison"]
