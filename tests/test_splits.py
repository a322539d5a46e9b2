"""The validation / test split."""
from __future__ import annotations

import numpy as np
import pytest

from dkm.splits import (
    Split,
    authors_rcv1_rows,
    authors_split,
    read_indices,
    read_split,
    validation_test_split,
)


def test_split_is_seeded_disjoint_and_covering():
    split = validation_test_split(9298, seed=3)
    assert split.validation.size == 930 and split.test.size == 8368
    assert np.array_equal(np.union1d(split.validation, split.test), np.arange(9298))
    assert np.intersect1d(split.validation, split.test).size == 0
    again = validation_test_split(9298, seed=3)
    assert np.array_equal(split.validation, again.validation)
    assert not np.array_equal(split.validation, validation_test_split(9298, seed=4).validation)


@pytest.mark.parametrize("n, n_validation", [(70_000, 7_000), (18_846, 1_885), (5, 1), (2, 1)])
def test_split_sizes_round_half_up_as_the_authors_lists(n, n_validation):
    split = validation_test_split(n)
    assert split.validation.size == n_validation and split.n_samples == n
    assert np.all(np.diff(split.validation) > 0) and np.all(np.diff(split.test) > 0)
    assert split.validation.dtype.kind == "i"


@pytest.mark.parametrize("n, fraction", [(1, 0.1), (10, 0.0), (10, 1.0), (True, 0.1), (10.0, 0.1)])
def test_bad_split_arguments(n, fraction):
    with pytest.raises(ValueError):
        validation_test_split(n, fraction)


@pytest.mark.parametrize(
    "validation, message",
    [
        (np.array([[0, 1]]), "1-D"),
        (np.array([0.0, 1.0]), "integer"),
        (np.array([-1, 1]), "negative"),
        (np.array([1, 1]), "more than once"),
    ],
)
def test_split_validates_its_parts(validation, message):
    with pytest.raises(ValueError, match=message):
        Split(validation=validation, test=np.array([5, 6]))


@pytest.mark.data
def test_the_authors_usps_lists_form_a_permutation(data_home):
    split = read_split(data_home / "dkm_splits" / "usps", 9298)
    assert split.validation.size == 930 and split.test.size == 8368
    assert np.array_equal(np.sort(np.concatenate([split.validation, split.test])), np.arange(9298))


@pytest.mark.data
@pytest.mark.parametrize(
    "name, n_samples, n_validation",
    [("mnist", 70_000, 7_000), ("usps", 9_298, 930), ("20news", 18_846, 1_885)],
)
def test_authors_split_covers_each_row_once(data_home, name, n_samples, n_validation):
    split = authors_split(name, data_home)
    assert split.validation.size == n_validation and split.n_samples == n_samples
    assert np.array_equal(np.sort(np.concatenate([split.validation, split.test])), np.arange(n_samples))


@pytest.mark.data
def test_authors_rcv1_rows_and_split(data_home):
    rows = authors_rcv1_rows(data_home)
    assert rows.size == 10_000 and np.unique(rows).size == 10_000
    assert rows.min() == 4 and rows.max() == 804_333
    test = read_indices(data_home / "dkm_splits" / "rcv1" / "test")
    assert np.array_equal(rows[: test.size], test)  # the authors' test rows come first
    split = authors_split("rcv1", data_home)
    assert np.array_equal(split.test, np.arange(9_000))
    assert np.array_equal(split.validation, np.arange(9_000, 10_000))


def test_authors_split_of_an_unknown_dataset():
    with pytest.raises(ValueError, match="no authors' split for 'digits'"):
        authors_split("digits")


def test_authors_lists_must_cover_the_dataset(tmp_path):
    lists = tmp_path / "dkm_splits" / "usps"
    lists.mkdir(parents=True)
    (lists / "validation").write_text("0\r\n")
    (lists / "test").write_text("1\r\n2\r\n")
    with pytest.raises(ValueError, match="hold 3 indices, expected each of the 9298 rows"):
        authors_split("usps", tmp_path)


def test_index_files_accept_crlf_and_blank_lines(tmp_path):
    path = tmp_path / "idx"
    path.write_bytes(b"3\r\n0\r\n\r\n2\n")
    indices = read_indices(path, 4)
    assert indices.tolist() == [3, 0, 2] and indices.dtype == np.int64


@pytest.mark.parametrize("text, message", [("", "no index"), ("1\n1\n", "more than once"),
                                           ("1\nx\n", "one integer"), ("5\n", r"\[0, 3\)"),
                                           ("-1\n", "line 1"), ("1.0\n", "line 1")])
def test_malformed_index_files(tmp_path, text, message):
    path = tmp_path / "idx"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_indices(path, 3)


def test_non_ascii_and_missing_index_files(tmp_path):
    path = tmp_path / "idx"
    path.write_bytes("1\n\u0662\n".encode())
    with pytest.raises(ValueError, match="ASCII"):
        read_indices(path)
    with pytest.raises(FileNotFoundError):
        read_indices(tmp_path / "absent")


def test_overlapping_parts_are_refused(tmp_path):
    (tmp_path / "validation").write_text("0\r\n1\r\n")
    (tmp_path / "test").write_text("1\r\n2\r\n")
    with pytest.raises(ValueError, match="share indices"):
        read_split(tmp_path, 3)
