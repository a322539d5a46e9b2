"""dkm.data: the paper's datasets, the user's files, checksums and downloads."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.datasets
from sklearn.utils import Bunch

import dkm.data._fetch
from dkm.data import (
    PAPER_STATISTICS,
    RCV1_CATEGORIES,
    Dataset,
    available_datasets,
    build_rcv1_subset,
    dataset_label,
    dataset_statistics,
    from_arrays,
    get_data_home,
    load,
    load_usps_libsvm_test,
    paper_dataset,
    paper_datasets,
    smooth_usps,
)

MNIST_COUNTS = np.array([5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]) + np.array(
    [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
)
USPS_COUNTS = np.array([1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644]) + np.array(
    [359, 264, 198, 166, 200, 160, 170, 147, 166, 177]
)
NEWS_COUNTS = np.array(
    [799, 973, 985, 982, 963, 988, 975, 990, 996, 994]
    + [999, 991, 984, 990, 987, 997, 910, 940, 775, 628]
)
NEWS_CACHE = "scikit_learn_data/20news-bydate_py3.pkz"


# --------------------------------------------------------------------------
# The paper's datasets (real data)
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mnist(data_home: Path) -> Dataset:
    return load("mnist", data_home)


@pytest.fixture(scope="module")
def usps(data_home: Path) -> Dataset:
    return load("usps", data_home)


@pytest.fixture(scope="module")
def news(data_home: Path) -> Dataset:
    return load("20news", data_home)


@pytest.mark.data
def test_mnist_is_all_70000_images_scaled_to_unit_range(mnist):
    assert mnist.X.shape == (70_000, 784) and mnist.X.dtype == np.float32
    assert mnist.X.min() == 0.0 and mnist.X.max() == 1.0
    assert mnist.X[:60_000].mean() == pytest.approx(0.1307, abs=1e-4)
    assert np.array_equal(np.bincount(mnist.y), MNIST_COUNTS)
    assert mnist.y[:10].tolist() == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]  # train first
    assert mnist.y[60_000:60_005].tolist() == [7, 2, 1, 0, 4]  # then test
    assert mnist.n_clusters == 10 and mnist.class_names == tuple(range(10))


@pytest.fixture(scope="module")
def usps_sharp(data_home: Path) -> Dataset:
    return load("usps-sharp", data_home)


@pytest.mark.data
@pytest.mark.parametrize("variant", ["usps", "usps_sharp"])
def test_usps_is_all_9298_images_in_minus_one_to_one(request, variant):
    usps = request.getfixturevalue(variant)
    assert usps.X.shape == (9_298, 256) and usps.X.dtype == np.float32
    assert usps.X.min() == -1.0 and usps.X.max() <= 1.0
    assert np.array_equal(np.bincount(usps.y), USPS_COUNTS)
    assert usps.y[:10].tolist() == [6, 5, 4, 7, 3, 6, 3, 1, 0, 1]
    assert usps.n_clusters == 10 and usps.name == variant.replace("_", "-")


@pytest.mark.data
def test_usps_sharp_is_the_h5_file_rescaled(usps_sharp):
    assert usps_sharp.X.max() == 1.0
    assert np.mean(usps_sharp.X == -1.0) > 0.5  # most pixels are blank background


@pytest.mark.data
def test_usps_is_libsvms_smoothed_variant_rebuilt_from_the_sharp_file(usps, usps_sharp, data_home):
    libsvm = load_usps_libsvm_test(data_home)  # checksum-verified usps.t.bz2
    assert libsvm.X.shape == (2_007, 256) and libsvm.name == "usps-libsvm-test"
    assert np.array_equal(libsvm.y, usps.y[-2_007:])
    # the file prints six decimals: the rebuild agrees to their rounding
    assert np.abs(usps.X[-2_007:] - libsvm.X).max() < 1e-5
    # and the sharp variant is far from it: the test can tell the two apart
    assert np.abs(usps_sharp.X[-2_007:] - libsvm.X).max() > 0.5
    assert np.mean(usps.X == -1.0) < 0.2


def test_smoothing_blurs_one_pixel_into_a_gaussian():
    image = np.zeros((1, 256))
    image[0, 8 * 16 + 8] = 1.0
    smoothed = (smooth_usps(image).reshape(16, 16).astype(np.float64) + 1) / 2
    assert smoothed.sum() == pytest.approx(1.0, abs=1e-6)  # far from the border: no mass lost
    assert smoothed[8, 8] == smoothed.max()
    assert smoothed[8, 7] == pytest.approx(smoothed[7, 8]) and smoothed[8, 7] < smoothed[8, 8]
    # variance of the blur along one axis: sigma^2 = 0.75^2
    profile = smoothed.sum(axis=0)
    offsets = np.arange(16) - 8
    assert (profile * offsets**2).sum() == pytest.approx(0.75**2, rel=1e-3)


def test_smoothing_refuses_images_of_another_size():
    with pytest.raises(ValueError, match=r"shape \(n, 256\)"):
        smooth_usps(np.zeros((3, 64)))


def test_a_corrupt_libsvm_test_file_fails_its_checksum(tmp_path):
    (tmp_path / "usps.t.bz2").write_bytes(b"a truncated copy")
    with pytest.raises(ValueError, match="checksum mismatch"):
        load_usps_libsvm_test(tmp_path)


def test_a_variant_takes_its_papers_dataset():
    assert paper_dataset("usps-sharp") == "usps"
    assert paper_dataset("usps") == "usps" and paper_dataset("my-file") == "my-file"


def test_a_variants_label_names_what_sets_it_apart():
    assert [dataset_label(n) for n in ("usps", "usps-sharp", "20news", "MNIST", "digits")] == [
        "USPS", "USPS (sharp file)", "20NEWS", "MNIST", "scikit-learn digits"]
    with pytest.raises(ValueError, match="unknown paper dataset 'my-file'"):
        dataset_label("my-file")


@pytest.mark.data
def test_20news_is_a_dense_tfidf_of_2000_words_in_sklearn_order(news):
    assert news.X.shape == (18_846, 2_000) and news.X.dtype == np.float32
    assert news.X.min() == 0.0 and news.X.max() <= 1.0
    norms = np.linalg.norm(news.X, axis=1)
    assert np.allclose(norms[norms > 0], 1.0, atol=1e-5)  # TfidfVectorizer's l2 norm
    assert np.array_equal(np.bincount(news.y), NEWS_COUNTS)
    assert news.y[:10].tolist() == [10, 3, 17, 3, 4, 12, 4, 10, 10, 19]
    assert news.n_clusters == 20 and news.class_names[0] == "alt.atheism"


@pytest.mark.data
def test_statistics_table_matches_the_paper(mnist, usps, news):
    table = dataset_statistics([mnist, usps, news])
    assert list(table.columns) == ["dataset", "samples", "classes", "dimensions"]
    for row in table.to_dict("records"):
        assert {key: row[key] for key in ("samples", "classes", "dimensions")} == PAPER_STATISTICS[
            row["dataset"]
        ]


@pytest.mark.data
def test_statistics_table_loads_names(data_home):
    table = dataset_statistics(["usps", "digits"], data_home)
    assert table.to_dict("records") == [
        {"dataset": "usps", "samples": 9_298, "classes": 10, "dimensions": 256},
        {"dataset": "digits", "samples": 1_797, "classes": 10, "dimensions": 64},
    ]


@pytest.mark.data
def test_checksums_are_computed_once_per_process(data_home):
    before = dkm.data._fetch._sha256_of.cache_info()
    load("usps", data_home)
    load("usps", data_home)
    after = dkm.data._fetch._sha256_of.cache_info()
    assert after.misses - before.misses <= 1
    assert after.hits - before.hits >= 1


def test_digits_needs_no_file_and_is_scaled_to_unit_range():
    digits = load("DIGITS")
    assert digits.X.shape == (1_797, 64) and digits.X.dtype == np.float32
    assert digits.X.min() == 0.0 and digits.X.max() == 1.0
    assert digits.n_clusters == 10 and digits.n_classes == 10 and digits.name == "digits"
    assert load("digits", n_clusters=3).n_clusters == 3


def test_available_datasets():
    assert available_datasets() == ("mnist", "usps", "usps-sharp", "20news", "rcv1", "digits")
    assert paper_datasets() == ("mnist", "usps", "usps-sharp", "20news", "rcv1")
    assert [dataset_label(name) for name in paper_datasets()] == [
        "MNIST", "USPS", "USPS (sharp file)", "20NEWS", "RCV1"]


def test_unknown_name_lists_the_valid_names_and_mentions_paths():
    with pytest.raises(ValueError, match="unknown dataset 'cifar10'") as error:
        load("cifar10")
    assert all(name in str(error.value) for name in available_datasets())
    assert "path" in str(error.value)


@pytest.mark.parametrize(
    "options",
    [{"label_column": "label"}, {"rcv1_seed": 1}, {"rcv1_rows": [0, 1]}],
)
def test_options_that_do_not_apply_are_refused(options):
    with pytest.raises(ValueError, match="cannot be used with the dataset 'digits'"):
        load("digits", **options)


def test_data_home_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("DKM_DATA_HOME", str(tmp_path / "env"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert get_data_home(tmp_path / "explicit") == tmp_path / "explicit"
    assert get_data_home() == tmp_path / "env"
    monkeypatch.delenv("DKM_DATA_HOME")
    assert get_data_home() == tmp_path / "xdg" / "dkm"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_data_home() == tmp_path / "home" / ".cache" / "dkm"


# --------------------------------------------------------------------------
# Checksums and downloads
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, relative_path",
    [("mnist", "mnist.npz"), ("usps", "usps.h5"), ("usps-sharp", "usps.h5"), ("20news", NEWS_CACHE)],
)
def test_a_corrupt_file_fails_its_checksum(tmp_path, name, relative_path):
    path = tmp_path / relative_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"a truncated or corrupt copy")
    with pytest.raises(ValueError, match="checksum mismatch") as error:
        load(name, tmp_path)
    assert str(path) in str(error.value) and "verify=False" in str(error.value)


@pytest.mark.parametrize("name, file_name", [("mnist", "mnist.npz"), ("usps", "usps.h5")])
def test_an_unreadable_file_gives_a_clear_error_without_verification(tmp_path, name, file_name):
    (tmp_path / file_name).write_bytes(b"not the expected format")
    with pytest.raises(ValueError, match="cannot read") as error:
        load(name, tmp_path, verify=False)
    assert str(tmp_path / file_name) in str(error.value)


def _offline(url: str):
    raise OSError("network is unreachable")


@pytest.mark.parametrize("name, file_name", [("mnist", "mnist.npz"), ("usps", "usps.h5")])
def test_a_missing_file_offline_names_the_expected_path(monkeypatch, tmp_path, name, file_name):
    monkeypatch.setattr(dkm.data._fetch, "_open_url", _offline)
    with pytest.raises(FileNotFoundError, match="network is unreachable") as error:
        load(name, tmp_path)
    assert f"expected {tmp_path / file_name}" in str(error.value)
    assert list(tmp_path.iterdir()) == []  # no half-written file left behind


def test_a_missing_file_without_download_names_the_expected_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="download=False") as error:
        load("mnist", tmp_path, download=False)
    assert str(tmp_path / "mnist.npz") in str(error.value)


def test_a_download_with_the_wrong_checksum_is_discarded(monkeypatch, tmp_path):
    monkeypatch.setattr(dkm.data._fetch, "_open_url", lambda url: io.BytesIO(b"an error page"))
    with pytest.raises(ValueError, match="SHA-256"):
        load("usps", tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.data
def test_a_verified_download_is_renamed_into_place(monkeypatch, tmp_path, data_home):
    served = (data_home / "usps.h5").read_bytes()
    monkeypatch.setattr(dkm.data._fetch, "_open_url", lambda url: io.BytesIO(served))
    usps = load("usps", tmp_path / "cache")
    assert usps.X.shape == (9_298, 256)
    assert [path.name for path in (tmp_path / "cache").iterdir()] == ["usps.h5"]


def test_20news_missing_without_download_names_the_cache(tmp_path):
    with pytest.raises(FileNotFoundError, match="download=False") as error:
        load("20news", tmp_path, download=False)
    assert str(tmp_path / NEWS_CACHE) in str(error.value)


def test_20news_offline_names_the_cache(monkeypatch, tmp_path):
    def offline(**kwargs):
        raise OSError("network is unreachable")

    monkeypatch.setattr(sklearn.datasets, "fetch_20newsgroups", offline)
    with pytest.raises(FileNotFoundError, match="download failed") as error:
        load("20news", tmp_path)
    assert str(tmp_path / NEWS_CACHE) in str(error.value)


def test_20news_cache_built_by_scikit_learn_is_verified_later(monkeypatch, tmp_path):
    def fake_download(subset, data_home, download_if_missing):
        (Path(data_home) / "20news-bydate_py3.pkz").write_bytes(b"a cache built on this machine")
        return Bunch(
            data=["apple banana", "banana cherry", "cherry apple", "durian"],
            target=np.array([0, 1, 1, 0]),
            target_names=["fruit.a", "fruit.b"],
        )

    (tmp_path / "scikit_learn_data").mkdir()
    monkeypatch.setattr(sklearn.datasets, "fetch_20newsgroups", fake_download)
    assert load("20news", tmp_path).X.shape == (4, 4)
    assert load("20news", tmp_path).class_names == ("fruit.a", "fruit.b")  # verified by its record
    (tmp_path / NEWS_CACHE).write_bytes(b"damaged later")
    with pytest.raises(ValueError, match="checksum mismatch"):
        load("20news", tmp_path)


# --------------------------------------------------------------------------
# RCV1 on a synthetic stand-in
# --------------------------------------------------------------------------

# Category columns in a scrambled order, among other topics, as in fetch_rcv1.
STAND_IN_TOPICS = np.array(["MCAT", "C15", "GCAT", "ECAT", "E21", "CCAT", "M14"], dtype=object)


def rcv1_stand_in(
    n_documents: int, n_words: int, seed: int = 0
) -> tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray]:
    """Sparse tf-idf, multi-label topics, and each document's expected label.

    Documents have zero, one or two of the four categories (plus other
    topics); the expected label is -1 unless they have exactly one.
    """
    rng = np.random.default_rng(seed)
    X = sp.random(n_documents, n_words, density=0.05, format="csr", random_state=rng)
    category_columns = [list(STAND_IN_TOPICS).index(name) for name in RCV1_CATEGORIES]
    other_columns = [1, 4, 6]
    topics = np.zeros((n_documents, STAND_IN_TOPICS.size), dtype=np.uint8)
    expected = np.full(n_documents, -1)
    counts = rng.choice([0, 1, 2], size=n_documents, p=[0.1, 0.75, 0.15])
    for document, n_categories in enumerate(counts):
        categories = rng.choice(4, size=n_categories, replace=False)
        topics[document, [category_columns[c] for c in categories]] = 1
        topics[document, rng.choice(other_columns)] = rng.integers(2)
        if n_categories == 1:
            expected[document] = categories[0]
    return X, sp.csr_matrix(topics), expected


def _top_words(dense: np.ndarray, n_words: int) -> np.ndarray:
    """The n_words columns of largest sum, by brute force."""
    sums = dense.sum(axis=0)
    return np.sort(sorted(range(sums.size), key=lambda column: (-sums[column], column))[:n_words])


def test_rcv1_subset_from_given_rows():
    X, topics, expected = rcv1_stand_in(300, 40)
    rows = np.flatnonzero(expected >= 0)[::-3]  # eligible rows, in a scrambled order
    subset = build_rcv1_subset(X, topics, STAND_IN_TOPICS, n_words=12, rows=rows)
    words = _top_words(X.toarray()[rows], 12)
    assert subset.X.dtype == np.float32 and subset.X.shape == (rows.size, 12)
    assert np.allclose(subset.X, X.toarray()[rows][:, words])
    assert np.array_equal(subset.y, expected[rows])
    assert subset.class_names == RCV1_CATEGORIES and subset.n_clusters == 4


def test_rcv1_seeded_sample_draws_only_single_category_documents():
    X, topics, expected = rcv1_stand_in(300, 40)
    eligible = np.flatnonzero(expected >= 0)
    whole = build_rcv1_subset(
        X, topics, STAND_IN_TOPICS, n_samples=eligible.size, n_words=10, seed=5
    )
    assert np.array_equal(whole.y, expected[eligible])  # every eligible document, original order
    given = build_rcv1_subset(X, topics, STAND_IN_TOPICS, n_words=10, rows=eligible)
    assert np.array_equal(whole.X, given.X)
    with pytest.raises(ValueError, match="n_samples must be between 1 and"):
        build_rcv1_subset(X, topics, STAND_IN_TOPICS, n_samples=eligible.size + 1, n_words=10)


def test_rcv1_sample_is_deterministic_per_seed():
    X, topics, _ = rcv1_stand_in(300, 40)
    first, again, other = (
        build_rcv1_subset(X, topics, STAND_IN_TOPICS, n_samples=50, n_words=10, seed=seed)
        for seed in (1, 1, 2)
    )
    assert np.array_equal(first.X, again.X) and np.array_equal(first.y, again.y)
    assert not np.array_equal(first.X, other.X)
    assert np.isin(first.y, range(4)).all()


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"rows": [0, 0]}, "duplicates"),
        ({"rows": [10_000]}, "must lie in"),
        ({"rows": [[1, 2]]}, "1-D array of integers"),
        ({"n_words": 41}, "n_words must be between 1 and 40"),
        ({"target_names": ["CCAT", "ECAT", "GCAT", "X", "Y", "Z", "W"]}, "lacks the categories"),
        ({"target_names": ["CCAT"]}, "7 topic columns"),
    ],
)
def test_rcv1_construction_refuses_bad_input(changes, message):
    X, topics, _ = rcv1_stand_in(300, 40)
    arguments = {"target_names": STAND_IN_TOPICS, "n_samples": 50, "n_words": 10, **changes}
    with pytest.raises(ValueError, match=message):
        build_rcv1_subset(X, topics, **arguments)


def test_rcv1_rows_must_have_exactly_one_category():
    X, topics, expected = rcv1_stand_in(300, 40)
    with pytest.raises(ValueError, match="does not have exactly one of CCAT"):
        rows = np.flatnonzero(expected < 0)[:3]
        build_rcv1_subset(X, topics, STAND_IN_TOPICS, n_words=10, rows=rows)


def test_rcv1_shapes_must_agree():
    X, topics, _ = rcv1_stand_in(300, 40)
    with pytest.raises(ValueError, match="300 documents but target has 299 rows"):
        build_rcv1_subset(X, topics[:299], STAND_IN_TOPICS)


@pytest.fixture(scope="module")
def paper_sized_stand_in() -> Bunch:
    X, topics, expected = rcv1_stand_in(15_000, 2_100, seed=1)
    return Bunch(data=X, target=topics, target_names=STAND_IN_TOPICS, expected=expected)


def test_load_rcv1_builds_the_paper_subset_from_fetch_rcv1(
    monkeypatch, tmp_path, paper_sized_stand_in
):
    calls = []

    def fake_fetch_rcv1(**kwargs):
        calls.append(kwargs)
        return paper_sized_stand_in

    monkeypatch.setattr(sklearn.datasets, "fetch_rcv1", fake_fetch_rcv1)
    rcv1 = load("rcv1", tmp_path, rcv1_seed=3)
    sk_home = str(tmp_path / "scikit_learn_data")
    assert calls == [{"data_home": sk_home, "subset": "all", "download_if_missing": True}]
    assert rcv1.X.shape == (10_000, 2_000) and rcv1.n_clusters == 4 and rcv1.n_classes == 4
    rows = np.flatnonzero(paper_sized_stand_in.expected >= 0)[:10_000][::-1]
    chosen = load("rcv1", tmp_path, rcv1_rows=rows)
    assert np.array_equal(chosen.y, paper_sized_stand_in.expected[rows])


def test_load_rcv1_offline_names_the_directory(monkeypatch, tmp_path):
    def offline(**kwargs):
        raise OSError("network is unreachable")

    monkeypatch.setattr(sklearn.datasets, "fetch_rcv1", offline)
    with pytest.raises(FileNotFoundError, match="RCV1 is not available") as error:
        load("rcv1", tmp_path)
    assert str(tmp_path / "scikit_learn_data" / "RCV1") in str(error.value)


# --------------------------------------------------------------------------
# The Dataset container
# --------------------------------------------------------------------------


def _features(n: int = 6, d: int = 3) -> np.ndarray:
    return np.arange(n * d, dtype=np.float32).reshape(n, d)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"X": _features().astype(np.float64)}, "float32"),
        ({"X": np.zeros(6, dtype=np.float32)}, "2-D"),
        ({"X": np.zeros((0, 3), dtype=np.float32), "y": None}, "empty"),
        ({"X": np.where(np.eye(6, 3) > 0, np.nan, 1).astype(np.float32)}, "NaN or infinite"),
        ({"y": np.zeros(5, dtype=np.int64)}, "5 labels but X has 6"),
        ({"y": np.zeros(6)}, "integer labels"),
        ({"y": np.full(6, -1)}, "0..C-1"),
        ({"n_clusters": 0}, "between 1 and"),
        ({"n_clusters": True}, "integer"),
        ({"class_names": ("a",)}, "class_names has only 1"),
        ({"y": None, "class_names": ("a", "b")}, "y is None"),
        ({"name": ""}, "name"),
    ],
)
def test_dataset_validates_its_fields(fields, message):
    valid = {"X": _features(), "y": np.array([0, 1, 0, 1, 0, 1]), "n_clusters": 2, "name": "toy"}
    with pytest.raises(ValueError, match=message):
        Dataset(**{**valid, **fields})


def test_a_datasets_features_start_on_a_64_byte_boundary():
    features = np.arange(3 * 5, dtype=np.float32).reshape(3, 5)
    unaligned = np.empty(features.nbytes + 68, np.uint8)
    offset = (-unaligned.ctypes.data % 64) + 4
    moved = unaligned[offset:offset + features.nbytes].view(np.float32).reshape(3, 5)
    moved[...] = features
    data = Dataset(moved, None, 2, "toy")
    assert data.X.ctypes.data % 64 == 0 and data.X.flags.c_contiguous
    np.testing.assert_array_equal(data.X, features)


def test_from_arrays_maps_any_labels_to_integers():
    data = from_arrays([[1, 2], [3, 4], [5, 6]], ["b", "a", "b"], name="toy")
    assert data.X.dtype == np.float32 and data.y.tolist() == [1, 0, 1]
    assert data.class_names == ("a", "b") and data.n_clusters == 2


# --------------------------------------------------------------------------
# The user's own files
# --------------------------------------------------------------------------


def test_npz_with_string_labels(tmp_path):
    path = tmp_path / "mine.npz"
    np.savez(path, X=np.arange(12.0).reshape(6, 2), y=np.array(["b", "a", "b", "c", "a", "c"]))
    data = load(path)
    assert data.X.dtype == np.float32 and data.X.shape == (6, 2)
    assert data.y.tolist() == [1, 0, 1, 2, 0, 2] and data.class_names == ("a", "b", "c")
    assert data.n_clusters == 3 and data.name == "mine"
    assert load(str(path), n_clusters=4).n_clusters == 4


def test_unlabelled_npz_needs_n_clusters(tmp_path):
    path = tmp_path / "mine.npz"
    np.savez(path, X=np.ones((5, 2)))
    with pytest.raises(ValueError, match="pass n_clusters"):
        load(path)
    data = load(path, n_clusters=2)
    assert data.y is None and data.n_clusters == 2 and data.n_classes is None


def test_npy(tmp_path):
    path = tmp_path / "points.npy"
    np.save(path, np.arange(20, dtype=np.int32).reshape(5, 4))
    data = load(path, n_clusters=2)
    assert data.X.dtype == np.float32 and data.X[4, 3] == 19 and data.y is None


def test_csv_with_a_string_label_column(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("f1,label,f2\n0.5,cat,1\n1.5,dog,2\n2.5,cat,3\n")
    data = load(path, label_column="label")
    assert data.X.tolist() == [[0.5, 1.0], [1.5, 2.0], [2.5, 3.0]]
    assert data.y.tolist() == [0, 1, 0] and data.class_names == ("cat", "dog")


def test_unlabelled_csv(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("a,b\n1,2\n3,4\n5,6\n")
    data = load(path, n_clusters=2)
    assert data.X.shape == (3, 2) and data.y is None


def test_a_csv_without_a_header_keeps_every_sample(tmp_path):
    path = tmp_path / "saved.csv"
    X = np.arange(12, dtype=np.float64).reshape(4, 3) / 4
    np.savetxt(path, np.column_stack([X, [0, 1, 0, 1]]), delimiter=",")  # no header line
    data = load(path, n_clusters=2)
    assert data.X.shape == (4, 4) and data.X[0].tolist() == [0.0, 0.25, 0.5, 0.0]
    labelled = load(path, label_column="3")  # its columns named by their positions
    assert labelled.X.tolist() == X.tolist() and labelled.y.tolist() == [0, 1, 0, 1]


@pytest.mark.parametrize("suffix", [".svm", ".svmlight", ".libsvm", ".txt"])
def test_svmlight(tmp_path, suffix):
    path = tmp_path / f"sparse{suffix}"
    path.write_text("1 1:0.5 3:1.0\n2 2:0.25\n1 1:1\n")
    data = load(path)
    assert data.X.shape == (3, 3) and data.X[0].tolist() == [0.5, 0.0, 1.0]
    assert data.y.tolist() == [0, 1, 0] and data.class_names == (1.0, 2.0)


def _object_npy(path: Path) -> None:
    np.save(path, np.array([[1, "a"], [2, None]], dtype=object), allow_pickle=True)


def _object_npz(path: Path) -> None:
    np.savez(path, X=np.ones((2, 2)), y=np.array([1, None], dtype=object))


def _mismatched_npz(path: Path) -> None:
    np.savez(path, X=np.ones((3, 2)), y=np.arange(2))


def _npz_named_npy(path: Path) -> None:
    with open(path, "wb") as stream:
        np.savez(stream, X=np.ones((2, 2)))


@pytest.mark.parametrize(
    "file_name, content, options, message",
    [
        ("ragged.csv", "a,b\n1,2\n3,4,5\n", {"n_clusters": 2}, "cannot parse the CSV"),
        ("short.csv", "a,b\n1,2\n3\n", {"n_clusters": 2}, "NaN or infinite"),
        ("nan.csv", "a,b\n1,nan\n3,4\n", {"n_clusters": 2}, "NaN or infinite"),
        ("absent.csv", "a,b\n1,2\n3,4\n", {"label_column": "label"}, "no column named 'label'"),
        ("words.csv", "a,b\n1,x\n3,y\n", {"n_clusters": 2}, "non-numeric feature columns: b"),
        ("empty.csv", "", {"n_clusters": 2}, "cannot parse the CSV"),
        ("header.csv", "a,b\n", {"n_clusters": 2}, "no data rows"),
        ("labels.csv", "label\n1\n2\n", {"label_column": "label"}, "no feature columns"),
        ("unlabelled.csv", "a,label\n1,x\n2,\n", {"label_column": "label"}, "needs a label"),
        ("empty.npy", "", {"n_clusters": 2}, "not a readable NumPy file"),
        ("empty.npz", "", {"n_clusters": 2}, "not a readable NumPy file"),
        ("empty.svm", "", {}, "no samples"),
        ("labels.svm", "1\n2\n", {}, "labels but no feature values"),
        ("broken.svm", "1 a:b\n", {}, "not a valid svmlight"),
        ("table.xlsx", "a,b\n", {}, "unsupported file type .xlsx"),
        ("table.npz", "", {"label_column": "y"}, "CSV only"),
    ],
)
def test_malformed_text_files_are_refused(tmp_path, file_name, content, options, message):
    path = tmp_path / file_name
    path.write_text(content)
    with pytest.raises(ValueError, match=message) as error:
        load(path, **options)
    assert str(path) in str(error.value) or "cannot be used" in str(error.value)


@pytest.mark.parametrize(
    "file_name, write, message",
    [
        ("object.npy", _object_npy, "object"),
        ("object.npz", _object_npz, "object"),
        ("nan.npz", lambda path: np.savez(path, X=np.array([[1.0, np.nan]])), "NaN or infinite"),
        ("only_y.npz", lambda path: np.savez(path, y=np.arange(3)), "no array named 'X'.*holds y"),
        ("mismatch.npz", _mismatched_npz, "2 labels but 'X' has 3"),
        ("vector.npy", lambda path: np.save(path, np.ones(4)), "2-D"),
        ("text.npy", lambda path: np.save(path, np.array([["a", "b"]])), "must be numbers"),
        ("archive.npy", _npz_named_npy, "not an .npy"),
    ],
)
def test_malformed_numpy_files_are_refused(tmp_path, file_name, write, message):
    path = tmp_path / file_name
    write(path)
    with pytest.raises(ValueError, match=message) as error:
        load(path, n_clusters=1)
    assert str(path) in str(error.value)


def test_a_missing_user_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such data file"):
        load(tmp_path / "absent.csv")


def test_a_files_description_names_it_relative_to_the_current_folder(tmp_path, monkeypatch):
    path = tmp_path / "runs" / "mine.npz"
    path.parent.mkdir()
    np.savez(path, X=np.ones((4, 2)))
    monkeypatch.chdir(tmp_path)
    assert load(path, n_clusters=2).description == "user data from runs/mine.npz"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)   # the file is not inside: its path as given
    assert load(path, n_clusters=2).description == f"user data from {path}"
