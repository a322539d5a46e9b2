"""dkm.book.embeddings: the size, spread and class separation of an embedding."""
from __future__ import annotations

import numpy as np
import pytest

from dkm.book.embeddings import embedding_geometry


def test_the_mean_norm_and_the_spread_of_a_small_embedding():
    # norms 5 and 0; both points 2.5 from their mean (1.5, 2)
    assert embedding_geometry([[3.0, 4.0], [0.0, 0.0]]) == {"mean norm": 2.5, "spread": 2.5}
    assert embedding_geometry(np.ones((4, 3), dtype=np.float32))["spread"] == 0.0


def test_a_scaling_scales_size_and_spread_but_not_the_silhouette():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 20)
    H = rng.normal(size=(60, 4)) + 6 * np.eye(4)[y]        # three separated classes
    geometry = embedding_geometry(H, y)
    assert 0.5 < geometry["silhouette"] <= 1
    scaled = embedding_geometry(0.1 * H, y)
    assert scaled["mean norm"] == pytest.approx(0.1 * geometry["mean norm"])
    assert scaled["spread"] == pytest.approx(0.1 * geometry["spread"])
    assert scaled["silhouette"] == pytest.approx(geometry["silhouette"])
    moved = embedding_geometry(H + 100.0, y)               # a translation moves only the norm
    assert moved["mean norm"] > 100
    assert moved["spread"] == pytest.approx(geometry["spread"])
    assert moved["silhouette"] == pytest.approx(geometry["silhouette"])
    mixed = embedding_geometry(H, rng.permutation(y))      # classes unrelated to the embedding
    assert abs(mixed["silhouette"]) < 0.2


def test_an_embedding_must_be_a_non_empty_matrix():
    for bad in (np.zeros(3), np.zeros((0, 2))):
        with pytest.raises(ValueError, match="non-empty"):
            embedding_geometry(bad)
