"""The validation / test split."""
from __future__ import annotations

import numpy as np
import pytest

from dkm.splits import read_indices, read_split, validation_test_split


def test_split_is_seeded_disjoint_and_covering():
    split = validation_test_split(9298, seed=3)
    assert split.validation.size == 930 and split.test.size == 8368
    assert np.array_equal(np.union1d(split.validation, split.test), np.arange(9298))
    assert np.intersect1d(split.validation, split.test).size == 0
    again = validation_test_split(9298, seed=3)
    assert np.array_equal(split.validation, again.validation)
    assert not np.array_equal(split.validation, validation_test_split(9298, seed=4).validation)


@pytest.mark.parametrize("n, fraction", [(1, 0.1), (10, 0.0), (10, 1.0)])
def test_bad_split_arguments(n, fraction):
    with pytest.raises(ValueError):
        validation_test_split(n, fraction)


@pytest.mark.data
def test_the_authors_usps_lists_form_a_permutation(data_home):
    split = read_split(data_home / "dkm_splits" / "usps", 9298)
    assert split.validation.size == 930 and split.test.size == 8368
    assert np.array_equal(np.sort(np.concatenate([split.validation, split.test])), np.arange(9298))


@pytest.mark.parametrize("text, message", [("", "no index"), ("1\n1\n", "more than once"),
                                           ("1\nx\n", "one integer"), ("5\n", r"\[0, 3\)")])
def test_malformed_index_files(tmp_path, text, message):
    path = tmp_path / "idx"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_indices(path, 3)


def test_overlapping_parts_are_refused(tmp_path):
    (tmp_path / "validation").write_text("0\r\n1\r\n")
    (tmp_path / "test").write_text("1\r\n2\r\n")
    with pytest.raises(ValueError, match="share indices"):
        read_split(tmp_path, 3)
