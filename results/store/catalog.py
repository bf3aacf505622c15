"""The test catalog: each project's test cases by stable key, and the ids ingest gives their rows.

A run's case rows name their test by ``tests.id``. Ingest needs the ids of 20,000 keys at a
time, so a project's catalog is kept in memory (key → id) once read, and only keys it has never
seen cost SQL: one insert of the new rows and one read of their ids. The memory copy changes only
after the transaction that added to it commits (``commit``), so a rolled-back ingest leaves no id
behind that the database does not hold. Rows are never deleted while their project exists, so a
held id stays valid. Another replica may have added keys since a catalog was read: ingests of a
project hold its lock, and ids only grow, so they are the project's rows above the newest id held,
read before adding to a catalog held from an earlier transaction.

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
    shared: bool  # ``ids`` is the committed catalog, as read by an earlier transaction

    @classmethod
    async def open(cls, conn: Connection, catalog: TestCatalog, project_id: int) -> CatalogWrite:
        held = catalog.held(project_id)
        if held is not None:
            return cls(project_id, held, shared=True)
        return cls(project_id, await _read(conn, project_id), shared=False)

    async def test_ids(
        self, conn: Connection, run_id: int, cases: Sequence[TestCase], found: CaseKeys
    ) -> list[int]:
        """The id of every case, adding the keys the catalog lacks (first seen in ``run_id``).

        Runs under the project's ingest lock, so no other transaction adds to its catalog
        meanwhile, and ids only grow: the rows above the newest id held are all that others
        added since the catalog was read, and the rows above the newest after that are exactly
        the ones inserted here, in the order given. So the new keys are inserted without a
        conflict check, and only their ids are read back."""
        if not found.missing:
            return cast(list[int], found.ids)  # every key was known: no None among them
        newest = await asyncio.to_thread(max, self.ids.values(), default=0)
        if self.shared:  # read in an earlier transaction: other replicas may have added keys
            later = await _read_after(conn, self.project_id, newest)
            if later:
                self._add(later)
                newest = max(later.values())
        rows = await asyncio.to_thread(_new_rows, self.project_id, run_id, cases, found, self.ids)
        if rows:
            await conn.copy_rows("tests", _TEST_COLUMNS, rows.values())
            self._add(await _ids_after(conn, self.project_id, newest, list(rows)))
        return await asyncio.to_thread(_all_ids, found.keys, self.ids)

    def _add(self, ids: dict[str, int]) -> None:
        if self.shared:  # never change the committed catalog before the commit
            self.ids = dict(self.ids)
            self.shared = False
        self.ids.update(ids)


def _new_rows(
    project_id: int, run_id: int, cases: Sequence[TestCase], found: CaseKeys, known: dict[str, int]
) -> dict[str, tuple[object, ...]]:
    """A row for each key neither the catalog has nor an earlier case of the report took, by key
    (in the order of the cases)."""
    rows: dict[str, tuple[object, ...]] = {}
    for i in found.missing:
        key = found.keys[i]
        if key not in known and key not in rows:
            case = cases[i]
            rows[key] = (project_id, key, case.suite, case.classname, case.name, run_id)
    return rows


def _all_ids(keys: list[str], ids: dict[str, int]) -> list[int]:
    return [ids[key] for key in keys]


async def _read(conn: Connection, project_id: int) -> dict[str, int]:
    sql = "SELECT key, id FROM tests WHERE project_id = ?"
    return {row[0]: row[1] for row in (await conn.execute(sql, (project_id,))).rows}


async def _read_after(conn: Connection, project_id: int, newest: int) -> dict[str, int]:
    """The project's rows above ``newest``: those other processes added since."""
    sql = "SELECT key, id FROM tests WHERE project_id = ? AND id > ?"
    found = await conn.execute(sql, (project_id, newest))
    return {row[0]: row[1] for row in found.rows}


async def _ids_after(
    conn: Connection, project_id: int, newest: int, keys: list[str]
) -> dict[str, int]:
    """The ids of ``keys``, just inserted in this order: the project's ids above ``newest``."""
    sql = "SELECT id FROM tests WHERE project_id = ? AND id > ? ORDER BY id"
    ids = [row[0] for row in (await conn.execute(sql, (project_id, newest))).rows]
    if len(ids) != len(keys):  # another writer broke the project's lock: refuse, roll back
        raise RuntimeError(f"project {project_id}: {len(ids)} new test ids for {len(keys)} keys")
    return dict(zip(keys, ids, strict=True))
