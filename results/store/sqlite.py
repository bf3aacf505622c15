"""The SQLite database of the results service: one writer connection, one reader, WAL.

Writes go through ``transaction()`` only: it holds the single writer connection under a lock for
the whole ``BEGIN IMMEDIATE … COMMIT``, so no other coroutine's statement can slip into an open
transaction, and any exception (cancellation included) rolls everything back. Reads go to a
separate ``query_only`` connection: in WAL mode it sees the last committed state and never a
half-written ingest, and it does not wait behind a long write.

Every connection has foreign keys on and a busy timeout (another process, such as the ``wharf
results`` admin commands, may hold the lock briefly). ``synchronous=FULL``: a committed ingest
survives power loss, at one fsync per commit, which ingest rates easily afford.

This module must not know the tables: the SQL lives in ``runs`` (and ``accounts``).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import aiosqlite
import attrs

from common.private import private_file
from results.store.schema import migrate

Params = tuple[Any, ...] | dict[str, Any]
#: Page size of a new database file (an existing one keeps its own).
PAGE_SIZE = 16384


@attrs.define(eq=False)
class Database:
    """Open with ``Database.open(path)``; close with ``close()`` (``open_store`` does both)."""

    path: Path
    _writer: aiosqlite.Connection
    _reader: aiosqlite.Connection
    _lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)

    @classmethod
    async def open(cls, path: Path, *, busy_timeout_ms: int = 5000) -> Database:
        await asyncio.to_thread(_prepare, path, busy_timeout_ms)
        writer = await _connect(path, busy_timeout_ms, query_only=False)
        try:
            reader = await _connect(path, busy_timeout_ms, query_only=True)
        except BaseException:
            await writer.close()
            raise
        return cls(path, writer, reader)

    async def close(self) -> None:
        async with self._lock:
            await self._reader.close()
            await self._writer.close()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """The writer connection inside ``BEGIN IMMEDIATE``; commit on success, else rollback."""
        async with self._lock:
            conn = self._writer
            await conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                # Shielded: a cancelled caller must not leave the connection inside a transaction.
                # aiosqlite runs statements in order, so the rollback precedes any later BEGIN.
                await asyncio.shield(conn.rollback())
                raise
            await asyncio.shield(conn.commit())

    async def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        async with self._reader.execute(sql, params) as cursor:
            row: sqlite3.Row | None = await cursor.fetchone()
            return row

    async def fetchall(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        async with self._reader.execute(sql, params) as cursor:
            return list(await cursor.fetchall())

    async def write(self, sql: str, params: Params = ()) -> Written:
        """One statement in its own transaction."""
        async with self.transaction() as conn, conn.execute(sql, params) as cursor:
            return Written(rowid=cursor.lastrowid, rowcount=cursor.rowcount)


@attrs.frozen
class Written:
    """``rowid`` of the inserted row (INSERT only) and the number of rows changed."""

    rowid: int | None
    rowcount: int


async def executemany(conn: aiosqlite.Connection, sql: str, rows: Iterable[Params]) -> None:
    """``executemany`` whose row iterable is consumed in the database thread, not on the loop."""
    await conn.executemany(sql, rows)


async def _connect(path: Path, busy_timeout_ms: int, *, query_only: bool) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None, timeout=busy_timeout_ms / 1000)
    conn.row_factory = sqlite3.Row
    try:
        for pragma in _pragmas(busy_timeout_ms, query_only=query_only):
            await conn.execute(pragma)
    except BaseException:
        await conn.close()
        raise
    return conn


def _pragmas(busy_timeout_ms: int, *, query_only: bool) -> list[str]:
    pragmas = [
        "PRAGMA foreign_keys = ON",
        f"PRAGMA busy_timeout = {busy_timeout_ms:d}",
        "PRAGMA synchronous = FULL",
    ]
    if query_only:
        pragmas.append("PRAGMA query_only = ON")
    return pragmas


def _prepare(path: Path, busy_timeout_ms: int) -> None:
    """Create the file and its directory, private to this user (it holds password hashes), switch
    to WAL (persistent) and apply migrations."""
    private_file(path)
    conn = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout_ms / 1000)
    try:
        conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms:d}")
        # Only a new, empty file takes it: rows here are large (a test case with its trace), and
        # 16 KiB pages store 20,000 of them in 12 % less time than SQLite's default 4 KiB.
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE:d}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(conn)
    finally:
        conn.close()
