"""The PostgreSQL engine of ``common.db``: a psycopg 3 connection pool shared by a replica's requests.

Stores write their SQL once, in the dialect SQLite and PostgreSQL share; this module translates its
parameters (``?`` and ``:name`` become ``%s`` and ``%(name)s``, outside string literals) once per
statement text, and reads ``numeric`` results (what ``SUM`` of integers gives) back as ``int`` where
they are whole, as SQLite does. Rows support ``row[0]`` and ``row["column"]``.

Migrations: the schema's PostgreSQL scripts, tracked in a ``<name>_schema`` table and applied
under a session advisory lock keyed by the schema's name, so N replicas starting together wait for
the first to migrate and then find nothing left to do. Each migration runs in one transaction
together with its version row.

Connections are in autocommit mode: a read is one statement and one round trip; ``transaction()``
opens an explicit ``BEGIN … COMMIT`` (rolled back on any exception, cancellation included).
psycopg was chosen over asyncpg for its inline types (mypy strict), its pool and ``COPY``.
This module must not know any store's tables, and never logs the URL (it may hold a password).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any

import attrs
import psycopg
import psycopg.adapt
import psycopg.conninfo
import psycopg.rows
import psycopg.sql
import psycopg_pool

from common.db import ConnectionLost, Params, Result, Row, Rows, Schema, SchemaTooNew, checked_names

#: Literals are skipped; ``?`` and ``:name`` (not ``::``) are parameters; ``%`` must be doubled.
_TOKENS = re.compile(r"'(?:[^']|'')*'|::|\?|:([A-Za-z_]\w*)|%")
logger = logging.getLogger(__name__)
#: Pauses before listening again after the connection was lost: 0.5 s, doubling to 30 s.
RELISTEN_FIRST_S, RELISTEN_MAX_S = 0.5, 30.0
#: How long opening waits for the first connection before reporting the server unreachable.
CONNECT_TIMEOUT_S = 10.0


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """``sql`` with SQLite-style parameters in psycopg's style."""

    def swap(match: re.Match[str]) -> str:
        found = match.group(0)
        if found == "?":
            return "%s"
        if found == "%":
            return "%%"
        if match.group(1) is not None:
            return f"%({match.group(1)})s"
        return found  # a literal or a cast

    return _TOKENS.sub(swap, sql)


#: Bytes per ``COPY`` message: large enough that a 20,000-row load is a handful of writes.
COPY_CHUNK = 1 << 20


def copy_text(rows: Rows, encoding: str) -> bytes:
    """``rows`` in ``COPY``'s text format: tab-separated fields, ``\\N`` for NULL, one line a row.
    Blocking (20,000 rows take tens of milliseconds): call it in a worker thread."""
    formats = _COPY_FORMATS
    rows = rows if isinstance(rows, list | tuple) else list(rows)  # read twice on a KeyError
    try:
        lines = ["\t".join([formats[type(value)](value) for value in row]) for row in rows]
    except KeyError:  # a subclass (an enum) or a type COPY cannot write: the slow way
        lines = ["\t".join([_copy_field(value) for value in row]) for row in rows]
    if not lines:
        return b""
    lines.append("")
    return "\n".join(lines).encode(encoding)


