"""Ablations: the studies, what a run changed against the protocol, and what that did.

An ablation run is an ordinary protocol run (:func:`dkm.protocol.grid.run_grid`
with ``overrides``) whose record differs from the protocol's for its method
and dataset in some configuration fields: its *switches*. This package declares
the book's studies (:data:`STUDIES`, run by :func:`run_study` or ``python -m dkm
ablate``), reads what a record is (its study and switches, :func:`identified`: from the
record, or for a committed record against the protocol's run, without TensorFlow), names
the switches for a reader, and compares
each variant with the protocol's own records of the same seeds (same
initialisation, same minibatches and, where both ran on the same kind of CPU,
the same pretraining), so that the difference of a seed pair is the switch's
effect on that seed.

A variant without a protocol run of its own (DKM^pa) names the protocol method
it is compared with (:attr:`Variant.against`).

Snapshots of full-scale runs (:mod:`dkm.book.snapshots`) keep their per-epoch
curves: :func:`embedding_norm_curves` reads the embedding's size through the
pretraining and the training, for the protocol's run and its variants.

:data:`STUDIES` is built on first use; the studies' models (``_switches``) are loaded on
first use too: they import TensorFlow.

The package has one private module per job, all re-exported here: the models
whose switches the studies turn, subclasses of the paper's (``_switches``), the
studies and which records are whose (``_studies``), the comparisons and their
wording (``_compare``), λ at full scale (``_tradeoff``), the temperature
(``_temperature``), the walk from DCN^p to DKM^p (``_walk``) and the
embedding's norm (``_shrinking``).
"""
from __future__ import annotations

from typing import Any

from dkm.book.ablations import _studies
from dkm.book.ablations._compare import (
    with_paper_figure,
    agreement_by_dataset,
    compare,
    difference_text,
    excludes_zero,
    margin_claim,
    paired_difference_text,
    paper_margins,
    paper_verdicts,
    table_view,
    zero_nmi_variants,
)
from dkm.book.ablations._shrinking import (
    embedding_norm_curves,
    embedding_shrinkage,
    shrinkage_by_dataset,
)
from dkm.book.ablations._studies import (
    AUTHORS_DCN,
    describe,
    identified,
    identified_stores,
    LAMBDA_CLIFF,
    load_study,
    pending,
    protocol_parameters,
    protocol_records,
    studies_with_protocol,
    RESCALED_ALPHAS,
    run_study,
    Study,
    study,
    study_read_also,
    STUDY_SEEDS,
    switches,
    TOWARDS_DKM,
    Variant,
    variant_scores,
)
from dkm.book.ablations._temperature import (
    alpha_points,
    assignment_sharpness,
    final_assignment,
    hard_from_start,
    NEARLY_HARD,
    pretrained_embedding,
    pretrained_sharpness,
    rescaling_effects,
    temperature_by_dataset,
    temperature_effects,
)
from dkm.book.ablations._tradeoff import (
    study_tradeoff_points,
    tradeoff_choice,
    tradeoff_means,
    tradeoff_onset,
    tradeoff_points,
)
from dkm.book.ablations._walk import (
    step_effects,
    towards_dkm_chain,
    towards_dkm_switches,
)
from dkm.book.analysis import signed  # re-exported: the ablations' differences are written with it

#: The models of the studies (``_switches``), loaded on first use: they import TensorFlow.
_MODELS = ("DKMAblationConfig", "DeepKMeansAblation",
           "DCNAblationConfig", "DCNAblation")


__all__ = [
    *_MODELS, "AUTHORS_DCN", "TOWARDS_DKM",
    "Variant", "Study", "STUDIES", "STUDY_SEEDS", "LAMBDA_CLIFF", "RESCALED_ALPHAS", "study",
    "run_study", "study_read_also", "load_study", "protocol_records", "studies_with_protocol",
    "protocol_parameters", "identified", "identified_stores",
    "switches", "describe", "variant_scores", "pending",
    "compare", "excludes_zero", "zero_nmi_variants", "signed", "difference_text",
    "paired_difference_text",
    "agreement_by_dataset", "with_paper_figure", "paper_margins", "margin_claim",
    "paper_verdicts", "table_view",
    "tradeoff_points", "study_tradeoff_points", "tradeoff_means", "tradeoff_choice",
    "tradeoff_onset",
    "temperature_effects", "temperature_by_dataset", "NEARLY_HARD", "assignment_sharpness",
    "pretrained_sharpness", "pretrained_embedding", "hard_from_start", "alpha_points",
    "rescaling_effects", "final_assignment",
    "towards_dkm_chain", "towards_dkm_switches", "step_effects",
    "embedding_norm_curves", "embedding_shrinkage", "shrinkage_by_dataset"
]


def __getattr__(name: str) -> Any:
    # STUDIES is built on first use, as are the models (which import TensorFlow)
    if name == "STUDIES":
        return _studies._declared_studies()
    if name in _MODELS:
        from dkm.book.ablations import _switches
        return getattr(_switches, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
