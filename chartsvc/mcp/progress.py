"""MCP progress for long operations (install, upgrade, test, repository updates).

The domain functions are single awaits with no steps to count, so progress is honest rather than
invented: one notification when the work starts, one every ``interval`` seconds while it runs (the
elapsed time, total unknown) and a last one, progress equal to total, when it ends. A client that
asked for no progress gets none (the SDK drops them), and a client that cannot take one more
notification does not fail the work.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Protocol, TypeVar

from common import tasks

logger = logging.getLogger(__name__)

INTERVAL_S = 2.0
T = TypeVar("T")


class Reporter(Protocol):
    async def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


async def with_progress(
    work: Awaitable[T], report: Reporter, *, what: str, interval: float = INTERVAL_S
) -> T:
    task = asyncio.ensure_future(work)
    step = 0
    await _send(report, step, None, f"{what}: started")
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=interval)
            if not task.done():
                step += 1
                await _send(report, step, None, f"{what}: running for {step * interval:g} s")
    finally:
        if not task.done():  # we were cancelled (the client cancelled the call)
            await tasks.cancel(task)
    result = task.result()
    await _send(report, step + 1, step + 1, f"{what}: done")
    return result


async def _send(report: Reporter, progress: float, total: float | None, message: str) -> None:
    try:
        await report(progress, total, message)
    except Exception as exc:  # a departed client must not fail or abandon the work
        logger.debug("progress notification not delivered: %s", type(exc).__name__)
