"""The cache sizes by which TensorFlow's matrix products block their sums: read and pinned.

TensorFlow multiplies matrices with Eigen's tensor contraction (its own kernels,
and the runtime that XLA's compiled epochs call). Eigen cuts a product into
blocks whose sizes it works out from the CPU's cache sizes, read once per
process with the ``cpuid`` instruction (``Eigen::internal::
manage_caching_sizes``), and computes it block by block: a CPU with another L1
data cache or another L2 may round the same product otherwise, whatever
instruction set the kernels are capped at (the book's chapter on reproducing shows both).
Eigen offers no
setting for it outside C++, so :func:`pin_cache_sizes` writes the sizes into
each copy of Eigen's cache-size variable in TensorFlow's libraries, located
through their symbol tables, before TensorFlow multiplies anything; the
reproducible arithmetic pins them (:func:`dkm.reproducibility.arithmetic.use_reproducible_arithmetic`).
It writes only into a ``libtensorflow_cc`` it was checked against, identified by the file's
SHA-256 (:data:`CHECKED_KERNELS`): in another build the symbols may name other memory.
Linux on x86-64 only, as TensorFlow's wheels for the CPU are; no TensorFlow
import needed (its libraries are loaded, not its Python package).
"""
from __future__ import annotations

import base64
import ctypes
import functools
import hashlib
import mmap
import struct
from importlib.util import find_spec
from pathlib import Path

__all__ = ["CacheSizes", "CHECKED_KERNELS", "TENSORFLOW_LIBRARIES", "kernels_digest",
           "pin_cache_sizes", "tensorflow_cache_sizes"]

#: Eigen's L1, L2 and L3 cache sizes, in bytes.
CacheSizes = tuple[int, int, int]

#: TensorFlow's libraries that hold a copy of Eigen's cache sizes.
TENSORFLOW_LIBRARIES = ("libtensorflow_framework.so.2", "libtensorflow_cc.so.2")
_KERNELS = "libtensorflow_cc.so.2"  # TensorFlow's kernels and XLA's runtime: the copy they read
#: The builds of ``libtensorflow_cc.so.2`` that :func:`pin_cache_sizes` was checked against, by
#: the file's SHA-256: the TensorFlow of the project's lock (``requirements.lock``).
CHECKED_KERNELS = {
    "2889ecc99d7641620f41a4bea538f4dd4b626f75aa3e12623161ae939054191c":
        "TensorFlow 2.21.0 (its x86-64 Linux wheel)",
}
# the function-local static ``m_cacheSizes`` of Eigen::internal::manage_caching_sizes (three
# std::ptrdiff_t) and the guard that says whether it has been initialised (Itanium C++ ABI)
_SIZES = b"_ZZN5Eigen8internal20manage_caching_sizesENS_6ActionEPlS2_S2_E12m_cacheSizes"
_GUARD = b"_ZGVZN5Eigen8internal20manage_caching_sizesENS_6ActionEPlS2_S2_E12m_cacheSizes"
# an ELF64 symbol: st_name, st_info, st_other, st_shndx, st_value, st_size
_SYMBOL = [("name", "<u4"), ("info", "u1"), ("other", "u1"), ("section", "<u2"),
           ("value", "<u8"), ("size", "<u8")]
_SHT_SYMTAB = 2
_RTLD_DI_LINKMAP = 2


def _symbol_values(path: Path, names: tuple[bytes, ...]) -> dict[bytes, list[int]]:
    """The values (addresses before relocation) of every symbol of ``names`` in the symbol
    table of the ELF64 file ``path``, local symbols included; a name it lacks has none."""
    import numpy as np  # here, so that importing the package stays light

    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as elf:
        if elf[:5] != b"\x7fELF\x02":
            raise ValueError(f"{path} is not a 64-bit ELF file")
        section_offset, = struct.unpack_from("<Q", elf, 0x28)
        entry_size, count = struct.unpack_from("<HH", elf, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", elf, section_offset + i * entry_size)
                    for i in range(count)]
        symtab = next((s for s in sections if s[1] == _SHT_SYMTAB), None)
        if symtab is None:
            return {name: [] for name in names}
        symbols = np.frombuffer(elf[symtab[4]:symtab[4] + symtab[5]], dtype=np.dtype(_SYMBOL))
        strings_start, strings_size = sections[symtab[6]][4:6]
        found = {}
        for name in names:
            # every place the name ends a string (a symbol may point into the tail of a longer
            # one), searched in the mapped file rather than in a copy of its string table
            starts, at = [], elf.find(name + b"\0", strings_start, strings_start + strings_size)
            while at >= 0:
                starts.append(at - strings_start)
                at = elf.find(name + b"\0", at + 1, strings_start + strings_size)
            found[name] = [int(v) for v in symbols["value"][np.isin(symbols["name"], starts)]]
    return found


