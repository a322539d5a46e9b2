"""scikit-learn's own estimator checks over DeepKMeans, DCN and IDEC, with tiny networks.

The checks fit each estimator about a hundred times, so the instances are as
small as training allows: one hidden layer of 8 units, the variants without
pretraining, one epoch, run eagerly (a tenth of a second a fit on a CPU). Pretraining and
the paper's configurations are tested in test_estimator.py and test_baselines.py.
"""
from __future__ import annotations

import pytest
import tensorflow as tf
from sklearn.utils.estimator_checks import parametrize_with_checks

from dkm import DCN, IDEC, DeepKMeans

TINY = dict(n_clusters=2, hidden_sizes=(8,), progress=False, jit_compile=False)

ESTIMATORS = [
    DeepKMeans(variant="a", schedule=[1.0], **TINY),
    DCN(variant="np", epochs=1, **TINY),
    IDEC(variant="np", epochs=1, update_interval=1, **TINY),
]

# Not strict: an expected failure that happens to pass is reported, not an error.
_ROW_ORDER = (
    "transform is a float32 network evaluated by batched matrix products: reordering the rows "
    "can change the rounding of the sums, so embeddings agree to float32 precision (~1e-7 "
    "relative), not always to the check's rtol=1e-7, atol=1e-9 (it passes on some data)"
)
_UNTRAINED = (
    "check_clustering asks for ARI > 0.4 on three blobs; the tiny instance trains one epoch "
    "from random centres without pretraining, too little to find them (learning is tested on "
    "digits in test_estimator.py and test_baselines.py)"
)


def _expected_failures(estimator) -> dict[str, str]:
    """The checks that cannot pass for these tiny float32 networks, with the reason."""
    failures = {"check_methods_sample_order_invariance": _ROW_ORDER}
    if not isinstance(estimator, IDEC):  # IDEC's centres come from k-means++ on the embedding
        failures["check_clustering"] = _UNTRAINED
    return failures


@pytest.fixture(autouse=True, scope="module")
def _eagerly():
    """Run the training loop eagerly: tracing a graph for each of the ~150 tiny fits costs
    far more than the fits (the compiled path is tested elsewhere)."""
    tf.config.run_functions_eagerly(True)
    yield
    tf.config.run_functions_eagerly(False)


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_scikit_learn_checks(estimator, check):
    check(estimator)
