"""Live events across replicas: every committed ingest reaches the streams of every replica.

On PostgreSQL, N replicas share one database, so a run ingested on replica A must reach the
``/events`` subscribers of replica B. Each replica announces a committed run with ``NOTIFY
results_runs, '<run id>'`` (the id only: a payload is capped at 8 kB and the row is in the database
anyway) and relays every announcement, its own included, to its hub after reading the run back, so
every replica delivers the same events in the same order. ``Last-Event-ID`` replay reads the shared
runs table and needs nothing from here. Visibility is decided by the hub as before.

A lost LISTEN connection is re-established with a growing pause; events announced meanwhile are not
pushed, and streams catch up by reconnecting with ``Last-Event-ID``. This module must not know HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from common.db import ConnectionLost
from common.db.postgres import PgDatabase
from results.events import EventHub
from results.runs import RunSummary
from results.store import Store

logger = logging.getLogger(__name__)
CHANNEL = "results_runs"
#: Pauses before re-listening after the connection is lost: 0.5 s, doubling to 30 s.
RETRY_FIRST_S, RETRY_MAX_S = 0.5, 30.0


@contextlib.asynccontextmanager
async def relay(
    db: PgDatabase, store: Store, hub: EventHub
) -> AsyncIterator[Callable[[RunSummary], Awaitable[None]]]:
    """Listen (already listening on entry) and relay to ``hub``; yields the announcer for ingest."""
    listening = asyncio.Event()
    task = asyncio.create_task(_relay(db, store, hub, listening), name="results.replicas.relay")
    try:
        await listening.wait()

        async def announce(run: RunSummary) -> None:
            await db.notify(CHANNEL, str(run.run_id))

        yield announce
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _relay(db: PgDatabase, store: Store, hub: EventHub, listening: asyncio.Event) -> None:
    pause = RETRY_FIRST_S
    while True:
        try:
            async with db.listen(CHANNEL) as notes:
                listening.set()
                pause = RETRY_FIRST_S
                async for payload in notes:
                    await _deliver(store, hub, payload)
        except ConnectionLost as exc:
            logger.warning("event relay: %s; listening again in %.1f s", exc, pause)
        await asyncio.sleep(pause)
        pause = min(pause * 2, RETRY_MAX_S)


async def _deliver(store: Store, hub: EventHub, payload: str) -> None:
    if not payload.isdigit():
        return
    run = await store.get_run(int(payload))
    if run is not None:
        await hub.publish(run)
