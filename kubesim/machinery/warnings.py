"""Warnings a request earns below the HTTP layer (an admission plugin's), for its ``Warning`` header.

The HTTP layer opens :func:`collecting` around a request; code below it calls :func:`warn`, which
does nothing outside one (a controller's own writes have nobody to tell).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_SINK: ContextVar[list[str] | None] = ContextVar("kubesim_warnings", default=None)


def warn(message: str) -> None:
    sink = _SINK.get()
    if sink is not None and message not in sink:
        sink.append(message)


@contextlib.contextmanager
def collecting() -> Iterator[list[str]]:
    sink: list[str] = []
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)
