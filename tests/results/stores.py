"""The store as fixtures: ``store`` on each engine in turn, ``sqlite_store`` on SQLite alone (for its
query plans). A module imports them explicitly and lists them in ``__all__``. ``old_database``
writes the SQLite file an older release left behind, for the migration tests; ``kill_mid_ingest``
kills a process inside an open ingest transaction, for the crash tests."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from common.db.sqlite import apply_migration
from results.store import SqlStore, open_store
from results.store.schema import MIGRATIONS


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[SqlStore]:
    """The store on each engine in turn."""
    async with open_store(db_url) as opened:
        yield opened


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[SqlStore]:
    """For SQLite's query plans."""
    async with open_store(tmp_path / "db" / "results.db") as opened:
        yield opened


def old_database(path: Path, version: int, rows: str) -> Path:
    """An SQLite database at ``path`` migrated only up to ``version`` (in WAL mode, as the service
    leaves it), holding what the SQL script ``rows`` inserts."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA foreign_keys = ON")
        for number in range(1, version + 1):
            apply_migration(conn, number, MIGRATIONS[number - 1])
        conn.executescript(rows)
    finally:
        conn.close()
    return path


ROOT = Path(__file__).resolve().parents[2]
KILLED_WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from results.store import open_store

    async def main(url, project, runs):
        async with open_store(url) as store:
            async with store.db.transaction() as conn:
                await conn.lock(f"results.ingest:{project}")
                await conn.execute(
                    "INSERT INTO projects (name, created_at) VALUES (?, 'now')", (project,))
                await conn.executemany(
                    "INSERT INTO runs (project_id, branch, commit_sha, created_at,"
                    " updated_at, status) SELECT id, 'b', ?, 'now', 'now', 'PASSED'"
                    " FROM projects WHERE name = ?",
                    [(str(n), project) for n in range(runs)])
                print("inside", flush=True)
                await asyncio.sleep(60)

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)


async def kill_mid_ingest(url: str, project: str, runs: int) -> None:
    """Start a process that opens the store at ``url`` and, inside one ingest transaction holding
    ``project``'s ingest lock, writes the project and ``runs`` runs; SIGKILL it there."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, url, project, str(runs)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)
        assert line.strip() == "inside"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