def _escaped(text: str) -> str:
    """The four characters the text format escapes (faster as four scans than one regex)."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def _null(_: None) -> str:
    return "\\N"


def _boolean(value: bool) -> str:  # before int: True is an int, and PostgreSQL spells it "t"
    return "t" if value else "f"


#: By exact type: one dictionary lookup a field, where ``isinstance`` tests took twice as long.
_COPY_FORMATS: dict[type, Callable[[Any], str]] = {
    int: str, str: _escaped, type(None): _null, float: repr, bool: _boolean,
}  # fmt: skip


def _copy_field(value: Any) -> str:
    if value is None:
        return _null(value)
    if isinstance(value, bool):
        return _boolean(value)
    # The base type's own text: str() of an enum member would give its name.
    if isinstance(value, str):
        return _escaped(str.__str__(value))
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value)
    raise TypeError(f"COPY cannot write a value of type {type(value).__name__}")


class PgRow(tuple[Any, ...]):
    """A row by position or by column name, like ``sqlite3.Row``."""

    _index: dict[str, int]

    def __new__(cls, values: Sequence[Any], index: dict[str, int]) -> PgRow:
        row = super().__new__(cls, values)
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return super().__getitem__(self._index[key])
        return super().__getitem__(key)

    def keys(self) -> list[str]:
        return list(self._index)


def _row_factory(cursor: Any) -> psycopg.rows.RowMaker[PgRow]:
    description = cursor.description or []
    index = {column.name: i for i, column in enumerate(description)}

    def make(values: Sequence[Any]) -> PgRow:
        return PgRow(values, index)

    return make


class _WholeNumberLoader(psycopg.adapt.Loader):
    """``numeric`` as ``int`` when it is whole (``SUM`` of integers), else ``float``."""

    def load(self, data: Any) -> int | float:
        text = bytes(data).decode("ascii")
        number = float(text)
        return int(text) if text.lstrip("-").isdigit() else number


async def _configure(conn: psycopg.AsyncConnection[Any]) -> None:
    conn.adapters.register_loader("numeric", _WholeNumberLoader)


@attrs.define(eq=False)
class PgConnection:
    """One pooled connection inside a transaction, speaking ``common.db.Connection``."""

    raw: psycopg.AsyncConnection[Any]

    async def execute(self, sql: str, params: Params = ()) -> Result:
        cursor = self.raw.cursor(row_factory=_row_factory)
        async with cursor:
            await cursor.execute(translate(sql), params or None)
            rows: list[Row] = list(await cursor.fetchall()) if cursor.description else []
            return Result(rows, cursor.rowcount)

    async def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        async with self.raw.cursor() as cursor:
            await cursor.executemany(translate(sql), rows)
            return max(cursor.rowcount, 0)

    async def copy_rows(self, table: str, columns: Sequence[str], rows: Rows) -> int:
        """One ``COPY … FROM STDIN`` of the rows, encoded in a worker thread."""
        checked_names(table, columns)
        data = await asyncio.to_thread(copy_text, rows, self.raw.info.encoding)
        if not data:
            return 0
        names = psycopg.sql.SQL(", ").join(map(psycopg.sql.Identifier, columns))
        return await self._copy(psycopg.sql.Identifier(table), names, data)

    async def _copy(
        self, table: psycopg.sql.Identifier, names: psycopg.sql.Composable, data: bytes
    ) -> int:
        statement = psycopg.sql.SQL("COPY {} ({}) FROM STDIN").format(table, names)
        async with self.raw.cursor() as cursor:
            async with cursor.copy(statement) as copy:
                view = memoryview(data)
                for start in range(0, len(view), COPY_CHUNK):
                    await copy.write(view[start : start + COPY_CHUNK])
            return cursor.rowcount

    async def lock(self, key: str) -> None:
        """Serialise, across every replica, the transactions that lock ``key``, until commit."""
        await self.raw.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))


@attrs.define(eq=False)
class PgDatabase:
    """Open with ``PgDatabase.open(url, schema)``; close with ``close()``."""

    pool: psycopg_pool.AsyncConnectionPool[psycopg.AsyncConnection[Any]]
    location: str
    _url: str = attrs.field(repr=False)
    backend = "postgresql"

    @classmethod
    async def open(cls, url: str, schema: Schema, *, pool_size: int = 10) -> PgDatabase:
        pool = psycopg_pool.AsyncConnectionPool(
            url,
            min_size=1,
            max_size=max(pool_size, 2),
            kwargs={"autocommit": True},
            configure=_configure,
            open=False,
            name=schema.name,
        )
        await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        try:
            async with pool.connection() as conn:
                await migrate(conn, schema)
        except BaseException:
            await pool.close()
            raise
        return cls(pool, public_location(url), url)

    async def close(self) -> None:
        await self.pool.close()

    def data_version(self) -> int | None:
        """None: another replica's commit is seen only by asking the server (a round trip)."""
        return None

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[PgConnection]:
        async with self.pool.connection() as conn, conn.transaction():
            yield PgConnection(conn)

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled connection outside any transaction (``LISTEN`` takes its own, unpooled)."""
        async with self.pool.connection() as conn:
            yield conn

    async def notify(self, channel: str, payload: str) -> None:
        """Tell every connection listening on ``channel`` (this replica's and the others')."""
        async with self.pool.connection() as conn:
            await conn.execute("SELECT pg_notify(%s, %s)", (channel, payload))

    @contextlib.asynccontextmanager
    async def listen(self, channel: str) -> AsyncIterator[AsyncIterator[str]]:
        """The payloads notified on ``channel`` from now on, over a connection of its own (a
        pooled one would go back to the pool still listening). Listening has begun when this
        context is entered; ``ConnectionLost`` when the server cannot be reached or goes away."""
        try:
            conn = await psycopg.AsyncConnection.connect(self._url, autocommit=True)
        except psycopg.OperationalError as exc:
            raise ConnectionLost(self.location) from exc
        try:
            listen = psycopg.sql.SQL("LISTEN {}").format(psycopg.sql.Identifier(channel))
            await conn.execute(listen)
            yield _payloads(conn, self.location)
        finally:
            await conn.close()

    async def relay(
        self,
        channel: str,
        deliver: Callable[[str], Awaitable[None]],
        *,
        listening: asyncio.Event,
    ) -> None:
        """Hand every payload notified on ``channel`` to ``deliver``, until cancelled. A lost
        connection is listened on again after a growing pause (what was notified meanwhile is
        missed); ``listening`` is set each time listening has begun."""
        pause = RELISTEN_FIRST_S
        while True:
            try:
                async with self.listen(channel) as notes:
                    listening.set()
                    pause = RELISTEN_FIRST_S
                    async for payload in notes:
                        await deliver(payload)
            except ConnectionLost as exc:
                logger.warning("%s: %s; listening again in %.1f s", channel, exc, pause)
            await asyncio.sleep(pause)
            pause = min(pause * 2, RELISTEN_MAX_S)

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        async with self.pool.connection() as conn:
            return (await PgConnection(conn).execute(sql, params)).rows

    async def write(self, sql: str, params: Params = ()) -> Result:
        async with self.transaction() as conn:
            return await conn.execute(sql, params)


async def _payloads(conn: psycopg.AsyncConnection[Any], location: str) -> AsyncIterator[str]:
    try:
        async for note in conn.notifies():
            yield note.payload
    except psycopg.OperationalError as exc:
        raise ConnectionLost(location) from exc


def public_location(url: str) -> str:
    """``postgresql://user@host:port/dbname``: the URL without its password or options."""
    parts = psycopg.conninfo.conninfo_to_dict(url)
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host', '')}{port}/{parts.get('dbname', '')}"


async def migrate(conn: psycopg.AsyncConnection[Any], schema: Schema) -> int:
    """Apply pending migrations under the schema's advisory lock; returns the version."""
    table = f"{schema.name}_schema"
    await conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (table,))
    try:
        await conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (version INTEGER NOT NULL)")
        cursor = await conn.execute(f"SELECT coalesce(max(version), 0) FROM {table}")  # noqa: S608
        found = await cursor.fetchone()
        version = int(found[0]) if found else 0
        if version > schema.version:
            raise SchemaTooNew(schema, version)
        for number in range(version, schema.version):
            async with conn.transaction():
                # One script, one simple-protocol call: function bodies hold semicolons.
                await conn.execute(schema.postgresql[number])
                await conn.execute(f"INSERT INTO {table} (version) VALUES (%s)", (number + 1,))  # noqa: S608
    finally:
        await conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (table,))
    return schema.version
