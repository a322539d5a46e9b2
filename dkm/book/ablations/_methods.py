"""The methods the studies add to the protocol's registry: DCN as the DKM authors' code ran it.

Their records (study ``dcn-authors``) are read with the protocol's; registering
them on import of :mod:`dkm.book.ablations` lets ``python -m dkm run --method
dcn-p-authors`` train them too. Their configurations and estimator are in
``_switches`` (loaded when a run needs them: TensorFlow).
"""
from __future__ import annotations

from dkm.protocol import registry

_SWITCHES = "dkm.book.ablations._switches"


def _authors_dcn(variant: str, pretrained: bool) -> registry.Method:
    """DCN^``variant`` with the DKM authors' four departures (``AUTHORS_DCN``)."""
    paper_method = registry.get(f"dcn-{variant}")
    return registry.Method(
        f"dcn-{variant}-authors", f"{paper_method.label} (authors)", "dcn", pretrained,
        group=paper_method.group, tradeoff="lambda", in_paper=False,
        config=f"{_SWITCHES}:AUTHORS_DCN_VARIANTS[{variant}]", embedding=True,
        kmeans_on_embedding=True, estimator=f"{_SWITCHES}:DCNAblation", variant=variant,
        paper_method=paper_method.id,
    )


AUTHORS_DCN_METHODS: tuple[registry.Method, ...] = (
    registry.register(_authors_dcn("np", False)), registry.register(_authors_dcn("p", True)))
