"""The store's transactions: foreign keys, read-only reads, rollback on error, cancel and SIGKILL."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from results.store import SqlStore
from tests.results.stores import kill_mid_ingest, sqlite_store, store
from tests.results.support import RUN_TABLES, row_counts

__all__ = ["sqlite_store", "store"]


async def test_connections_enforce_foreign_keys(sqlite_store: SqlStore) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        await sqlite_store.db.write(
            "INSERT INTO runs (project_id, branch, commit_sha, created_at, updated_at, status) "
            "VALUES (999, 'b', 'c', 'now', 'now', 'PASSED')"
        )


async def test_reads_cannot_write(sqlite_store: SqlStore) -> None:
    with pytest.raises(sqlite3.OperationalError):
        await sqlite_store.db.fetchone("DELETE FROM projects")


async def test_an_error_inside_a_transaction_rolls_everything_back(store: SqlStore) -> None:
    async def failing_write() -> None:
        async with store.db.transaction() as conn:
            await conn.execute("INSERT INTO projects (name, created_at) VALUES ('gone', 'now')")
            raise RuntimeError("mid-write failure")

    with pytest.raises(RuntimeError):
        await failing_write()
    assert await store.find_project("gone") is None
    await store.db.write("INSERT INTO projects (name, created_at) VALUES ('next', 'now')")
    assert await store.find_project("next") is not None


async def test_a_cancelled_transaction_rolls_back_and_frees_the_writer(
    store: SqlStore,
) -> None:
    inside = asyncio.Event()

    async def slow_writer() -> None:
        async with store.db.transaction() as conn:
            await conn.execute("INSERT INTO projects (name, created_at) VALUES ('half', 'now')")
            inside.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(slow_writer())
    await inside.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await store.find_project("half") is None
    await store.db.write("INSERT INTO projects (name, created_at) VALUES ('later', 'now')")
    assert await store.find_project("later") is not None


async def test_a_process_killed_mid_ingest_leaves_nothing(tmp_path: Path) -> None:
    """SIGKILL while the ingest transaction is open: the next open sees no trace of it."""
    path = tmp_path / "results.db"
    await kill_mid_ingest(str(path), "killed", 5000)
    assert row_counts(path) == dict.fromkeys(RUN_TABLES, 0)
