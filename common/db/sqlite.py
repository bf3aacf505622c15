"""The SQLite engine of ``common.db``: one writer connection, one reader, WAL, numbered migrations.

Writes go through ``transaction()`` only: it holds the single writer connection under a lock for
the whole ``BEGIN IMMEDIATE … COMMIT``, so no other coroutine's statement can slip into an open
transaction, and any exception (cancellation included) rolls everything back. Reads go to a
separate ``query_only`` connection: in WAL mode it sees the last committed state and never a
half-written transaction, and it does not wait behind a long write. Whether anyone committed since
a read is told on the event loop itself, from the WAL index's header (see ``data_version``).

Every connection has foreign keys on and a busy timeout (another process, such as the ``wharf``
admin commands, may hold the lock briefly). ``synchronous=FULL``: a commit survives power loss, at
one fsync per commit. The file is created readable by the service's user only: stores keep
password hashes, token digests and kubeconfigs. Migrations are tracked by ``PRAGMA user_version``,
each applied in one transaction together with its version bump.

This module must not know any store's tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import mmap
import os
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path

import aiosqlite
import attrs

from common.db import Params, Result, Row, Rows, Schema, SchemaTooNew, insert_sql
from common.private import private_file

#: Page size of a new database file (an existing one keeps its own). Rows of results are large (a
#: test case with its trace): 16 KiB pages store 20,000 of them in 12 % less time than 4 KiB.
PAGE_SIZE = 16384


@attrs.define(eq=False)
class SqliteConnection:
    """The writer connection inside a transaction, speaking ``common.db.Connection``."""

    raw: aiosqlite.Connection

    async def execute(self, sql: str, params: Params = ()) -> Result:
        async with self.raw.execute(sql, params) as cursor:
            rows: list[Row] = list(await cursor.fetchall())
            return Result(rows, cursor.rowcount)

    async def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        """``executemany`` whose row iterable is consumed in the database thread, not on the loop."""
        before = self.raw.total_changes
        await self.raw.executemany(sql, rows)
        return self.raw.total_changes - before

    async def copy_rows(self, table: str, columns: Sequence[str], rows: Rows) -> int:
        """An ``executemany`` of the row insert: in-process, a statement per row is the bulk path."""
        sql = insert_sql(table, columns)
        return await self.executemany(sql, rows)

    async def lock(self, key: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already holds the one write lock of the file."""


@attrs.define(eq=False)
class SqliteDatabase:
    """Open with ``SqliteDatabase.open(path, schema)``; close with ``close()``."""

    path: Path
    _writer: aiosqlite.Connection
    _reader: aiosqlite.Connection
    _probe: sqlite3.Connection
    _wal_index: WalIndex | None = None
    _lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    backend = "sqlite"

    @property
    def location(self) -> str:
        return f"sqlite:{self.path}"

    @classmethod
    async def open(
        cls, path: Path, schema: Schema, *, busy_timeout_ms: int = 5000
    ) -> SqliteDatabase:
        await asyncio.to_thread(prepare, path, schema, busy_timeout_ms)
        writer = await _connect(path, busy_timeout_ms, query_only=False)
        try:
            reader = await _connect(path, busy_timeout_ms, query_only=True)
        except BaseException:
            await writer.close()
            raise
        try:
            probe = await asyncio.to_thread(_probe, path)
        except BaseException:
            await reader.close()
            await writer.close()
            raise
        return cls(path, writer, reader, probe, WalIndex.open(path))

    async def close(self) -> None:
        async with self._lock:
            if self._wal_index is not None:
                self._wal_index.close()
            self._probe.close()
            await self._reader.close()
            await self._writer.close()

    def data_version(self) -> int | None:
        """A number that changes with every commit by anyone: this process's writer and other
        processes (the ``wharf`` admin commands) alike. Read on the event loop, without a lock:
        the WAL index's header (``WalIndex``, one or two microseconds), else SQLite's
        ``PRAGMA data_version`` on a connection that never writes (about 15 µs: it opens and
        ends a read transaction, with its file locks; busy timeout 0, so it never waits, and a
        busy database answers None: nothing kept may be used)."""
        if self._wal_index is not None:
            return self._wal_index.version()
        try:
            version: int = self._probe.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.Error:
            return None
        return version

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[SqliteConnection]:
        """The writer connection inside ``BEGIN IMMEDIATE``; commit on success, else rollback."""
        async with self._lock:
            conn = self._writer
            await conn.execute("BEGIN IMMEDIATE")
            try:
                yield SqliteConnection(conn)
            except BaseException:
                # Shielded: a cancelled caller must not leave the connection inside a transaction.
                # aiosqlite runs statements in order, so the rollback precedes any later BEGIN.
                await asyncio.shield(conn.rollback())
                raise
            await asyncio.shield(conn.commit())

    # Reads make one trip to the connection's thread (execute and fetch together), not three
    # (execute, fetch, close the cursor): each trip is a thread wake-up and a loop wake-up.
    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of a statement that returns at most one (a key lookup, ``LIMIT 1``)."""
        rows = await self._reader.execute_fetchall(sql, params)
        return next(iter(rows), None)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        return list(await self._reader.execute_fetchall(sql, params))

    async def write(self, sql: str, params: Params = ()) -> Result:
        """One statement in its own transaction."""
        async with self.transaction() as conn:
            return await conn.execute(sql, params)


class StatementsOnly(logging.Filter):
    """On the ``aiosqlite`` logger: its DEBUG lines show each call with its arguments, which are
    a statement's parameters (a session's CSRF value, a token digest, a stored kubeconfig). Keep
    the statement, drop the parameters, for whoever turns DEBUG on in a host application."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_statement(arg) for arg in record.args)
        return True


