"""Stopping the background tasks a service starts: cancel them, then wait until each has ended.

Every cleanup context, stream and relay that starts a task stops it the same way, here: a task
left running after its owner closed would outlive the resource it uses, and one cancelled but not
awaited would end later, unobserved. Its own cancellation is how it ends, so it is not raised; any
other exception it ended with is. This module must not start tasks or know what they do.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def cancel(*tasks: asyncio.Future[Any] | None) -> None:
    """Cancel ``tasks`` (None ones are skipped) and wait until every one has ended."""
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    for task in running:
        with contextlib.suppress(asyncio.CancelledError):
            await task
