"""dkm._atomic: a file is written whole or not at all, with an ordinary file's permissions."""
from __future__ import annotations

import os
import stat

import pytest

from dkm._atomic import atomic_write


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_the_file_appears_whole_with_the_mode_a_new_file_gets(tmp_path, umask_022):
    path = tmp_path / "new" / "folder" / "file.bin"
    with atomic_write(path) as stream:
        stream.write(b"first ")
        assert not path.exists()  # nothing at the destination until the block ends
        stream.write(b"second")
    assert path.read_bytes() == b"first second"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # 0o666 less the umask, not mkstemp's 0o600
    assert [p.name for p in path.parent.iterdir()] == ["file.bin"]


def test_an_error_leaves_the_old_file_and_no_temporary_file(tmp_path):
    path = tmp_path / "file.bin"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="interrupted"):
        with atomic_write(path) as stream:
            stream.write(b"half of the new")
            raise RuntimeError("interrupted")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["file.bin"]