def _statement(arg: object) -> object:
    if not isinstance(arg, functools.partial):
        return arg
    name = getattr(arg.func, "__name__", "call")
    sql = arg.args[0] if arg.args and isinstance(arg.args[0], str) else ""
    return f"{name}({' '.join(sql.split())!r}, ...)" if sql else f"{name}(...)"


def _quiet_parameters() -> None:
    log = logging.getLogger("aiosqlite")
    if not any(isinstance(f, StatementsOnly) for f in log.filters):
        log.addFilter(StatementsOnly())


async def _connect(path: Path, busy_timeout_ms: int, *, query_only: bool) -> aiosqlite.Connection:
    _quiet_parameters()
    conn = await aiosqlite.connect(path, isolation_level=None, timeout=busy_timeout_ms / 1000)
    conn.row_factory = sqlite3.Row
    try:
        for pragma in _pragmas(busy_timeout_ms, query_only=query_only):
            await conn.execute(pragma)
    except BaseException:
        await conn.close()
        raise
    return conn


def _probe(path: Path) -> sqlite3.Connection:
    """The ``data_version`` connection: opened here, used on the event loop thread. Its first
    read leaves the WAL index mapped and initialised for ``WalIndex``."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=0, check_same_thread=False)
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA data_version").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


#: SQLite's unix VFS keeps the WAL index in ``<database>-shm``, mapped by every connection. It
#: starts with the WAL-index header twice, 48 bytes each (sqlite.org/walformat.html): a writer
#: rewrites both at every commit (the change counter, the last frame, checksums; a restarted WAL
#: gets new salts) and a reader takes the header only when both copies agree.
WAL_INDEX_HEADER = 48
_IS_INIT = 12  # the header's "initialized" byte


@attrs.define(eq=False)
class WalIndex:
    """The WAL-index header, read from the shared memory SQLite itself uses: any commit by any
    connection of any process changes its bytes. Read as SQLite reads it (both copies must
    agree, else the header is being written: no answer), so no lock is taken and nothing can
    wait. Open only while a connection of this process holds the database: SQLite empties the
    file only when no connection has it open."""

    _map: mmap.mmap

    @classmethod
    def open(cls, database: Path) -> WalIndex | None:
        """The index of ``database``, or None when it has none to read (not in WAL mode, a
        file system without shared memory): then ``PRAGMA data_version`` answers instead."""
        try:
            fd = os.open(f"{database}-shm", os.O_RDONLY)
        except OSError:
            return None
        try:
            if os.fstat(fd).st_size < 2 * WAL_INDEX_HEADER:
                return None
            return cls(mmap.mmap(fd, 2 * WAL_INDEX_HEADER, prot=mmap.PROT_READ))
        except (OSError, ValueError):
            return None
        finally:
            os.close(fd)

    def version(self) -> int | None:
        """The header as a number; None while a writer is between its two copies."""
        header = self._map[:WAL_INDEX_HEADER]
        if header != self._map[WAL_INDEX_HEADER : 2 * WAL_INDEX_HEADER] or not header[_IS_INIT]:
            return None
        return int.from_bytes(header, "little")

    def close(self) -> None:
        self._map.close()


def _pragmas(busy_timeout_ms: int, *, query_only: bool) -> list[str]:
    pragmas = [
        "PRAGMA foreign_keys = ON",
        f"PRAGMA busy_timeout = {busy_timeout_ms:d}",
        "PRAGMA synchronous = FULL",
    ]
    if query_only:
        pragmas.append("PRAGMA query_only = ON")
    return pragmas


def prepare(path: Path, schema: Schema, busy_timeout_ms: int = 5000) -> int:
    """Create the file (private) and its directory, switch to WAL and migrate; returns the version."""
    private_file(path)
    conn = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout_ms / 1000)
    try:
        conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms:d}")
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE:d}")  # only a new, empty file takes it
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA foreign_keys = ON")
        return migrate(conn, schema)
    finally:
        conn.close()


def migrate(conn: sqlite3.Connection, schema: Schema) -> int:
    """Apply pending migrations (synchronously, on an autocommit connection); returns the version."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > schema.version:
        raise SchemaTooNew(schema, version)
    for number in range(version, schema.version):
        apply_migration(conn, number + 1, schema.sqlite[number])
    return schema.version


def apply_migration(conn: sqlite3.Connection, version: int, script: str) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in statements(script):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version:d}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def statements(script: str) -> list[str]:
    """Split a script into statements (our scripts have no semicolons inside literals)."""
    return [s.strip() for s in script.split(";") if s.strip()]
