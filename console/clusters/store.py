"""Where runtime clusters live between restarts: SQLite (the default) or memory.

The store holds each runtime cluster's standalone kubeconfig, a credential: the SQLite file is
created readable by the service's user only, and nothing here logs a row. SQLite is used the way
every Wharf store uses it: one connection (the single writer), WAL, numbered migrations tracked by
``PRAGMA user_version``, each write one transaction. Callers validate a definition before it gets
here; the store only keeps what it is given.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Protocol

import aiosqlite

from common.private import private_file
from console.clusters.model import StoredCluster

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE clusters (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        context TEXT NOT NULL,
        kubeconfig TEXT NOT NULL,
        created REAL NOT NULL,
        updated REAL NOT NULL
    )
    """,
)


class _Sealed:
    """A kubeconfig on its way into SQL: bound as its text, shown as ``<kubeconfig>``.

    aiosqlite logs every call with its parameters at DEBUG level; this keeps the credential out of
    that line without touching the library's logger.
    """

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    def __repr__(self) -> str:
        return "<kubeconfig>"

    def __conform__(self, protocol: object) -> str:
        return self._text


class ClusterStore(Protocol):
    backend: str
    persistent: bool
    location: str | None

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def ping(self) -> None: ...
    async def all(self) -> list[StoredCluster]: ...
    async def insert(self, cluster: StoredCluster) -> None: ...
    async def update(self, cluster: StoredCluster) -> None: ...
    async def delete(self, cluster_id: str) -> None: ...


class MemoryClusterStore:
    """Runtime clusters for this process's lifetime only (``persistent`` says so)."""

    backend = "memory"
    persistent = False
    location: str | None = None

    def __init__(self) -> None:
        self._rows: dict[str, StoredCluster] = {}

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def ping(self) -> None:
        return None

    async def all(self) -> list[StoredCluster]:
        return list(self._rows.values())

    async def insert(self, cluster: StoredCluster) -> None:
        self._rows[cluster.id] = cluster

    async def update(self, cluster: StoredCluster) -> None:
        self._rows[cluster.id] = cluster

    async def delete(self, cluster_id: str) -> None:
        self._rows.pop(cluster_id, None)


class SqliteClusterStore:
    backend = "sqlite"
    persistent = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self.location: str | None = str(path)
        self._db: aiosqlite.Connection | None = None

    async def open(self) -> None:
        # Created empty and private before SQLite opens it: it holds kubeconfigs.
        await asyncio.to_thread(private_file, self.path)
        db = await aiosqlite.connect(self.path)
        try:
            await db.execute("PRAGMA journal_mode=WAL")
            await db.execute("PRAGMA foreign_keys=ON")
            await db.execute("PRAGMA busy_timeout=5000")
            await _migrate(db)
        except BaseException:
            await db.close()
            raise
        self._db = db

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("the cluster store is not open")
        return self._db

    async def ping(self) -> None:
        async with self.db.execute("SELECT count(*) FROM clusters") as cur:
            await cur.fetchone()

    async def all(self) -> list[StoredCluster]:
        sql = "SELECT id, name, context, kubeconfig, created FROM clusters ORDER BY created, id"
        async with self.db.execute(sql) as cur:
            rows = await cur.fetchall()
        return [StoredCluster(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    async def insert(self, cluster: StoredCluster) -> None:
        now = time.time()
        await self.db.execute(
            "INSERT INTO clusters (id, name, context, kubeconfig, created, updated) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (cluster.id, cluster.name, cluster.context, _Sealed(cluster.kubeconfig), now, now),
        )
        await self.db.commit()

    async def update(self, cluster: StoredCluster) -> None:
        await self.db.execute(
            "UPDATE clusters SET name = ?, context = ?, kubeconfig = ?, updated = ? WHERE id = ?",
            (cluster.name, cluster.context, _Sealed(cluster.kubeconfig), time.time(), cluster.id),
        )
        await self.db.commit()

    async def delete(self, cluster_id: str) -> None:
        await self.db.execute("DELETE FROM clusters WHERE id = ?", (cluster_id,))
        await self.db.commit()


async def _migrate(db: aiosqlite.Connection) -> None:
    async with db.execute("PRAGMA user_version") as cur:
        row = await cur.fetchone()
    version = int(row[0]) if row else 0
    if version > len(MIGRATIONS):
        raise RuntimeError(
            f"the cluster store is at schema version {version}, newer than this build knows"
        )
    for number, sql in enumerate(MIGRATIONS[version:], start=version + 1):
        await db.execute("BEGIN")
        await db.execute(sql)
        await db.execute(f"PRAGMA user_version = {number}")
        await db.commit()
