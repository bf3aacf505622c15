"""Live events across replicas: every committed ingest reaches the streams of every replica.

On PostgreSQL, N replicas share one database, so a run ingested on replica A must reach the
``/events`` subscribers of replica B. Each replica announces a committed run with ``NOTIFY
results_runs, '<run id>'`` (the id only: a payload is capped at 8 kB and the row is in the database
anyway) and relays every announcement, its own included, to its hub after reading the run back, so
every replica delivers the same events in the same order. ``Last-Event-ID`` replay reads the shared
runs table and needs nothing from here. Visibility is decided by the hub as before.

A lost LISTEN connection is re-established with a growing pause (``PgDatabase.relay``); events
announced meanwhile are not pushed, and streams catch up by reconnecting with ``Last-Event-ID``.
This module must not know HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from common import tasks
from results.events import EventHub
from results.runs import RunSummary
from results.runstore import Store

if TYPE_CHECKING:  # only a PostgreSQL database comes here: SQLite services never load its driver
    from common.db.postgres import PgDatabase

CHANNEL = "results_runs"


@contextlib.asynccontextmanager
async def relay(
    db: PgDatabase, store: Store, hub: EventHub
) -> AsyncIterator[Callable[[RunSummary], Awaitable[None]]]:
    """Listen (already listening on entry) and relay to ``hub``; yields the announcer for ingest."""
    listening = asyncio.Event()

    async def deliver(payload: str) -> None:
        await _deliver(store, hub, payload)

    task = asyncio.create_task(
        db.relay(CHANNEL, deliver, listening=listening), name="results.replicas.relay"
    )
    try:
        await listening.wait()

        async def announce(run: RunSummary) -> None:
            await db.notify(CHANNEL, str(run.run_id))

        yield announce
    finally:
        await tasks.cancel(task)


async def _deliver(store: Store, hub: EventHub, payload: str) -> None:
    if not payload.isdigit():
        return
    run = await store.get_run(int(payload))
    if run is not None:
        await hub.publish(run)
