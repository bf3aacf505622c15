"""SQL behind the live-event hub: who belongs to a project, and the runs a reconnecting stream missed.

Implements ``results.events.EventStore`` on the results ``Database`` (reader connection only, so a
replay never waits behind an ingest). This module must not write.
"""

from __future__ import annotations

import attrs

from common.db import Database
from results.runs import RunSummary
from results.store.accounts import SqlAccountStore
from results.store.rows import SELECT_RUN, summary_from_row

# The newest ``limit`` runs above the id, handed out oldest first.
_RECENT = f"""
    SELECT * FROM (
        {SELECT_RUN} WHERE r.id > ? ORDER BY r.id DESC LIMIT ?
    ) AS recent ORDER BY id
"""  # noqa: S608 - constants only


@attrs.define(eq=False)
class SqlEventStore:
    db: Database

    async def member_ids(self, project_id: int) -> frozenset[int]:
        return await SqlAccountStore(self.db).member_ids(project_id)

    async def recent_runs_after(self, run_id: int, *, limit: int) -> list[RunSummary]:
        rows = await self.db.fetchall(_RECENT, (run_id, limit))
        return [summary_from_row(row) for row in rows]
