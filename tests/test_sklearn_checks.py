"""scikit-learn's own estimator checks over DeepKMeans, DCN and IDEC, with tiny networks.

The checks fit each estimator about a hundred times, so the instances are as
small as training allows: one hidden layer of 8 units, one epoch of pretraining
(DeepKMeans, DCN: their centres then start from k-means++ on the embedding, as
IDEC's do) and one of training, run eagerly (a tenth of a second a fit on a CPU).
The paper's configurations are tested in test_estimator.py and test_baselines.py.
Every check passes, the order invariance of ``predict`` and ``transform`` included
(a point's embedding does not depend on the other points: test_estimator.py).
"""
from __future__ import annotations

import pytest
import tensorflow as tf
from sklearn.utils.estimator_checks import parametrize_with_checks

from dkm import DCN, IDEC, DeepKMeans

TINY = dict(n_clusters=2, hidden_sizes=(8,), progress=False, jit_compile=False)

ESTIMATORS = [
    DeepKMeans(variant="p", pretrain_epochs=1, schedule=[1.0], **TINY),
    DCN(variant="p", pretrain_epochs=1, epochs=1, **TINY),
    IDEC(variant="np", epochs=1, update_interval=1, **TINY),
]


@pytest.fixture(autouse=True, scope="module")
def _eagerly():
    """Run the training loop eagerly: tracing a graph for each of the ~150 tiny fits costs
    far more than the fits (the compiled path is tested elsewhere)."""
    tf.config.run_functions_eagerly(True)
    yield
    tf.config.run_functions_eagerly(False)


@parametrize_with_checks(ESTIMATORS)
def test_scikit_learn_checks(estimator, check):
    check(estimator)
