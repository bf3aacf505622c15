"""Keep the memory an index update frees from staying with the process (glibc only).

Parsing a 15 MB index allocates and frees several times its size. Two glibc behaviours make the
service's RSS ratchet up with every update although nothing is retained: freed heap pages are kept
for reuse, and after a large ``mmap``'d block (the raw index) is freed glibc raises its mmap threshold,
so the next index's buffers land on the heap too. :func:`tune_allocator` pins the threshold at its
default (blocks over 128 KiB always come from ``mmap`` and go back on free) and
:func:`release_freed_memory` (``malloc_trim``) hands free heap pages back after each parse.
Elsewhere (musl, macOS) both do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

_M_MMAP_THRESHOLD = -3  # mallopt parameter number in glibc's malloc.h
_MMAP_THRESHOLD = 128 * 1024  # glibc's default; setting it explicitly stops the dynamic raise


@functools.cache
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.malloc_trim, libc.mallopt  # noqa: B018 - both must exist (glibc)
    except (OSError, AttributeError):
        return None
    return libc


def tune_allocator() -> None:
    libc = _libc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)


def release_freed_memory() -> None:
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
