"""The results store: a small async interface, and its SQLite implementation behind ``open_store``.

Domain code (ingest, gate, events) depends on the ``Store`` protocol only, so a PostgreSQL
implementation can follow without touching it. ``open_store(path)`` opens the SQLite one (WAL,
foreign keys, migrations applied) and closes it on exit. The accounts tables have their own SQL in
``results.store.accounts`` against the same ``Database`` (``SqliteStore.db``).

This package must not import HTTP code or parsers beyond their value objects and merge.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import attrs

from results.batch import IngestBatch, IngestOutcome
from results.runs import Project, RunSummary
from results.store import queries
from results.store.catalog import TestCatalog
from results.store.runs import write_batch
from results.store.sqlite import Database

__all__ = ["Database", "SqliteStore", "Store", "open_store"]


class Store(Protocol):
    async def ingest(self, batch: IngestBatch) -> IngestOutcome:
        """Write a batch into its run in one transaction (creating project and run as needed)."""

    async def find_project(self, name: str) -> Project | None: ...

    async def get_run(self, run_id: int) -> RunSummary | None: ...

    async def latest_run(
        self,
        project_id: int,
        *,
        flag: str,
        commit: str | None = None,
        branch: str | None = None,
        exclude_run_id: int | None = None,
        before_run_id: int | None = None,
    ) -> RunSummary | None:
        """Newest run of the project and flag on ``commit`` (prefix of 7+ hex allowed), else
        on ``branch``."""

    async def project_run(
        self, project: str, *, flag: str, commit: str | None, branch: str | None
    ) -> tuple[Project, RunSummary] | None:
        """``latest_run`` by project name, together with the project."""

    async def failing_keys(self, run_ids: Sequence[int]) -> Mapping[int, frozenset[str]]:
        """Keys of the failed and errored test cases, per run."""

    async def run_hashes(self, project: str, run_key: str) -> frozenset[str]:
        """sha256 of the files already in the run ``run_key`` names (empty if none)."""

    async def runs_after(self, run_id: int, *, limit: int) -> list[RunSummary]:
        """Runs newer than ``run_id``, oldest first (Last-Event-ID replay)."""


@attrs.define(eq=False)
class SqliteStore:
    db: Database
    catalog: TestCatalog = attrs.field(factory=TestCatalog)

    async def ingest(self, batch: IngestBatch) -> IngestOutcome:
        return await write_batch(self.db, batch, self.catalog)

    async def find_project(self, name: str) -> Project | None:
        return await queries.find_project(self.db, name)

    async def get_run(self, run_id: int) -> RunSummary | None:
        return await queries.get_run(self.db, run_id)

    async def latest_run(
        self,
        project_id: int,
        *,
        flag: str,
        commit: str | None = None,
        branch: str | None = None,
        exclude_run_id: int | None = None,
        before_run_id: int | None = None,
    ) -> RunSummary | None:
        return await queries.latest_run(
            self.db,
            project_id,
            flag=flag,
            commit=commit,
            branch=branch,
            exclude_run_id=exclude_run_id,
            before_run_id=before_run_id,
        )

    async def project_run(
        self, project: str, *, flag: str, commit: str | None, branch: str | None
    ) -> tuple[Project, RunSummary] | None:
        return await queries.project_run(self.db, project, flag=flag, commit=commit, branch=branch)

    async def failing_keys(self, run_ids: Sequence[int]) -> Mapping[int, frozenset[str]]:
        return await queries.failing_keys(self.db, run_ids)

    async def run_hashes(self, project: str, run_key: str) -> frozenset[str]:
        return await queries.run_hashes(self.db, project, run_key)

    async def runs_after(self, run_id: int, *, limit: int) -> list[RunSummary]:
        return await queries.runs_after(self.db, run_id, limit=limit)


@contextlib.asynccontextmanager
async def open_store(path: Path, *, busy_timeout_ms: int = 5000) -> AsyncIterator[SqliteStore]:
    """The SQLite store at ``path`` (created and migrated as needed), closed on exit."""
    db = await Database.open(path, busy_timeout_ms=busy_timeout_ms)
    try:
        yield SqliteStore(db)
    finally:
        await db.close()
