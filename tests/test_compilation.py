"""The persistent compilation cache (dkm.compilation): a folder per arithmetic, and fits that do
not change with it."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from dkm.compilation import CACHE_VARIABLE, compilation_cache_directory, use_compilation_cache

CPU = ("vendor_id : AuthenticAMD\ncpu family : 25\nmodel : 17\nstepping : 1\n"
       "flags : fpu sse4_2 avx avx2 avx512f avx512_bf16\n")


def _folder(environ: dict[str, str], cpuinfo: str = CPU, tensorflow: str = "2.21.0") -> Path:
    return compilation_cache_directory({CACHE_VARIABLE: "/cache", **environ}, cpuinfo,
                                       tensorflow)


def test_the_folder_is_one_per_cpu_tensorflow_and_kernel_settings():
    plain = _folder({})
    assert plain.parent == Path("/cache") and len(plain.name) == 16
    assert _folder({}) == plain
    others = [
        _folder({}, CPU.replace(" avx512_bf16", "")),  # another flag
        _folder({}, CPU.replace("model : 17", "model : 1")),  # another model
        _folder({}, tensorflow="2.20.0"),
        _folder({"XLA_FLAGS": "--xla_cpu_max_isa=AVX2"}),
        _folder({"ONEDNN_MAX_CPU_ISA": "AVX2"}),
        _folder({"TF_XLA_FLAGS": "--tf_xla_auto_jit=2"}),
    ]
    assert len({plain, *others}) == len(others) + 1
    # the cache's own flag, which names the folder, does not change the folder
    assert _folder({"TF_XLA_FLAGS": "--tf_xla_persistent_cache_directory=/x"}) == plain
    # variables that do not choose kernels do not matter
    assert _folder({"HOME": "/elsewhere", "DKM_DATA_HOME": "/data"}) == plain


def test_the_root_comes_from_the_variable_else_the_user_cache_and_off_turns_it_off():
    assert compilation_cache_directory({CACHE_VARIABLE: "off"}, CPU, "2.21.0") is None
    assert compilation_cache_directory({CACHE_VARIABLE: " OFF "}, CPU, "2.21.0") is None
    xdg = compilation_cache_directory({"XDG_CACHE_HOME": "/xdg"}, CPU, "2.21.0")
    assert xdg.parent == Path("/xdg/dkm/xla")
    home = compilation_cache_directory({}, CPU, "2.21.0")
    assert home.parent == Path.home() / ".cache" / "dkm" / "xla"


def test_use_adds_the_flag_once_and_keeps_a_folder_already_named(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path))
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=0")
    folder = use_compilation_cache()
    assert folder.parent == tmp_path
    assert os.environ["TF_XLA_FLAGS"] == (f"--tf_xla_auto_jit=0 "
                                          f"--tf_xla_persistent_cache_directory={folder}")
    assert use_compilation_cache() == folder  # a second call adds nothing
    assert os.environ["TF_XLA_FLAGS"].count("persistent_cache_directory") == 1

    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_persistent_cache_directory=/theirs")
    assert use_compilation_cache() == Path("/theirs")
    assert os.environ["TF_XLA_FLAGS"] == "--tf_xla_persistent_cache_directory=/theirs"


def test_a_folder_chosen_for_another_arithmetic_is_moved(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path))
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=0")
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    native = use_compilation_cache()
    # the arithmetic changes after the folder was chosen (in this process, or in the one that
    # started it and handed down its TF_XLA_FLAGS)
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_max_isa=AVX2")
    moved = use_compilation_cache()
    assert moved == compilation_cache_directory() and moved != native
    assert os.environ["TF_XLA_FLAGS"].split() == [
        "--tf_xla_auto_jit=0", f"--tf_xla_persistent_cache_directory={moved}"]


def test_off_leaves_tensorflow_alone_and_an_unwritable_folder_is_refused_with_a_warning(
        tmp_path, monkeypatch):
    monkeypatch.setenv("TF_XLA_FLAGS", "")
    monkeypatch.setenv(CACHE_VARIABLE, "off")
    assert use_compilation_cache() is None
    assert os.environ["TF_XLA_FLAGS"] == ""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_VARIABLE, str(blocker))
    with pytest.warns(RuntimeWarning, match="cannot be written to.*set DKM_XLA_CACHE"):
        assert use_compilation_cache() is None
    assert os.environ["TF_XLA_FLAGS"] == ""


def test_a_fit_loaded_from_the_cache_is_the_compiled_fits_bit_for_bit(tmp_path, small_fit):
    # the cold run compiles (as with the cache off) and saves; the warm run loads
    def fit() -> dict:  # one thread of each kind, the cache in tmp_path
        return small_fit("native", OMP_NUM_THREADS="1", TF_NUM_INTRAOP_THREADS="1",
                         **{CACHE_VARIABLE: str(tmp_path)})

    cold = fit()
    (folder,) = tmp_path.iterdir()  # created by TensorFlow as it saved the first entry
    entries = {path.name: path.stat().st_ino for path in folder.iterdir()}
    assert len(entries) == 2  # the pretraining's epoch and the fine-tuning's
    warm = fit()
    # loaded, not compiled and written again (TensorFlow writes a new file and renames it)
    assert {path.name: path.stat().st_ino for path in folder.iterdir()} == entries
    assert warm == cold
