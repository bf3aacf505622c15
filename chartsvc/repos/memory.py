"""Keep the memory an index update frees from staying with the process (glibc only).

Parsing a 15 MB index allocates and frees several times its size. Two glibc behaviours make the
service's RSS ratchet up with every update although nothing is retained: freed heap pages are kept
for reuse, and after a large ``mmap``'d block (the raw index) is freed glibc raises its mmap threshold,
so the next index's buffers land on the heap too. :func:`tune_allocator` pins the threshold (blocks
over 1 MiB always come from ``mmap`` and go back on free) and :func:`release_freed_memory`
(``malloc_trim``) hands free heap pages back after each parse. Elsewhere (musl, macOS) both do nothing.

The threshold is not glibc's default of 128 KiB because the setting is process-wide (the console
embeds this library) and every read from a TLS connection allocates a 256 KiB buffer, then shrinks it
to what arrived (uvloop's and asyncio's SSL read size). With both thresholds at 128 KiB the heap top
stays smaller than that, so each read was an ``mmap``, two page faults, an ``mremap`` and a
``munmap``: a fifth of the console's CPU per exec round trip. The trim threshold is pinned at twice
the mmap threshold, as glibc's own raise would set it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameter numbers in glibc's malloc.h
_MMAP_THRESHOLD = 1024 * 1024  # setting it explicitly stops the dynamic raise
_TRIM_THRESHOLD = 2 * _MMAP_THRESHOLD


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
        libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)


def release_freed_memory() -> None:
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
