"""The test catalog: each project's test cases by stable key, and the ids ingest gives their rows.

A run's case rows name their test by ``tests.id``. Ingest needs the ids of 20,000 keys at a
time, so a project's catalog is kept in memory (key → id) once read, and only keys it has never
seen cost SQL: one insert of the new rows and one read of their ids. The memory copy changes only
after the transaction that added to it commits (``commit``), so a rolled-back ingest leaves no id
behind that the database does not hold. Rows are never deleted while their project exists, so a
held id stays valid; a key that another process added meanwhile is found by re-reading the
project's catalog when an insert of new keys adds fewer rows than it was given.

Memory is bounded: catalogs of the projects least recently ingested are dropped once the total
passes ``max_keys`` (a dropped one is read again, in one query, at its next ingest).
This module must not know HTTP or the parsers beyond the test case tuple.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from typing import cast

import attrs

from common.db import Connection
from results.parsers.model import TestCase
from results.store.rows import CaseKeys

#: About 100 bytes each: 250,000 keys hold 25 MB, the catalogs of a dozen large projects.
MAX_KEYS = 250_000

_TEST_COLUMNS = ("project_id", "key", "suite", "classname", "name", "first_run_id")


@attrs.define(eq=False)
class TestCatalog:
    """The committed catalogs, by project id, least recently used first."""

    __test__ = False  # not a pytest test class

    max_keys: int = MAX_KEYS
    _projects: OrderedDict[int, dict[str, int]] = attrs.field(factory=OrderedDict)
    _size: int = 0

    def held(self, project_id: int) -> dict[str, int] | None:
        return self._projects.get(project_id)

    def commit(self, project_id: int, ids: dict[str, int]) -> None:
        """Keep ``ids`` (the project's whole catalog) after the transaction that used it committed."""
        old = self._projects.pop(project_id, None)
        self._size += len(ids) - (len(old) if old is not None else 0)
        self._projects[project_id] = ids
        while self._size > self.max_keys and len(self._projects) > 1:
            _, dropped = self._projects.popitem(last=False)
            self._size -= len(dropped)


@attrs.define(eq=False)
class CatalogWrite:
    """One transaction's view of a project's catalog: the committed ids plus those it adds."""

    project_id: int
    ids: dict[str, int]  # the committed catalog itself until this transaction adds to it
    shared: bool

    @classmethod
    async def open(cls, conn: Connection, catalog: TestCatalog, project_id: int) -> CatalogWrite:
        held = catalog.held(project_id)
        if held is not None:
            return cls(project_id, held, shared=True)
        return cls(project_id, await _read(conn, project_id), shared=False)

    async def test_ids(
        self, conn: Connection, run_id: int, cases: Sequence[TestCase], found: CaseKeys
    ) -> list[int]:
        """The id of every case, adding the keys the catalog lacks (first seen in ``run_id``)."""
        if not found.missing:
            return cast(list[int], found.ids)  # every key was known: no None among them
        rows = await asyncio.to_thread(_new_rows, self.project_id, run_id, cases, found)
        newest = await _newest_id(conn)
        # A key another process added meanwhile is skipped (the only unique key is (project, key)).
        added_rows = await conn.copy_rows("tests", _TEST_COLUMNS, rows, skip_conflicts=True)
        if added_rows < len(rows):  # another process added some meanwhile
            self.ids = await _read(conn, self.project_id)
        else:
            added = await _read_after(conn, self.project_id, newest)
            if self.shared:  # never change the committed catalog before the commit
                self.ids = dict(self.ids)
            self.ids.update(added)
        self.shared = False
        return await asyncio.to_thread(_all_ids, found.keys, self.ids)


def _new_rows(
    project_id: int, run_id: int, cases: Sequence[TestCase], found: CaseKeys
) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    for i in found.missing:
        case = cases[i]
        rows.append((project_id, found.keys[i], case.suite, case.classname, case.name, run_id))
    return rows


def _all_ids(keys: list[str], ids: dict[str, int]) -> list[int]:
    return [ids[key] for key in keys]


async def _read(conn: Connection, project_id: int) -> dict[str, int]:
    sql = "SELECT key, id FROM tests WHERE project_id = ?"
    return {row[0]: row[1] for row in (await conn.execute(sql, (project_id,))).rows}


async def _newest_id(conn: Connection) -> int:
    row = (await conn.execute("SELECT coalesce(max(id), 0) FROM tests")).first()
    return int(row[0]) if row is not None else 0


async def _read_after(conn: Connection, project_id: int, newest: int) -> dict[str, int]:
    """The project's rows above the id that was the newest before: all those this transaction just
    added (ids only grow), and on PostgreSQL perhaps some another replica committed meanwhile,
    which are as valid."""
    sql = "SELECT key, id FROM tests WHERE project_id = ? AND id > ?"
    found = await conn.execute(sql, (project_id, newest))
    return {row[0]: row[1] for row in found.rows}
