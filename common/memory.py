"""The process's memory settings (glibc's allocator), applied once at start, and memory handed back.

:func:`tune_allocator` is a process-wide setting: ``wharf serve`` applies it for every service
before the app starts, as it raises the open-files limit. Two glibc behaviours make RSS ratchet up
although nothing is retained: freed heap pages are kept for reuse, and after a large ``mmap``'d
block is freed (a 15 MB chart index) glibc raises its mmap threshold, so the next large buffers
land on the heap too. The threshold is pinned at 1 MiB (larger blocks always come from ``mmap``
and go back on free), not glibc's default of 128 KiB: every read from a TLS connection allocates a
256 KiB buffer and shrinks it to what arrived (uvloop's and asyncio's SSL read size), and with
both thresholds at 128 KiB each read was an ``mmap``, two page faults, an ``mremap`` and a
``munmap`` (a fifth of the console's CPU per exec round trip). The trim threshold is pinned at
twice the mmap threshold, as glibc's own raise would set it.

:func:`release_freed_memory` (``malloc_trim``) hands free heap pages back after a large parse.
:func:`give_back` does that after a burst (thousands of streams opened and gone): the streams'
objects are reference cycles (a task, its coroutine, the stream and its response) that an idle
server never collects, since the cyclic collector runs only when something allocates; once
collected, CPython's small-object allocator keeps the arenas a few survivors pin and glibc keeps
freed heap pages. With ``PYTHONMALLOC=malloc`` every object lives in glibc's heap and the trim
returns nearly all of it (RSS +6 MB over the start instead of +26 MB, results' ``/events``), which
is why ``scripts/run``, the systemd units and the image set it (its cost: docs/benchmarks.md).

Elsewhere (musl, macOS) the allocator calls do nothing. Nothing here may run on a request path:
a full collection and a trim take milliseconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import logging
from typing import Any

logger = logging.getLogger(__name__)

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameter numbers in glibc's malloc.h
_MMAP_THRESHOLD = 1024 * 1024  # setting it explicitly stops the dynamic raise
_TRIM_THRESHOLD = 2 * _MMAP_THRESHOLD


@functools.cache
def _libc() -> Any:
    """glibc, or None where the C library lacks ``malloc_trim`` and ``mallopt`` (musl, macOS)."""
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
    """Pin glibc's mmap and trim thresholds for this process (see the module's docstring)."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
        libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)


def release_freed_memory() -> None:
    """Return glibc's free heap pages to the system."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


def give_back() -> int:
    """Collect unreachable cycles and return free heap pages to the system; the objects freed."""
    freed = gc.collect()
    release_freed_memory()
    logger.debug("memory given back after a burst: %d objects collected", freed)
    return freed
