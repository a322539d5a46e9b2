"""dkm.reproducibility.cache_sizes: Eigen's cache sizes found in TensorFlow's libraries, pinned before TensorFlow
multiplies, and kept by its products. What they change in a fit is test_arithmetic's."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dkm.reproducibility.cache_sizes import (_GUARD, _SIZES, TENSORFLOW_LIBRARIES, _symbol_values,
                             _tensorflow_folder, pin_cache_sizes)

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_each_library_holds_its_copies_of_the_sizes_and_their_guards():
    for name in TENSORFLOW_LIBRARIES:
        found = _symbol_values(_tensorflow_folder() / name, (_SIZES, _GUARD, b"no such symbol"))
        assert len(found[_SIZES]) == len(found[_GUARD]) >= 1, name
        assert found[b"no such symbol"] == []


def test_a_file_that_is_not_elf_is_refused(tmp_path):
    path = tmp_path / "text.so"
    path.write_text("not a library")
    with pytest.raises(ValueError, match="not a 64-bit ELF file"):
        _symbol_values(path, (_SIZES,))


@pytest.mark.parametrize("sizes", [(32768, 524288), (0, 1, 2), (32768.0, 1, 2)])
def test_sizes_must_be_three_positive_byte_counts(sizes):
    with pytest.raises(ValueError, match="three positive byte counts"):
        pin_cache_sizes(sizes)


def test_the_products_keep_the_sizes_pinned_before_them():
    program = ("from dkm.reproducibility.cache_sizes import pin_cache_sizes, tensorflow_cache_sizes\n"
               "print(tensorflow_cache_sizes())\n"
               "pin_cache_sizes((40960, 1 << 20, 1 << 24))\n"
               "import tensorflow as tf\n"
               "tf.matmul(tf.ones((64, 400)), tf.ones((400, 64)))\n"
               "print(tensorflow_cache_sizes())\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=REPO_ROOT, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[:2] == ["None", str((40960, 1 << 20, 1 << 24))]


def test_the_pin_writes_only_into_the_build_it_was_checked_against(monkeypatch):
    import dkm.reproducibility.cache_sizes as cache_sizes

    assert cache_sizes.kernels_digest() in cache_sizes.CHECKED_KERNELS  # the lock's TensorFlow
    monkeypatch.setattr(cache_sizes, "kernels_digest", lambda: "0" * 64)
    monkeypatch.setattr(cache_sizes, "_copies", lambda: pytest.fail("wrote into another build"))
    with pytest.raises(RuntimeError, match=r"checked against TensorFlow 2\.21\.0 .* another "
                                           r"build.*install the lock's versions"):
        pin_cache_sizes((32768, 524288, 268435456))


def test_the_kernels_digest_is_the_files():
    import hashlib

    from dkm.reproducibility.cache_sizes import _KERNELS, kernels_digest

    with open(_tensorflow_folder() / _KERNELS, "rb") as file:
        assert kernels_digest() == hashlib.file_digest(file, "sha256").hexdigest()
