"""dkm.book.computed_once: a result kept with the digest of its inputs."""
import numpy as np
import pytest

from dkm.book.computed_once import computed_once, inputs_digest


def test_a_kept_result_is_read_back_until_its_inputs_or_settings_change(tmp_path):
    path = tmp_path / "kept" / "sums.npz"
    calls = []

    def summed(X):
        def compute():
            calls.append(1)
            return {"sums": X.sum(axis=1)}
        return compute

    X = np.arange(6.0).reshape(2, 3)
    first = computed_once(path, {"axis": 1}, {"X": X}, summed(X),
                          versions={"numpy": np.__version__})
    assert path.is_file() and len(calls) == 1
    again = computed_once(path, {"axis": 1}, {"X": X}, summed(X))
    assert len(calls) == 1 and np.array_equal(again["sums"], first["sums"])
    changed = X.copy()
    changed[0, 0] = 10.0
    assert computed_once(path, {"axis": 1}, {"X": changed}, summed(changed))["sums"][0] == 13.0
    assert len(calls) == 2
    computed_once(path, {"axis": 1, "note": "other settings"}, {"X": changed}, summed(changed))
    assert len(calls) == 3


def test_the_digest_sees_dtype_shape_and_names_not_the_settings_order():
    X = np.arange(6, dtype=np.int32)
    base = inputs_digest({"a": 1, "b": 2}, {"X": X})
    assert inputs_digest({"b": 2, "a": 1}, {"X": X}) == base
    assert inputs_digest({"a": 1, "b": 2}, {"X": X.astype(np.int64)}) != base
    assert inputs_digest({"a": 1, "b": 2}, {"X": X.reshape(2, 3)}) != base
    assert inputs_digest({"a": 1, "b": 2}, {"Y": X}) != base


def test_a_result_named_meta_is_refused(tmp_path):
    with pytest.raises(ValueError, match="named 'meta'"):
        computed_once(tmp_path / "x.npz", {}, {}, lambda: {"meta": np.zeros(1)})
    assert not (tmp_path / "x.npz").exists()
