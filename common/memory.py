"""Giving memory back to the system after a burst (thousands of streams opened and gone).

Measured on results' ``/events`` (2,000 streams held, then 2,000 dropped): the streams' objects
are reference cycles (a task, its coroutine, the stream and its response) that an idle server
never collects, since the cyclic collector runs only when something allocates; once collected,
CPython's small-object allocator keeps the arenas a few survivors pin (25 MB of unused pools) and
glibc keeps freed heap pages. :func:`give_back` collects the cycles and asks glibc to return its
free pages (``malloc_trim``). With ``PYTHONMALLOC=malloc`` every object lives in glibc's heap and
the trim returns nearly all of it (RSS +6 MB over the start instead of +26 MB), which is why
``scripts/run``, the systemd units and the image set it (its cost: docs/benchmarks.md). This module
must not be called on a request path: a full collection and a trim take milliseconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim if name else None  # type: ignore[assignment]
    except (OSError, AttributeError):
        return None
    return trim


def give_back() -> int:
    """Collect unreachable cycles and return free heap pages to the system; the objects freed."""
    freed = gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
    logger.debug("memory given back after a burst: %d objects collected", freed)
    return freed
