"""The store on both engines: migrations, ingest writes, shard merges, lookups; SQLite's plans."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import psycopg
import pytest

from common.db import SchemaTooNew
from results.batch import IngestBatch, ParsedReport, ReportKind, RunTarget
from results.errors import RunKeyConflict
from results.parsers.model import (
    BranchLine,
    CoverageReport,
    FileCoverage,
    JUnitReport,
    TestCase,
    TestCounts,
    TestStatus,
)
from results.runs import RunStatus, Visibility
from results.store import SqlStore, open_store
from results.store.dashboard import RUN_CASES
from results.store.linecodec import decode_branches, decode_lines, encode_branches, encode_lines
from results.store.queries import failing_keys_sql
from results.store.rows import PASSED_CASE_COLUMNS
from results.store.runs import PATHS_PER_DELETE
from results.store.schema import MIGRATIONS
from tests.results.stores import old_database, sqlite_store, store
from tests.results.support import RUN_TABLES

__all__ = ["sqlite_store", "store"]


def target(**changes: object) -> RunTarget:
    base: dict[str, object] = {
        "project": "p",
        "branch": "main",
        "commit": "abc1234",
        "flag": "default",
        "run_key": None,
        "build_url": None,
        "new_project_visibility": Visibility.PUBLIC,
    }
    return RunTarget(**{**base, **changes})  # type: ignore[arg-type]


def junit(*cases: tuple[str, TestStatus], tag: str = "") -> ParsedReport:
    built = tuple(TestCase("s", "C", name, status, duration_s=0.25) for name, status in cases)
    report = JUnitReport(cases=built, suites=(), counts=TestCounts.of(built), dialect="generic")
    digest = hashlib.sha256(repr((cases, tag)).encode()).hexdigest()
    return ParsedReport(ReportKind.JUNIT, "junit", "t.xml", digest, 10, junit=report)


def coverage(files: dict[str, tuple[set[int], set[int]]], tag: str = "") -> ParsedReport:
    built = tuple(
        FileCoverage(path, frozenset(cov), frozenset(unc), (BranchLine(min(cov | unc), 1, 2),))
        for path, (cov, unc) in files.items()
    )
    report = CoverageReport(
        format="lcov",
        files=built,
        lines_covered=sum(len(c) for c, _ in files.values()),
        lines_valid=sum(len(c) + len(u) for c, u in files.values()),
        branches_covered=len(built),
        branches_valid=2 * len(built),
    )
    digest = hashlib.sha256(repr((sorted(files.items()), tag)).encode()).hexdigest()
    return ParsedReport(ReportKind.COVERAGE, "jacoco", "c.info", digest, 10, coverage=report)


async def test_a_new_database_is_migrated_in_wal_with_every_table(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    async with open_store(path):
        pass
    async with open_store(path):  # reopening applies nothing twice
        pass
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()
    assert {"users", "memberships", "tokens", "sessions", *RUN_TABLES} <= tables


async def test_a_database_from_a_newer_build_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()
    with pytest.raises(SchemaTooNew):
        async with open_store(path):
            pass


async def test_a_version_1_database_keeps_its_cases_and_gains_per_upload_counts(
    tmp_path: Path,
) -> None:
    path = old_database(tmp_path / "results.db", 1, """
        INSERT INTO projects (id, name, created_at) VALUES (1, 'p', 'x');
        INSERT INTO runs (id, project_id, branch, commit_sha, created_at, updated_at, status)
            VALUES (1, 1, 'main', 'abc', 'x', 'x', 'FAILED');
        INSERT INTO uploads (id, run_id, kind, sha256, format, size, created_at)
            VALUES (1, 1, 'junit', 'h', 'junit', 1, 'x');
        INSERT INTO test_cases (run_id, upload_id, suite, classname, name, key, status, trace,
                                duration_ms)
            VALUES (1, 1, 's', 'C', 't1', 'C t1', 'passed', NULL, 1200),
                   (1, 1, 's', 'C', 't2', 'C t2', 'failed', 'at C.t2', 34);
    """)  # fmt: skip
    async with open_store(path):
        pass
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        rows = conn.execute(
            "SELECT c.id, t.key, c.status, c.trace FROM test_cases c "
            "JOIN tests t ON t.id = c.test_id ORDER BY c.id"
        ).fetchall()
        assert rows == [(1, "C t1", "passed", None), (2, "C t2", "failed", "at C.t2")]
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            conn.execute("UPDATE test_cases SET status = 'bogus' WHERE id = 1")
        counts = "SELECT tests, passed, failures, errors, skipped, flaky, duration_ms FROM uploads"
        assert conn.execute(counts).fetchall() == [(2, 1, 1, 0, 0, 0, 1234)]
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT test_id FROM test_cases WHERE run_id IN (1, 2) "
            "AND status <> 'passed' AND status IN ('failed', 'error')"
        ).fetchall()
        assert "test_cases_not_passed" in str(plan)
        conn.execute("DELETE FROM runs WHERE id = 1")  # the cascade still reaches the cases
        assert conn.execute("SELECT COUNT(*) FROM test_cases").fetchone()[0] == 0
    finally:
        conn.close()


async def test_ingest_writes_the_run_with_totals(store: SqlStore) -> None:
    report = junit(
        ("a", TestStatus.PASSED),
        ("b", TestStatus.FAILED),
        ("c", TestStatus.ERROR),
        ("d", TestStatus.SKIPPED),
        ("e", TestStatus.FLAKY),
    )
    outcome = await store.ingest(IngestBatch(target(), (report,)))
    run = outcome.run
    assert outcome.created
    assert (run.tests, run.passed, run.failures, run.errors, run.skipped, run.flaky) == (
        5,
        2,  # the flaky one passed on its rerun
        1,
        1,
        1,
        1,
    )
    assert run.status is RunStatus.FAILED
    assert run.duration_ms == 1250
    assert run.line_coverage_pct is None
    assert await store.failing_keys([run.run_id, 999]) == {run.run_id: {"C b", "C c"}, 999: set()}


async def test_every_case_is_stored_with_every_column(store: SqlStore) -> None:
    """Plain passes and all other cases go in by different statements; both keep everything."""
    cases = (
        TestCase("s", "C", "plain", TestStatus.PASSED, duration_s=0.5),
        TestCase("s", "C", "untimed", TestStatus.PASSED),
        TestCase("s", "C", "says", TestStatus.PASSED, 0.1, system_out="out"),
        TestCase("s", "C", "grumbles", TestStatus.PASSED, 0.1, system_err="err"),
        TestCase("s", "C", "rerun", TestStatus.PASSED, 0.2, reruns=2),
        TestCase("s", "C", "bad", TestStatus.FAILED, 1.0, "boom", "E", "trace", occurrence=2),
        TestCase("s", "", "off", TestStatus.SKIPPED, message="later"),
        TestCase("s", "C", "shaky", TestStatus.FLAKY, 0.3, "once", "E", "t", reruns=1),
    )
    counts = TestCounts.of(cases)
    report = JUnitReport(cases=cases, suites=(), counts=counts, dialect="generic")
    upload = ParsedReport(ReportKind.JUNIT, "junit", "t.xml", "e" * 64, 10, junit=report)
    await store.ingest(IngestBatch(target(), (upload,)))
    columns = "t.suite, t.classname, t.name, t.key, c.status, c.duration_ms, c.message, "
    columns += "c.failure_type, c.trace, c.reruns, c.system_out, c.system_err"
    rows = await store.db.fetchall(
        f"SELECT {columns} FROM test_cases c JOIN tests t ON t.id = c.test_id"  # noqa: S608
    )
    expected = {
        (c.suite, c.classname, c.name, c.key, c.status.value,
         None if c.duration_s is None else round(c.duration_s * 1000), c.message,
         c.failure_type, c.trace, c.reruns, c.system_out, c.system_err)
        for c in cases
    }  # fmt: skip
    assert {tuple(row) for row in rows} == expected
    assert len(rows) == len(cases)


async def test_shards_merge_coverage_by_line_union(store: SqlStore) -> None:
    first = coverage({"a.py": ({1, 2}, {3, 4}), "b.py": ({1}, set())})
    second = coverage({"a.py": ({3}, {1, 2, 4}), "c.py": (set(), {1, 2})})
    key = target(run_key="shards")
    await store.ingest(IngestBatch(key, (first,)))
    outcome = await store.ingest(IngestBatch(key, (second,)))
    # a.py 1,2,3 of 1-4; b.py 1 of 1; c.py 0 of 2: 4 of 7 lines.
    assert outcome.run.line_coverage_pct == pytest.approx(100 * 4 / 7)
    rows = await store.db.fetchall(
        "SELECT path, covered, uncovered FROM coverage_files ORDER BY path"
    )
    assert [tuple(r) for r in rows] == [
        ("a.py", "1-3", "4"),
        ("b.py", "1", ""),
        ("c.py", "", "1-2"),
    ]


async def test_a_shard_replaces_more_files_than_one_delete_takes(store: SqlStore) -> None:
    paths = [f"f{i}.py" for i in range(PATHS_PER_DELETE + 1)]
    key = target(run_key="shards")
    await store.ingest(IngestBatch(key, (coverage({p: ({1}, {2}) for p in paths}),)))
    await store.ingest(IngestBatch(key, (coverage({p: ({2}, {1}) for p in paths}),)))
    rows = await store.db.fetchall("SELECT path, covered, uncovered FROM coverage_files")
    assert sorted(tuple(r) for r in rows) == sorted((p, "1-2", "") for p in paths)


async def test_a_known_file_is_skipped_not_added(store: SqlStore) -> None:
    report = junit(("a", TestStatus.PASSED))
    key = target(run_key="k")
    await store.ingest(IngestBatch(key, (report,)))
    outcome = await store.ingest(IngestBatch(key, (report, junit(("b", TestStatus.PASSED)))))
    assert [d.sha256 for d in outcome.duplicates] == [report.sha256]
    assert (outcome.run.tests, outcome.run.uploads) == (2, 2)
    assert await store.run_hashes("p", "k") == {report.sha256, _sha("b")}


def _sha(name: str) -> str:
    return junit((name, TestStatus.PASSED)).sha256


async def test_a_run_key_conflict_writes_nothing(store: SqlStore) -> None:
    await store.ingest(IngestBatch(target(run_key="k"), (junit(("a", TestStatus.PASSED)),)))
    with pytest.raises(RunKeyConflict):
        await store.ingest(
            IngestBatch(target(run_key="k", flag="other"), (junit(("z", TestStatus.FAILED)),))
        )
    assert (await store.db.fetchone("SELECT COUNT(*) FROM test_cases"))[0] == 1  # type: ignore[index]


async def test_counter_only_coverage_counts_when_no_line_data_exists(store: SqlStore) -> None:
    counters = CoverageReport("jacoco", (), 30, 40, 1, 4)
    report = ParsedReport(ReportKind.COVERAGE, "jacoco", "j.xml", "f" * 64, 1, coverage=counters)
    outcome = await store.ingest(IngestBatch(target(), (report,)))
    assert outcome.run.line_coverage_pct == 75.0
    assert outcome.run.branch_coverage_pct == 25.0


async def test_latest_run_lookups(store: SqlStore) -> None:
    async def run(branch: str, commit: str, flag: str = "default") -> int:
        report = junit(("a", TestStatus.PASSED), tag=f"{branch}{commit}{flag}")
        batch = IngestBatch(target(branch=branch, commit=commit, flag=flag), (report,))
        return (await store.ingest(batch)).run.run_id

    old_main = await run("main", "1111111aaaa")
    feature = await run("feature", "2222222bbbb")
    new_main = await run("main", "3333333cccc")
    unit = await run("main", "3333333cccc", flag="unit")
    project = await store.find_project("p")
    assert project is not None
    pid = project.id

    async def latest(**kw: object) -> int | None:
        found = await store.latest_run(pid, flag=kw.pop("flag", "default"), **kw)  # type: ignore[arg-type]
        return found.run_id if found else None

    assert await latest(branch="main") == new_main
    assert await latest(branch="main", flag="unit") == unit
    assert await latest(commit="2222222bbbb") == feature
    assert await latest(commit="2222222") == feature  # a 7+ hex prefix
    assert await latest(commit="222222") is None  # too short to be a prefix
    assert await latest(branch="main", before_run_id=new_main) == old_main
    assert await latest(commit="3333333cccc", exclude_run_id=new_main) is None
    found = await store.project_run("p", flag="default", commit="2222222", branch=None)
    assert found is not None
    assert (found[0], found[1].run_id) == (project, feature)
    assert await store.project_run("q", flag="default", commit=None, branch="main") is None


def test_line_codec_round_trips() -> None:
    lines = {1, 2, 3, 5, 9, 10, 100}
    assert encode_lines(lines) == "1-3,5,9-10,100"
    assert decode_lines(encode_lines(lines)) == lines
    assert decode_lines("") == frozenset()
    branches = (BranchLine(3, 1, 2), BranchLine(7, 4, 4))
    assert decode_branches(encode_branches(branches)) == branches


_NEWEST = "EXPLAIN QUERY PLAN SELECT r.id FROM runs r WHERE r.project_id = 1 AND r.flag = 'd' AND "
_BY_NAME = (
    "EXPLAIN QUERY PLAN SELECT r.id FROM runs r JOIN projects p ON p.id = r.project_id "
    "WHERE r.project_id = (SELECT id FROM projects WHERE name = 'p') AND r.flag = 'd' AND "
)


@pytest.mark.parametrize(
    ("sql", "index"),
    [
        (_NEWEST + "r.commit_sha = 'abc' ORDER BY r.id DESC LIMIT 1", "runs_by_commit"),
        (_NEWEST + "r.branch = 'main' ORDER BY r.id DESC LIMIT 1", "runs_by_branch"),
        (_BY_NAME + "r.commit_sha = 'abc' ORDER BY r.id DESC LIMIT 1", "runs_by_commit"),
        (_BY_NAME + "r.branch = 'main' ORDER BY r.id DESC LIMIT 1", "runs_by_branch"),
    ],
)
async def test_gate_lookups_use_their_indexes(sqlite_store: SqlStore, sql: str, index: str) -> None:
    plan = " ".join(str(row[3]) for row in await sqlite_store.db.fetchall(sql))
    assert f"INDEX {index}" in plan
    assert "TEMP B-TREE" not in plan  # the newest is read off the index, not sorted


async def test_deleting_a_run_deletes_its_cases_and_coverage(store: SqlStore) -> None:
    """On PostgreSQL through the uploads: its cases have no key to the run itself (V4)."""
    kept = await store.ingest(IngestBatch(target(), (junit(("a", TestStatus.FAILED)),)))
    gone = await store.ingest(
        IngestBatch(
            target(commit="def5678"),
            (junit(("b", TestStatus.PASSED)), coverage({"a.py": ({1}, {2})})),
        )
    )
    await store.db.write("DELETE FROM runs WHERE id = ?", (gone.run.run_id,))
    for table in ("test_cases", "suites", "uploads", "coverage_files"):
        found = await store.db.fetchall(f"SELECT DISTINCT run_id FROM {table}")  # noqa: S608
        assert [row[0] for row in found] in ([kept.run.run_id], []), table


async def test_cases_and_tests_must_name_rows_that_exist(store: SqlStore) -> None:
    """SQLite by its foreign keys; PostgreSQL by triggers over all a statement's rows (V5)."""
    run = (await store.ingest(IngestBatch(target(), (junit(("a", TestStatus.PASSED)),)))).run
    case = await store.db.fetchone("SELECT upload_id, test_id FROM test_cases")
    assert case is not None
    upload_id, test_id = case[0], case[1]
    cases = [(run.run_id, upload_id, test_id, "passed", 1), (run.run_id, 999, test_id, "passed", 1)]
    tests = [(run.project_id, "k1", "s", "C", "n", run.run_id), (999, "k2", "s", "C", "n", 1)]
    refused = (sqlite3.IntegrityError, psycopg.errors.ForeignKeyViolation)
    for table, columns, rows in (
        ("test_cases", PASSED_CASE_COLUMNS, cases),
        ("tests", ("project_id", "key", "suite", "classname", "name", "first_run_id"), tests),
    ):
        with pytest.raises(refused):
            async with store.db.transaction() as conn:
                await conn.copy_rows(table, columns, rows)
        found = await store.db.fetchall(f"SELECT id FROM {table}")  # noqa: S608
        assert len(found) == 1, table


