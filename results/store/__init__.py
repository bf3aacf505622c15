"""The results store: a small async interface, and its implementation on ``common.db``.

Domain code (ingest, gate) depends on the ``Store`` protocol only. ``open_store(url)``
opens the database (SQLite file or PostgreSQL server, migrations applied) and closes it on exit;
the SQL is written once for both engines. The accounts tables have their own SQL in
``results.store.accounts`` against the same ``Database`` (``SqlStore.db``).

This package must not import HTTP code or parsers beyond their value objects and merge.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import attrs

from common.db import Database, open_database
from results.batch import IngestBatch, IngestOutcome
from results.runs import Project, RunSummary
from results.store.catalog import TestCatalog
from results.store.queries import SqlRunQueries
from results.store.runs import write_batch
from results.store.schema import SCHEMA

__all__ = ["Database", "SqlStore", "Store", "open_store"]


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

    def data_version(self) -> int | None:
        """Changes with every commit, by anyone; None when unknown (``Database.data_version``)."""


@attrs.define(eq=False)
class SqlStore(SqlRunQueries):
    """``Store`` on ``common.db``: the reads of ``SqlRunQueries``, and ingest's write."""

    catalog: TestCatalog = attrs.field(factory=TestCatalog)

    async def ingest(self, batch: IngestBatch) -> IngestOutcome:
        return await write_batch(self.db, batch, self.catalog)

    def data_version(self) -> int | None:
        return self.db.data_version()


@contextlib.asynccontextmanager
async def open_store(
    url: str | Path, *, busy_timeout_ms: int = 5000, pool_size: int = 10
) -> AsyncIterator[SqlStore]:
    """The store at ``url`` (a SQLite path or ``postgresql://…``), created and migrated as needed."""
    async with open_database(
        url, SCHEMA, busy_timeout_ms=busy_timeout_ms, pool_size=pool_size
    ) as db:
        yield SqlStore(db)
