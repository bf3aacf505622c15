"""Revoking a credential ends the event streams it opened, on every replica.

A service calls :meth:`Revocations.revoke` with a credential's keys when it ends it (a sign-out, a
revoked token). The keys go at once to this app's stream registry (``common.sse``), which ends the
streams they authenticated. Replicas sharing a PostgreSQL database (:meth:`Revocations.shared`)
also ``NOTIFY`` them on the service's channel, and every replica hands what it hears to its own
registry: one message per revocation, nothing polled per stream. A key is ``kind:id`` with the id
a digest or a row id, never a secret. This module must not know any service's credentials.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import attrs
from aiohttp import web

from common import tasks
from common.sse import StreamRegistry

if TYPE_CHECKING:  # only PostgreSQL deployments load its driver
    from common.db.postgres import PgDatabase


@attrs.define(eq=False)
class Revocations:
    registry: StreamRegistry
    channel: str  # the NOTIFY channel replicas of one service share
    _db: PgDatabase | None = None

    async def revoke(self, *keys: str) -> None:
        for key in keys:
            self.registry.revoke(key)
            if self._db is not None:
                await self._db.notify(self.channel, key)

    @contextlib.asynccontextmanager
    async def shared(self, db: PgDatabase) -> AsyncIterator[None]:
        """While inside: revocations reach the replicas of ``db`` too (listening on entry)."""
        listening = asyncio.Event()

        async def deliver(key: str) -> None:
            self.registry.revoke(key)

        task = asyncio.create_task(
            db.relay(self.channel, deliver, listening=listening), name="revocation relay"
        )
        try:
            await listening.wait()
            self._db = db
            yield
        finally:
            self._db = None
            await tasks.cancel(task)


REVOCATIONS = web.AppKey("wharf.revocations", Revocations)