async def test_deleting_a_project_deletes_its_tests_runs_and_cases(store: SqlStore) -> None:
    kept = await store.ingest(
        IngestBatch(target(project="kept"), (junit(("a", TestStatus.PASSED)),))
    )
    gone = await store.ingest(IngestBatch(target(), (junit(("b", TestStatus.FAILED)),)))
    await store.db.write("DELETE FROM projects WHERE id = ?", (gone.run.project_id,))
    tests = await store.db.fetchall("SELECT DISTINCT project_id FROM tests")
    assert [row[0] for row in tests] == [kept.run.project_id]
    for table in ("test_cases", "uploads", "runs"):
        column = "id" if table == "runs" else "run_id"
        found = await store.db.fetchall(f"SELECT DISTINCT {column} FROM {table}")  # noqa: S608
        assert [row[0] for row in found] == [kept.run.run_id], table


@pytest.mark.parametrize("head", [_NEWEST, _BY_NAME])
async def test_the_newest_run_on_a_branch_is_read_off_an_index_on_postgresql(
    pg_url: str, head: str
) -> None:
    """PostgreSQL orders equal index keys by heap place, not id: the id must be in the index."""
    async with open_store(pg_url) as store, store.db.transaction() as conn:
        await conn.execute("SET LOCAL enable_seqscan = off")  # the tables are empty here
        await conn.execute("SET LOCAL enable_bitmapscan = off")
        sql = head.replace("EXPLAIN QUERY PLAN", "EXPLAIN") + "r.branch = 'main' "
        plan = [row[0] for row in (await conn.execute(sql + "ORDER BY r.id DESC LIMIT 1")).rows]
    assert any("Scan Backward using runs_by_branch_newest" in line for line in plan), plan
    assert not any("Sort" in line for line in plan), plan


