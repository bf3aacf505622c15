"""The results store: the implementation on ``common.db`` of the interfaces the domain declares.

``SqlStore`` implements ``results.runstore.Store`` (what ingest, the gate and compare ask), and
``results.store.reads`` the read side's ``results.reads.ReadStore``. Domain code never imports this
package: it depends on those protocols only. ``open_store(url)`` opens the database (SQLite file or
PostgreSQL server, migrations applied) and closes it on exit; the SQL is written once for both
engines. The accounts tables have their own SQL in
``results.store.accounts`` against the same ``Database`` (``SqlStore.db``).

This package must not import HTTP code or parsers beyond their value objects and merge.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import attrs

from common.db import Database, open_database
from results.batch import IngestBatch, IngestOutcome
from results.store.catalog import TestCatalog
from results.store.queries import SqlRunQueries
from results.store.runs import write_batch
from results.store.schema import SCHEMA

__all__ = ["Database", "SqlStore", "open_store"]


@attrs.define(eq=False)
class SqlStore(SqlRunQueries):
    """``Store`` on ``common.db``: the reads of ``SqlRunQueries``, and ingest's write."""

    catalog: TestCatalog = attrs.field(factory=TestCatalog)

    async def ingest(self, batch: IngestBatch) -> IngestOutcome:
        return await write_batch(self.db, batch, self.catalog)

    def data_version(self) -> int | None:
        return self.db.data_version()

    async def patch_coverage_min(self, project_id: int) -> float | None:
        sql = "SELECT patch_coverage_min FROM projects WHERE id = ?"
        row = await self.db.fetchone(sql, (project_id,))
        return None if row is None or row[0] is None else float(row[0])

    async def set_patch_coverage_min(self, project: str, minimum: float | None) -> bool:
        sql = "UPDATE projects SET patch_coverage_min = ? WHERE name = ? RETURNING id"
        return (await self.db.write(sql, (minimum, project))).first() is not None


@contextlib.asynccontextmanager
async def open_store(
    url: str | Path, *, busy_timeout_ms: int = 5000, pool_size: int = 10
) -> AsyncIterator[SqlStore]:
    """The store at ``url`` (a SQLite path or ``postgresql://…``), created and migrated as needed."""
    async with open_database(
        url, SCHEMA, busy_timeout_ms=busy_timeout_ms, pool_size=pool_size
    ) as db:
        yield SqlStore(db)
