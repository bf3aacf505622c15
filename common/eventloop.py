"""The event loop a served Wharf process runs on: uvloop when it is installed (a dependency
everywhere but Windows), else asyncio's own.

uvloop moves the loop, the transports and TLS out of Python: relaying small frames (an exec
session, a port-forward, a watch) costs the process about half the CPU. ``WHARF_EVENT_LOOP``
chooses: ``auto`` (the default), ``uvloop`` (refuse to start without it) or ``asyncio`` (the
standard loop, for instance to rule uvloop out when chasing a bug). The commands that serve
(``wharf serve``, ``wharf kubesim``) read it and name the loop in their start-up line; this module
only takes the environment they pass, and imports nothing else of Wharf (the simulator uses it).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from collections.abc import Coroutine, Mapping
from typing import Any, Literal, TypeVar

ENV = "WHARF_EVENT_LOOP"
CHOICES = ("auto", "uvloop", "asyncio")
Loop = Literal["uvloop", "asyncio"]
T = TypeVar("T")
logger = logging.getLogger(__name__)


def chosen(environ: Mapping[str, str]) -> Loop:
    """The loop ``WHARF_EVENT_LOOP`` in ``environ`` asks for, given what is installed; a
    ``ValueError`` (its text the line to print, exit code 2) when it cannot be had."""
    wanted = environ.get(ENV, "").strip().lower() or "auto"
    if wanted not in CHOICES:
        raise ValueError(f"{ENV} must be one of {', '.join(CHOICES)}, not {wanted[:40]!r}")
    if wanted == "asyncio":
        return "asyncio"
    if importlib.util.find_spec("uvloop") is None:
        if wanted == "uvloop":
            raise ValueError(f"{ENV}=uvloop, but uvloop is not installed")
        return "asyncio"
    return "uvloop"


def new_event_loop(loop: Loop) -> asyncio.AbstractEventLoop:
    """A new loop of the kind ``loop`` names (logged at DEBUG, as asyncio logs its selector)."""
    logger.debug("Using the %s event loop", loop)
    if loop == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def run(main: Coroutine[Any, Any, T], loop: Loop) -> T:
    """``asyncio.run(main)`` on a new loop of the kind ``loop`` names."""
    with asyncio.Runner(loop_factory=lambda: new_event_loop(loop)) as runner:
        return runner.run(main)