def _load_bias(library: ctypes.CDLL) -> int:
    """What the dynamic loader added to a loaded library's addresses (its link map's
    ``l_addr``)."""
    link_map = ctypes.c_void_p()
    if ctypes.CDLL(None).dlinfo(ctypes.c_void_p(library._handle), _RTLD_DI_LINKMAP,
                                ctypes.byref(link_map)) != 0:
        raise OSError(f"dlinfo could not tell where {library._name} is loaded")
    return ctypes.c_size_t.from_address(link_map.value).value


def _tensorflow_folder() -> Path:
    spec = find_spec("tensorflow")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("TensorFlow is not installed: there are no matrix products to pin")
    return Path(next(iter(spec.submodule_search_locations)))


@functools.cache
def _copies() -> dict[str, list[tuple[ctypes.Array, ctypes.c_ubyte]]]:
    """Each copy of Eigen's cache sizes in each of TensorFlow's libraries (loading them), with
    its guard; the libraries stay loaded, so the copies stay where they are."""
    folder = _tensorflow_folder()
    copies = {}
    for name in TENSORFLOW_LIBRARIES:
        path = folder / name
        values = _symbol_values(path, (_SIZES, _GUARD))
        if len(values[_SIZES]) != len(values[_GUARD]):
            raise RuntimeError(f"{path}: {len(values[_SIZES])} copies of Eigen's cache sizes "
                               f"but {len(values[_GUARD])} guards")
        bias = _load_bias(ctypes.CDLL(str(path)))
        copies[name] = [((ctypes.c_int64 * 3).from_address(bias + sizes),
                         ctypes.c_ubyte.from_address(bias + guard))
                        for sizes, guard in zip(sorted(values[_SIZES]), sorted(values[_GUARD]))]
    if not copies[_KERNELS]:
        raise RuntimeError(f"no copy of Eigen's cache sizes in {folder / _KERNELS} (a TensorFlow "
                           "built without symbol tables?): its matrix products cannot be pinned")
    return copies


def kernels_digest() -> str:
    """The SHA-256 of this TensorFlow's ``libtensorflow_cc.so.2``, in hexadecimal.

    Read from the digest its wheel's ``RECORD`` gives the file (which the installer checked
    as it installed it) when the file still has the recorded size; computed from the file
    (about a second) where no record lists it.
    """
    from importlib import metadata

    path = _tensorflow_folder() / _KERNELS
    for name in metadata.packages_distributions().get("tensorflow", []):
        for entry in metadata.distribution(name).files or []:
            if (entry.name == _KERNELS and entry.hash is not None and entry.hash.mode == "sha256"
                    and entry.size == path.stat().st_size
                    and Path(entry.locate()).resolve() == path.resolve()):
                return base64.urlsafe_b64decode(entry.hash.value + "==").hex()
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _check_kernels() -> None:
    digest = kernels_digest()
    if digest not in CHECKED_KERNELS:
        raise RuntimeError(
            f"the cache-size pin was checked against {', '.join(CHECKED_KERNELS.values())}, and "
            f"this TensorFlow's {_KERNELS} (SHA-256 {digest[:16]}…) is another build, whose "
            "symbols may name other memory: install the lock's versions (requirements.lock; "
            "`make test` does) to compute in the reproducible arithmetic")


def pin_cache_sizes(sizes: CacheSizes) -> None:
    """Make TensorFlow's matrix products block their sums as on a CPU with these caches.

    Writes ``sizes`` into every copy of Eigen's cache sizes in
    :data:`TENSORFLOW_LIBRARIES` and marks it initialised, so that Eigen does not
    read the CPU's. Call it before TensorFlow multiplies matrices: a product
    running meanwhile would read a half-written block length.

    Parameters
    ----------
    sizes : tuple of three int
        The L1 data, L2 and L3 cache sizes, in bytes.

    Raises
    ------
    ValueError
        When a size is not a positive integer.
    RuntimeError
        When TensorFlow is not installed, its ``libtensorflow_cc`` is not one of
        :data:`CHECKED_KERNELS`, or holds no copy.
    """
    if len(sizes) != 3 or not all(isinstance(s, int) and s > 0 for s in sizes):
        raise ValueError(f"cache sizes are three positive byte counts (L1, L2, L3); got {sizes!r}")
    _check_kernels()
    for values, guard in (copy for copies in _copies().values() for copy in copies):
        values[:] = sizes
        guard.value = 1


def tensorflow_cache_sizes() -> CacheSizes | None:
    """The cache sizes TensorFlow's matrix products block by in this process: those of the
    copy in ``libtensorflow_cc`` (its kernels' and XLA's), once Eigen has read or been told
    them; None before, and where TensorFlow's libraries are not loaded."""
    if not any(_is_loaded(name) for name in TENSORFLOW_LIBRARIES):
        return None
    values, guard = _copies()[_KERNELS][0]
    return tuple(int(v) for v in values) if guard.value else None


def _is_loaded(library: str) -> bool:
    """Whether this process has loaded a file named ``library``."""
    with open("/proc/self/maps") as maps:
        return any(line.rstrip().endswith("/" + library) for line in maps)
