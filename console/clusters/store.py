"""Where runtime clusters live between restarts: SQLite (the default), PostgreSQL, or memory.

The store holds each runtime cluster's standalone kubeconfig, a credential: the SQLite file is
created readable by the service's user only (``common.db.sqlite``), and nothing here logs a row.
The database is a ``common.db`` one, like every Wharf store's: numbered migrations, each write one
transaction. Callers validate a definition before it gets here; the store only keeps what it is
given.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import time
from typing import Protocol

import attrs
from cryptography.fernet import Fernet, InvalidToken

from common.db import Database, Schema, is_postgresql, open_database, sqlite_path
from common.sessions import Session
from console.clusters.model import StoredCluster

# Both engines: Schema.portable spells REAL and the audit id as PostgreSQL does.
SCHEMA = Schema.portable(
    "console",
    (
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
        # Sign-in sessions, used when the database is shared by replicas (SqlSessionRows).
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            username TEXT NOT NULL,
            expires REAL NOT NULL
        );
        CREATE INDEX sessions_by_expiry ON sessions(expires)
        """,
        # The durable audit trail (console.audit): every entry, never trimmed by the service.
        """
        CREATE TABLE audit (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time REAL NOT NULL,
            username TEXT NOT NULL,
            cluster TEXT,
            action TEXT NOT NULL,
            target TEXT,
            outcome TEXT NOT NULL,
            detail TEXT
        );
        CREATE INDEX audit_by_time ON audit(time)
        """,
        # Named console accounts (console.accounts, console.accountstore); groups a JSON list.
        """
        CREATE TABLE accounts (
            username TEXT PRIMARY KEY,
            password_hash TEXT NOT NULL,
            groups_json TEXT NOT NULL,
            created REAL NOT NULL
        )
        """,
        # Audit entries name the person's groups and the identity the cluster saw; a runtime
        # cluster keeps its own choice of impersonating (NULL: the console's setting decides).
        """
        ALTER TABLE audit ADD COLUMN user_groups TEXT NOT NULL DEFAULT '';
        ALTER TABLE audit ADD COLUMN impersonated INTEGER;
        ALTER TABLE clusters ADD COLUMN impersonate INTEGER
        """,
    ),
)
MIGRATIONS = SCHEMA.sqlite


class _Sealed:
    """A kubeconfig on its way into SQLite unencrypted: bound as its text, shown as ``<kubeconfig>``.

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


class Sealer:
    """Encrypts kubeconfigs for the database (Fernet: AES-128-CBC with an HMAC-SHA256 tag) under a
    key derived from ``console.clusters.store.encryption-key``; a row is useless without it."""

    PREFIX = "fernet:"

    def __init__(self, secret: str) -> None:
        key = base64.urlsafe_b64encode(hashlib.sha256(secret.encode()).digest())
        self._fernet = Fernet(key)

    def __repr__(self) -> str:
        return "Sealer(<key>)"

    def seal(self, kubeconfig: str) -> str:
        return self.PREFIX + self._fernet.encrypt(kubeconfig.encode()).decode("ascii")

    def open(self, stored: str) -> str:
        if not stored.startswith(self.PREFIX):
            return stored  # written before a key was configured
        try:
            return self._fernet.decrypt(stored.removeprefix(self.PREFIX)).decode()
        except InvalidToken:
            raise ClusterStoreKeyMismatch() from None


class ClusterStoreKeyMismatch(RuntimeError):
    def __init__(self) -> None:
        super().__init__(
            "a stored kubeconfig does not decrypt with console.clusters.store.encryption-key: "
            "the key differs from the one it was written with"
        )


class SqlClusterStore:
    """Runtime clusters in a ``common.db`` database: a SQLite file or a PostgreSQL server."""

    persistent = True

    def __init__(self, url: str, *, sealer: Sealer | None = None) -> None:
        self.url = url
        self._sealer = sealer
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
        sql = (
            "SELECT id, name, context, kubeconfig, created, impersonate FROM clusters "
            "ORDER BY created, id"
        )
        rows = await self.db.fetchall(sql)
        return [StoredCluster(r[0], r[1], r[2], self._open(r[3]), r[4], _flag(r[5])) for r in rows]

    def _seal(self, kubeconfig: str) -> object:
        return self._sealer.seal(kubeconfig) if self._sealer is not None else _Sealed(kubeconfig)

    def _open(self, stored: str) -> str:
        return self._sealer.open(stored) if self._sealer is not None else stored

    async def insert(self, cluster: StoredCluster) -> None:
        now = time.time()
        await self.db.write(
            "INSERT INTO clusters (id, name, context, kubeconfig, created, updated, impersonate) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                cluster.id,
                cluster.name,
                cluster.context,
                self._seal(cluster.kubeconfig),
                now,
                now,
                _int(cluster.impersonate),
            ),
        )

    async def update(self, cluster: StoredCluster) -> None:
        await self.db.write(
            "UPDATE clusters SET name = ?, context = ?, kubeconfig = ?, updated = ?, "
            "impersonate = ? WHERE id = ?",
            (
                cluster.name,
                cluster.context,
                self._seal(cluster.kubeconfig),
                time.time(),
                _int(cluster.impersonate),
                cluster.id,
            ),
        )

    async def delete(self, cluster_id: str) -> None:
        await self.db.write("DELETE FROM clusters WHERE id = ?", (cluster_id,))


@attrs.define(eq=False)
class SqlSessionRows:
    """The sign-in sessions (``common.sessions``) of replicas sharing a PostgreSQL store: a cookie
    issued by one works on all, and signing out ends it everywhere."""

    db: Database
    durable = True

    async def add_session(self, session: Session) -> None:
        sql = "INSERT INTO sessions (id, username, expires) VALUES (?, ?, ?)"
        await self.db.write(sql, (session.id, session.subject, session.expires))

    async def session(self, session_id: str) -> Session | None:
        sql = "SELECT username, expires FROM sessions WHERE id = ?"
        row = await self.db.fetchone(sql, (session_id,))
        return Session(session_id, row[0], float(row[1])) if row is not None else None

    async def extend_session(self, session_id: str, expires: float) -> None:
        await self.db.write("UPDATE sessions SET expires = ? WHERE id = ?", (expires, session_id))

    async def delete_session(self, session_id: str) -> None:
        await self.db.write("DELETE FROM sessions WHERE id = ?", (session_id,))

    async def delete_expired_sessions(self, now: float) -> int:
        return (await self.db.write("DELETE FROM sessions WHERE expires <= ?", (now,))).rowcount


def _int(flag: bool | None) -> int | None:
    return None if flag is None else int(flag)


def _flag(value: object) -> bool | None:
    return None if value is None else bool(value)
