"""Where runtime clusters live between restarts: SQLite (the default), PostgreSQL, or memory.

The store holds each runtime cluster's standalone kubeconfig, a credential: the SQLite file is
created readable by the service's user only (``common.db.sqlite``), and nothing here logs a row.
The database is a ``common.db`` one, like every Wharf store's: numbered migrations, each write one
transaction. Callers validate a definition before it gets here; the store only keeps what it is
given.
"""

from __future__ import annotations

import contextlib
import time
from typing import Protocol

from common.db import Database, Schema, is_postgresql, open_database, sqlite_path
from console.clusters.model import StoredCluster

SCHEMA = Schema(
    name="console",
    sqlite=(
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
    ),
    postgresql=(
        """
        CREATE TABLE clusters (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            context TEXT NOT NULL,
            kubeconfig TEXT NOT NULL,
            created DOUBLE PRECISION NOT NULL,
            updated DOUBLE PRECISION NOT NULL
        )
        """,
    ),
)
MIGRATIONS = SCHEMA.sqlite


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


class SqlClusterStore:
    """Runtime clusters in a ``common.db`` database: a SQLite file or a PostgreSQL server."""

    persistent = True

    def __init__(self, url: str) -> None:
        self.url = url
        self.backend = "postgresql" if is_postgresql(url) else "sqlite"
        self.location: str | None = str(sqlite_path(url)) if self.backend == "sqlite" else None
        self._stack = contextlib.AsyncExitStack()
        self._db: Database | None = None

    async def open(self) -> None:
        self._db = await self._stack.enter_async_context(open_database(self.url, SCHEMA))
        if self.backend == "postgresql":
            self.location = self._db.location.removeprefix("postgresql:")

    async def close(self) -> None:
        self._db = None
        await self._stack.aclose()

    @property
    def db(self) -> Database:
        if self._db is None:
            raise RuntimeError("the cluster store is not open")
        return self._db

    async def ping(self) -> None:
        await self.db.fetchone("SELECT count(*) FROM clusters")

    async def all(self) -> list[StoredCluster]:
        sql = "SELECT id, name, context, kubeconfig, created FROM clusters ORDER BY created, id"
        return [StoredCluster(r[0], r[1], r[2], r[3], r[4]) for r in await self.db.fetchall(sql)]

    async def insert(self, cluster: StoredCluster) -> None:
        now = time.time()
        await self.db.write(
            "INSERT INTO clusters (id, name, context, kubeconfig, created, updated) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (cluster.id, cluster.name, cluster.context, _Sealed(cluster.kubeconfig), now, now),
        )

    async def update(self, cluster: StoredCluster) -> None:
        await self.db.write(
            "UPDATE clusters SET name = ?, context = ?, kubeconfig = ?, updated = ? WHERE id = ?",
            (cluster.name, cluster.context, _Sealed(cluster.kubeconfig), time.time(), cluster.id),
        )

    async def delete(self, cluster_id: str) -> None:
        await self.db.write("DELETE FROM clusters WHERE id = ?", (cluster_id,))
