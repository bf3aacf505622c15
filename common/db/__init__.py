"""The database seam of the services: a small async interface with SQLite and PostgreSQL behind it.

A store (``results.store``, ``console.clusters.store``) writes its SQL once, in the dialect both
engines accept (``?`` and ``:name`` parameters, ``ON CONFLICT``, ``RETURNING``), and runs it through
a :class:`Database`: reads go to ``fetchone``/``fetchall``, every write to ``transaction()`` or
``write`` (one statement, one transaction). ``open_database(url, schema)`` picks the engine from the
URL: a path or ``sqlite:PATH`` for the embedded default, ``postgresql://…`` for a server shared by
N replicas. Both apply the schema's numbered migrations; PostgreSQL does so under an advisory lock,
so replicas starting together apply each migration once.

Rows read back support ``row[0]`` and ``row["column"]`` on both engines. This package must not
know any service's tables.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:
    from common.db.postgres import PgDatabase

Params = tuple[Any, ...] | list[Any] | dict[str, Any]
#: The rows of a bulk insert (``copy_rows``), each the values of its columns in order.
Rows = Iterable[tuple[Any, ...]]


class Row(Protocol):
    """A result row: by position or by column name (``sqlite3.Row`` and ``common.db.postgres``)."""

    def __getitem__(self, key: Any, /) -> Any: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __len__(self) -> int: ...
    def keys(self) -> list[str]: ...


@attrs.frozen
class Result:
    """What a statement returned: its rows (``RETURNING`` or a query) and the rows it changed."""

    rows: list[Row]
    rowcount: int

    def first(self) -> Row | None:
        return self.rows[0] if self.rows else None


class Connection(Protocol):
    """The connection a ``transaction()`` hands out; everything on it is one transaction."""

    async def execute(self, sql: str, params: Params = ()) -> Result: ...

    async def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        """Run ``sql`` once per row (batched); returns the number of rows changed."""

    async def copy_rows(self, table: str, columns: Sequence[str], rows: Rows) -> int:
        """Insert ``rows`` (values of ``columns``, in that order) into ``table``: the bulk write
        of an ingest. PostgreSQL streams them in one ``COPY`` instead of a statement per row;
        SQLite, where a statement costs no round trip, runs ``executemany``. Generated ids
        follow the order of ``rows``. ``rows`` is consumed off the event loop. Returns the number
        of rows added."""

    async def lock(self, key: str) -> None:
        """Hold ``key`` until this transaction ends: transactions that lock the same key, in any
        process, run one after the other (SQLite's single writer already does that for all)."""


class Database(Protocol):
    #: ``sqlite`` or ``postgresql``: for the few statements the engines spell differently.
    backend: str

    @property
    def location(self) -> str:
        """Where it lives, without credentials (``sqlite:/var/…``, ``postgresql://host/db``)."""

    def transaction(self) -> contextlib.AbstractAsyncContextManager[Connection]: ...
    async def fetchone(self, sql: str, params: Params = ()) -> Row | None: ...
    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]: ...
    async def write(self, sql: str, params: Params = ()) -> Result: ...
    async def close(self) -> None: ...

    def data_version(self) -> int | None:
        """A number that differs from the last one read whenever anyone (this process or
        another) has committed a write since, read without a round trip; None when the engine
        cannot tell without one (PostgreSQL, whose other replicas commit unseen). What a caller
        derives from reads may be kept while the number stays the same, never on None."""


@attrs.frozen
class Schema:
    """A store's numbered migrations, one script per engine for each number.

    Index ``n`` takes a database from version n to n + 1 (SQLite: ``PRAGMA user_version``;
    PostgreSQL: a row in ``<name>_schema``). Both lists have the same length: migration 3 is the
    same change on either engine.
    """

    name: str
    sqlite: tuple[str, ...]
    postgresql: tuple[str, ...]

    def __attrs_post_init__(self) -> None:
        if len(self.sqlite) != len(self.postgresql):
            raise ValueError(f"{self.name}: SQLite and PostgreSQL migrations differ in number")

    @classmethod
    def portable(cls, name: str, scripts: Sequence[str]) -> Schema:
        """Migrations written once, in SQLite's spelling, for a schema whose only differences
        between the engines are two types: ``REAL`` (PostgreSQL's ``DOUBLE PRECISION``) and the
        never-reused id ``INTEGER PRIMARY KEY AUTOINCREMENT`` (an identity column there)."""
        sqlite = tuple(scripts)
        return cls(name, sqlite, tuple(_to_postgresql(script) for script in sqlite))

    @property
    def version(self) -> int:
        return len(self.sqlite)


#: SQLite's spellings that PostgreSQL spells otherwise, for :meth:`Schema.portable`.
_POSTGRESQL_TYPES = {
    "INTEGER PRIMARY KEY AUTOINCREMENT": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    "REAL": "DOUBLE PRECISION",
}
_SQLITE_TYPE = re.compile(r"\b(?:" + "|".join(_POSTGRESQL_TYPES) + r")\b")


def _to_postgresql(script: str) -> str:
    return _SQLITE_TYPE.sub(lambda m: _POSTGRESQL_TYPES[m[0]], script)


class ConnectionLost(ConnectionError):
    """The database server cannot be reached or dropped the connection (names no credential)."""

    def __init__(self, location: str) -> None:
        super().__init__(f"lost the connection to {location}")


class SchemaTooNew(RuntimeError):
    """The database was written by a newer Wharf; refusing beats silently corrupting it."""

    def __init__(self, schema: Schema, found: int) -> None:
        super().__init__(
            f"the {schema.name} database is at schema version {found}, newer than this build "
            f"knows ({schema.version}); upgrade Wharf or point it at another database"
        )


#: Table and column names that ``copy_rows`` accepts: they are spliced into SQL, never quoted data.
_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")


def checked_names(table: str, columns: Sequence[str]) -> None:
    """Refuse a table or column name that is not a plain lower-case identifier."""
    for name in (table, *columns):
        if not _NAME.match(name):
            raise ValueError(f"not a plain SQL name: {name!r}")
    if not columns:
        raise ValueError(f"no columns to insert into {table}")


def insert_sql(table: str, columns: Sequence[str]) -> str:
    """``INSERT INTO table (columns) VALUES (?, …)``, the row statement ``copy_rows`` stands for."""
    checked_names(table, columns)
    marks = ", ".join("?" * len(columns))
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"  # noqa: S608


def is_postgresql(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def postgresql(db: Database) -> PgDatabase | None:
    """``db`` when it is PostgreSQL (for what only a shared server does: LISTEN/NOTIFY across
    replicas), else None. The driver is imported only then: SQLite services never load it."""
    if db.backend != "postgresql":
        return None
    from common.db.postgres import PgDatabase

    return db if isinstance(db, PgDatabase) else None


def sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:"))


@contextlib.asynccontextmanager
async def open_database(
    url: str | Path, schema: Schema, *, busy_timeout_ms: int = 5000, pool_size: int = 10
) -> AsyncIterator[Database]:
    """The database at ``url``, created and migrated as needed, closed on exit."""
    # Imported here: the engines import this module for its types. PostgreSQL's only when asked:
    # its driver takes a quarter of a second to import, on the loop of a service starting.
    url = str(url)
    db: Database
    if is_postgresql(url):
        from common.db.postgres import PgDatabase

        db = await PgDatabase.open(url, schema, pool_size=pool_size)
    else:
        from common.db.sqlite import SqliteDatabase

        db = await SqliteDatabase.open(sqlite_path(url), schema, busy_timeout_ms=busy_timeout_ms)
    try:
        yield db
    finally:
        await db.close()
