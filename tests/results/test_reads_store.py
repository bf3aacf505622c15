"""The read side's store on real SQLite: the test catalog, the V3 migration, and query plans."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import pytest

from common.db import Row
from results.batch import IngestBatch, ParsedReport, ReportKind, RunTarget
from results.browse import RunFilter
from results.parsers.model import JUnitReport, TestCase, TestCounts, TestStatus
from results.runs import Visibility
from results.store import SqlStore, open_store
from results.store.catalog import CatalogWrite, TestCatalog
from results.store.reads import (
    _EVIDENCE,
    _OUTCOMES,
    SqlReadStore,
    _newest_first,
    _run_filter,
)
from results.store.rows import SELECT_RUN, case_keys
from tests.results.stores import old_database, sqlite_store, store

__all__ = ["sqlite_store", "store"]


def target(project: str = "p", commit: str = "abc1234", flag: str = "default") -> RunTarget:
    return RunTarget(project, "main", commit, flag, None, None, Visibility.PUBLIC)


def junit(*names: str, status: TestStatus = TestStatus.PASSED) -> ParsedReport:
    cases = tuple(TestCase("s", "C", name, status, duration_s=0.1) for name in names)
    report = JUnitReport(cases, (), TestCounts.of(cases), "generic")
    digest = hashlib.sha256(repr((names, status)).encode()).hexdigest()
    return ParsedReport(ReportKind.JUNIT, "junit", "t.xml", digest, 1, junit=report)


async def test_ids(store: SqlStore) -> dict[str, int]:
    rows = await store.db.fetchall("SELECT key, id FROM tests")
    return {row[0]: row[1] for row in rows}


async def test_a_test_keeps_its_id_across_runs_and_projects_have_their_own(
    store: SqlStore,
) -> None:
    await store.ingest(IngestBatch(target(), (junit("a", "b"),)))
    first = await test_ids(store)
    await store.ingest(IngestBatch(target(commit="def5678"), (junit("b", "c"),)))
    second = await test_ids(store)
    assert {k: second[k] for k in first} == first
    await store.ingest(IngestBatch(target(project="q"), (junit("a"),)))
    rows = await store.db.fetchall("SELECT project_id, key FROM tests ORDER BY id")
    assert [tuple(r) for r in rows] == [(1, "C a"), (1, "C b"), (1, "C c"), (2, "C a")]
    cases = await store.db.fetchall("SELECT run_id, test_id FROM test_cases ORDER BY id")
    assert [tuple(r) for r in cases] == [(1, 1), (1, 2), (2, 2), (2, 3), (3, 4)]


async def test_a_rolled_back_ingest_leaves_no_id_in_the_catalog(store: SqlStore) -> None:
    catalog = TestCatalog()
    await store.ingest(IngestBatch(target(), (junit("a"),)))
    report = junit("a", "z").junit
    assert report is not None
    ids: list[int] = []

    async def failing_ingest() -> None:
        async with store.db.transaction() as conn:
            write = await CatalogWrite.open(conn, catalog, 1)
            found = case_keys(report, write.ids)
            ids.extend(await write.test_ids(conn, 1, report.cases, found))
            raise RuntimeError("the ingest fails after the catalog took the new key")

    with pytest.raises(RuntimeError):
        await failing_ingest()
    assert len(set(ids)) == 2
    assert catalog.held(1) is None
    assert set(await test_ids(store)) == {"C a"}


async def test_keys_another_process_added_are_found(db_url: str) -> None:
    async with open_store(db_url) as one, open_store(db_url) as other:
        await one.ingest(IngestBatch(target(), (junit("a", "b"),)))  # one's catalog: a, b
        await other.ingest(IngestBatch(target(commit="b" * 7), (junit("a", "b", "c"),)))
        await one.ingest(IngestBatch(target(commit="c" * 7), (junit("a", "c", "d"),)))
        ids = await test_ids(one)
        assert sorted(ids) == ["C a", "C b", "C c", "C d"]
        rows = await one.db.fetchall(
            "SELECT t.key FROM test_cases c JOIN tests t ON t.id = c.test_id WHERE c.run_id = 3"
        )
        assert sorted(r[0] for r in rows) == ["C a", "C c", "C d"]


async def test_a_key_twice_in_one_report_is_one_test(store: SqlStore) -> None:
    await store.ingest(IngestBatch(target(), (junit("a", "b", "a"),)))
    assert sorted(await test_ids(store)) == ["C a", "C b"]
    cases = await store.db.fetchall("SELECT test_id FROM test_cases ORDER BY id")
    assert [r[0] for r in cases] == [1, 2, 1]


def test_the_catalog_memory_is_bounded() -> None:
    catalog = TestCatalog(max_keys=3)
    catalog.commit(1, {"a": 1, "b": 2})
    catalog.commit(2, {"c": 3})
    catalog.commit(3, {"d": 4, "e": 5})  # 5 keys: the least recently ingested project goes
    assert catalog.held(1) is None
    assert catalog.held(2) == {"c": 3}
    catalog.commit(2, {"c": 3, "f": 6})  # project 2 is the most recent now
    assert catalog.held(3) is None
    assert catalog.held(2) == {"c": 3, "f": 6}


async def test_version_2_databases_gain_the_catalog_and_count_flaky_as_passed(
    tmp_path: Path,
) -> None:
    path = old_database(tmp_path / "old.db", 2, """
        INSERT INTO projects (id, name, created_at) VALUES (1, 'p', 'x'), (2, 'q', 'x');
        INSERT INTO runs (id, project_id, branch, commit_sha, created_at, updated_at, status,
                          tests, passed, flaky)
            VALUES (1, 1, 'main', 'abc', 'x', 'x', 'PASSED', 2, 1, 1),
                   (2, 1, 'main', 'abd', 'x', 'x', 'PASSED', 1, 1, 0),
                   (3, 2, 'main', 'abe', 'x', 'x', 'PASSED', 1, 1, 0);
        INSERT INTO uploads (id, run_id, kind, sha256, format, size, created_at, tests, passed,
                             flaky)
            VALUES (1, 1, 'junit', 'h1', 'junit', 1, 'x', 2, 1, 1),
                   (2, 2, 'junit', 'h2', 'junit', 1, 'x', 1, 1, 0),
                   (3, 3, 'junit', 'h3', 'junit', 1, 'x', 1, 1, 0);
        INSERT INTO test_cases (run_id, upload_id, suite, classname, name, key, status, reruns)
            VALUES (1, 1, 's', 'C', 't1', 'C t1', 'passed', 0),
                   (1, 1, 's', 'C', 't2', 'C t2', 'flaky', 1),
                   (2, 2, 's2', 'C', 't1', 'C t1', 'passed', 0),
                   (3, 3, 's', 'C', 't1', 'C t1', 'passed', 0);
    """)  # fmt: skip
    async with open_store(path) as store:
        run = await store.get_run(1)
        assert run is not None
        assert (run.passed, run.flaky) == (2, 1)
        rows = await store.db.fetchall(
            "SELECT project_id, key, suite, first_run_id FROM tests ORDER BY id"
        )
        assert [tuple(r) for r in rows] == [
            (1, "C t1", "s", 1),
            (1, "C t2", "s", 1),
            (2, "C t1", "s", 3),
        ]
        cases = await store.db.fetchall(
            "SELECT run_id, test_id, status FROM test_cases ORDER BY id"
        )
        assert [tuple(r) for r in cases] == [
            (1, 1, "passed"),
            (1, 2, "flaky"),
            (2, 1, "passed"),
            (3, 3, "passed"),
        ]
        uploads = await store.db.fetchall("SELECT passed FROM uploads ORDER BY id")
        assert [r[0] for r in uploads] == [2, 1, 1]


def plan_of(rows: Sequence[Row]) -> str:
    return " ".join(str(row[3]) for row in rows)


@pytest.mark.parametrize(
    ("runs", "index"),
    [
        (RunFilter(), "runs_by_project"),
        (RunFilter(flag="default"), "runs_by_flag"),
        (RunFilter(branch="main", flag="default"), "runs_by_branch"),
        (RunFilter(commit="abcdef1"), "runs_by_commit"),
    ],
)
async def test_run_lists_read_an_index_newest_first(
    sqlite_store: SqlStore, runs: RunFilter, index: str
) -> None:
    store = sqlite_store
    reads = SqlReadStore(store.db)
    await reads.list_runs(1, runs, before=None, limit=5)  # it runs
    where, params = _run_filter(1, runs)
    order = _newest_first(runs)
    sql = f"EXPLAIN QUERY PLAN {SELECT_RUN} WHERE {' AND '.join(where)} ORDER BY {order} LIMIT 5"
    plan = plan_of(await store.db.fetchall(sql, tuple(params)))
    assert f"INDEX {index}" in plan
    if runs.commit is None:
        assert "TEMP B-TREE" not in plan  # the newest come off the index, nothing is sorted


async def test_history_and_evidence_use_their_indexes(sqlite_store: SqlStore) -> None:
    store = sqlite_store
    sql = "EXPLAIN QUERY PLAN " + _OUTCOMES.format(filters=" AND r.flag = :flag")
    params = {"test": 1, "project": 1, "first": 1, "limit": 10, "flag": "default"}
    plan = plan_of(await store.db.fetchall(sql, params))
    assert "INDEX runs_by_flag" in plan
    assert "INDEX test_cases_by_run_test" in plan
    assert "TEMP B-TREE" not in plan
    plan = plan_of(
        await store.db.fetchall("EXPLAIN QUERY PLAN " + _EVIDENCE.format(runs="?, ?"), (1, 2))
    )
    assert "INDEX test_cases_not_passed" in plan
    sql = "EXPLAIN QUERY PLAN SELECT run_id, test_id, status FROM test_cases WHERE run_id IN (?, ?) AND test_id IN (?)"
    plan = plan_of(await store.db.fetchall(sql, (1, 2, 3)))
    assert "INDEX test_cases_by_run_test (run_id=? AND test_id=?)" in plan