async def test_the_failing_case_queries_use_the_run_index(sqlite_store: SqlStore) -> None:
    store = sqlite_store
    for runs in (1, 3):
        sql = "EXPLAIN QUERY PLAN " + failing_keys_sql(runs)
        plan = " ".join(str(row[3]) for row in await store.db.fetchall(sql, tuple(range(runs))))
        assert "INDEX test_cases_not_passed" in plan
    plan = " ".join(
        str(row[3]) for row in await store.db.fetchall(f"EXPLAIN QUERY PLAN {RUN_CASES}", (1, 5))
    )
    assert "INDEX test_cases_not_passed" in plan  # the dashboard's failing cases of a run


async def test_the_database_and_its_folder_are_private_to_the_service_user(tmp_path: Path) -> None:
    """It holds password hashes: 0600 for the file and its WAL/SHM files, 0700 for a new folder."""
    path = tmp_path / "data" / "results.db"
    async with open_store(path) as store:
        async with store.db.transaction() as conn:
            await conn.execute("CREATE TABLE probe (x)")
        modes = {p.name: p.stat().st_mode & 0o777 for p in path.parent.iterdir()}
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert modes["results.db"] == 0o600
    assert modes["results.db-wal"] == 0o600
    assert modes["results.db-shm"] == 0o600


async def test_a_readable_database_from_an_earlier_version_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    async with open_store(path):
        pass
    path.chmod(0o644)
    async with open_store(path):
        assert path.stat().st_mode & 0o777 == 0o600
