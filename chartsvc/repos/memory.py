"""Hand memory freed after an index parse back to the operating system (glibc only).

Parsing a 15 MB index allocates and frees several times its size. glibc keeps freed heap pages for
reuse, and after a large ``mmap``'d block is freed it raises its mmap threshold, so the next index's
buffers land on the heap too: the service's RSS ratchets up with every update though nothing is
retained. ``malloc_trim(0)`` returns those pages. Elsewhere (musl, macOS) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def release_freed_memory() -> None:
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
