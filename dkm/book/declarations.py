"""The methods and models the book adds to the protocol's registry: DCN as the DKM authors'
code ran it, and the models whose switches the ablation studies turn.

Declarations only (:class:`dkm.protocol.registry.Method`): the registry reads
:data:`METHODS` and :data:`MODELS` through this package's entry point ``book`` of the group
``dkm.methods`` (``pyproject.toml``), as it reads any installed package's, so that
the protocol names nothing of the book. Importing this module loads neither
TensorFlow nor the book's analysis: the configurations and the estimator the
declarations name are in ``dkm.book.ablations._switches``, imported when a run
needs them.
"""
from __future__ import annotations

from dkm.protocol import declarations
from dkm.protocol.registry import Method

_SWITCHES = "dkm.book.ablations._switches"


def _authors_dcn(paper_method: Method) -> Method:
    """The paper's DCN variant ``paper_method`` with the DKM authors' four departures from
    Yang et al. (``AUTHORS_DCN``): ``dcn-np-authors``, ``dcn-p-authors``."""
    return Method(
        f"{paper_method.id}-authors", f"{paper_method.label} (authors)", "dcn",
        paper_method.pretrained, group=paper_method.group, tradeoff="lambda", tradeoff_field="lam",
        in_paper=False, config=f"{_SWITCHES}:AUTHORS_DCN_VARIANTS[{paper_method.variant}]",
        embedding=True, kmeans_on_embedding=True, estimator=f"{_SWITCHES}:DCNAblation",
        variant=paper_method.variant, paper_method=paper_method.id,
    )


#: The DKM authors' DCN^np and DCN^p, whose records the study ``dcn-authors`` holds.
METHODS: tuple[Method, ...] = tuple(_authors_dcn(m) for m in declarations.METHODS
                                    if m.in_paper and m.family == "dcn")

#: The models of the ablation studies' switches, whose configurations extend DKM's and DCN's:
#: a study's configuration is trained by the model that declares its switches.
MODELS: tuple[str, ...] = (f"{_SWITCHES}:DeepKMeansAblation", f"{_SWITCHES}:DCNAblation")
