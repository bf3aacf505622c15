"""The ingest write: one batch of parsed reports into one run, in ONE transaction.

Everything an ingest changes (the project on first sight, the run, its uploads, suites, test
cases, the line-union coverage and the run's totals) is written between one ``BEGIN``
and its ``COMMIT``: a failed, cancelled or killed ingest leaves nothing, a completed one is fully
there. Rows are built and coverage is merged in worker threads, and the bulk tables are loaded
with ``copy_rows`` (``COPY`` on PostgreSQL), so the event loop only waits.

Shards: a ``run_key`` names a run within a project; later uploads with the same key join it. A
file whose sha256 the run already holds is skipped, never counted twice. Totals are recomputed
from the stored rows after every write (test counts summed over the run's uploads, each of which
holds the counts of its own cases; coverage over the merged files), so they always equal what the
run holds.

This module must not parse reports or decide gate outcomes.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from common.db import Connection, Database, Result
from results.batch import IngestBatch, IngestOutcome, ParsedReport, RunTarget
from results.errors import RunKeyConflict
from results.parsers.coverage import merge_coverage
from results.parsers.model import CoverageReport
from results.runs import Project, RunSummary
from results.store import patches
from results.store.catalog import CatalogWrite, TestCatalog
from results.store.linecodec import file_from_row, file_row
from results.store.rows import (
    CASE_COLUMNS,
    COVERAGE_COLUMNS,
    PASSED_CASE_COLUMNS,
    SELECT_RUN,
    SUITE_COLUMNS,
    case_keys,
    case_rows,
    project_from_row,
    suite_rows,
    summary_from_row,
    upload_counts,
)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def write_batch(db: Database, batch: IngestBatch, catalog: TestCatalog) -> IngestOutcome:
    tests: CatalogWrite | None = None
    async with db.transaction() as conn:
        # Ingests of one project, on any replica, one at a time: a run's totals are summed from
        # its uploads and must see the other shards' rows; the catalog must not race either.
        await conn.lock(f"results.ingest:{batch.target.project}")
        project = await _project(conn, batch.target)
        run_id, created = await _run(conn, project, batch.target)
        fresh, duplicates = await _split_duplicates(conn, run_id, batch.reports)
        for report in fresh:
            if report.junit is not None and tests is None:
                tests = await CatalogWrite.open(conn, catalog, project.id)
            await _insert_report(conn, run_id, report, tests)
        coverage = [r.coverage for r in fresh if r.coverage is not None]
        if coverage:
            await _merge_coverage(conn, run_id, coverage, fresh_run=created)
        if batch.diff is not None:
            await patches.store_diff(conn, run_id, batch.diff, batch.target.base_commit)
        if batch.diff is not None or (coverage and await patches.has_diff(conn, run_id)):
            await patches.update_patch(conn, run_id)
        await _update_totals(conn, run_id)
        run = await _summary(conn, run_id)
    if tests is not None:  # committed: the ids it added exist now
        catalog.commit(project.id, tests.ids)
    return IngestOutcome(run=run, created=created, duplicates=tuple(duplicates))


async def _project(conn: Connection, target: RunTarget) -> Project:
    sql = "SELECT id, name, visibility, created_at FROM projects WHERE name = ?"
    row = (await conn.execute(sql, (target.project,))).first()
    if row is not None:
        return project_from_row(row)
    visibility, created_at = target.new_project_visibility.value, now()
    sql = "INSERT INTO projects (name, visibility, created_at) VALUES (?, ?, ?) RETURNING id"
    project_id = _new_id(await conn.execute(sql, (target.project, visibility, created_at)))
    return Project(project_id, target.project, target.new_project_visibility, created_at)


async def _run(conn: Connection, project: Project, target: RunTarget) -> tuple[int, bool]:
    if target.run_key is not None:
        sql = "SELECT id, branch, commit_sha, flag FROM runs WHERE project_id = ? AND run_key = ?"
        row = (await conn.execute(sql, (project.id, target.run_key))).first()
        if row is not None:
            if (row["branch"], row["commit_sha"], row["flag"]) != (
                target.branch,
                target.commit,
                target.flag,
            ):
                raise RunKeyConflict(target, run_id=row["id"])
            return int(row["id"]), False
    stamp = now()
    sql = """
        INSERT INTO runs (project_id, branch, commit_sha, flag, run_key, build_url, created_at,
                          updated_at, status)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'PASSED') RETURNING id
    """
    params = (project.id, target.branch, target.commit, target.flag, target.run_key)
    return _new_id(await conn.execute(sql, (*params, target.build_url, stamp, stamp))), True


async def _split_duplicates(
    conn: Connection, run_id: int, reports: tuple[ParsedReport, ...]
) -> tuple[list[ParsedReport], list[ParsedReport]]:
    found = await conn.execute("SELECT sha256 FROM uploads WHERE run_id = ?", (run_id,))
    seen = {row[0] for row in found.rows}
    fresh, duplicates = [], []
    for report in reports:
        if report.sha256 in seen:
            duplicates.append(report)
        else:
            seen.add(report.sha256)
            fresh.append(report)
    return fresh, duplicates


async def _insert_report(
    conn: Connection, run_id: int, report: ParsedReport, catalog: CatalogWrite | None
) -> None:
    counters = _counters_only(report.coverage)
    sql = """
        INSERT INTO uploads (run_id, kind, sha256, filename, format, size, counter_lines_covered,
                             counter_lines_valid, counter_branches_covered,
                             counter_branches_valid, tests, passed, failures, errors, skipped,
                             flaky, duration_ms, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
    """
    head = (run_id, report.kind.value, report.sha256, report.filename, report.format, report.size)
    tests = upload_counts(report.junit)
    duration_ms = 0  # summed below, as the case rows are built
    upload_id = _new_id(await conn.execute(sql, (*head, *counters, *tests, duration_ms, now())))
    if report.junit is not None and catalog is not None:
        await conn.copy_rows("suites", SUITE_COLUMNS, suite_rows(run_id, upload_id, report.junit))
        found = await asyncio.to_thread(case_keys, report.junit, catalog.ids)
        test_ids = await catalog.test_ids(conn, run_id, report.junit.cases, found)
        rows = await asyncio.to_thread(case_rows, run_id, upload_id, report.junit, test_ids)
        # Two loads: plain passes bind half the columns (see PASSED_CASE_COLUMNS). Queries
        # read cases in id order only among those that did not pass, which keep theirs.
        await conn.copy_rows("test_cases", PASSED_CASE_COLUMNS, rows.passed)
        await conn.copy_rows("test_cases", CASE_COLUMNS, rows.others)
        sql = "UPDATE uploads SET duration_ms = ? WHERE id = ?"
        await conn.execute(sql, (rows.duration_ms, upload_id))


def _counters_only(
    report: CoverageReport | None,
) -> tuple[int | None, int | None, int | None, int | None]:
    """Totals of a report without line data (JaCoCo counters only), which no union can merge."""
    if report is None or report.files or not report.lines_valid:
        return (None, None, None, None)
    return (
        report.lines_covered,
        report.lines_valid,
        report.branches_covered,
        report.branches_valid,
    )


async def _merge_coverage(
    conn: Connection, run_id: int, reports: list[CoverageReport], *, fresh_run: bool
) -> None:
    paths = {f.path for r in reports for f in r.files}
    existing: list[CoverageReport] = []
    if not fresh_run and paths:
        sql = "SELECT path, covered, uncovered, branches FROM coverage_files WHERE run_id = ?"
        found = await conn.execute(sql, (run_id,))
        stored = [tuple(row) for row in found.rows if row[0] in paths]
        if stored:
            existing.append(await asyncio.to_thread(_stored_report, stored))
            # Merged below into rows that replace them: a bulk load cannot update in place.
            await _delete_coverage(conn, run_id, [row[0] for row in stored])
    rows = await asyncio.to_thread(_merged_rows, run_id, [*existing, *reports])
    await conn.copy_rows("coverage_files", COVERAGE_COLUMNS, rows)


#: Paths a statement deletes at most: within the 999 parameters of older SQLite builds.
PATHS_PER_DELETE = 500


async def _delete_coverage(conn: Connection, run_id: int, paths: list[str]) -> None:
    """Delete the run's rows of ``paths``: a statement per 500, not a statement per path."""
    for start in range(0, len(paths), PATHS_PER_DELETE):
        chunk = paths[start : start + PATHS_PER_DELETE]
        marks = ", ".join("?" * len(chunk))
        sql = f"DELETE FROM coverage_files WHERE run_id = ? AND path IN ({marks})"  # noqa: S608
        await conn.execute(sql, (run_id, *chunk))


def _stored_report(rows: list[tuple[str, str, str, str]]) -> CoverageReport:
    files = tuple(file_from_row(*row) for row in rows)
    return CoverageReport(format="stored", files=files, lines_covered=0, lines_valid=0,
                          branches_covered=0, branches_valid=0)  # fmt: skip


def _merged_rows(run_id: int, reports: list[CoverageReport]) -> list[tuple[object, ...]]:
    with_lines = [r for r in reports if r.files]
    if not with_lines:
        return []
    merged = with_lines[0] if len(with_lines) == 1 else merge_coverage(with_lines)
    return [(run_id, *file_row(f)) for f in merged.files]


_TOTALS = """
    UPDATE runs SET
        tests = t.tests, passed = t.passed, failures = t.failures, errors = t.errors,
        skipped = t.skipped, flaky = t.flaky, duration_ms = t.duration_ms,
        status = CASE WHEN t.failures + t.errors > 0 THEN 'FAILED' ELSE 'PASSED' END,
        lines_covered = c.lc, lines_valid = c.lv, branches_covered = c.bc, branches_valid = c.bv,
        uploads = t.n, updated_at = :now
    FROM (
        SELECT COALESCE(SUM(tests), 0) AS tests, COALESCE(SUM(passed), 0) AS passed,
               COALESCE(SUM(failures), 0) AS failures, COALESCE(SUM(errors), 0) AS errors,
               COALESCE(SUM(skipped), 0) AS skipped, COALESCE(SUM(flaky), 0) AS flaky,
               COALESCE(SUM(duration_ms), 0) AS duration_ms, COUNT(*) AS n
        FROM uploads WHERE run_id = :run
    ) AS t, (
        SELECT COALESCE(SUM(lines_covered), 0) AS lc, COALESCE(SUM(lines_valid), 0) AS lv,
               COALESCE(SUM(branches_covered), 0) AS bc, COALESCE(SUM(branches_valid), 0) AS bv
        FROM coverage_files WHERE run_id = :run
    ) AS c
    WHERE runs.id = :run
"""

# A run whose coverage came only as counters (no line data anywhere) takes the largest such
# report: counters of shards cannot be combined without double counting shared lines.
_COUNTERS_FALLBACK = """
    UPDATE runs SET
        lines_covered = u.counter_lines_covered, lines_valid = u.counter_lines_valid,
        branches_covered = u.counter_branches_covered, branches_valid = u.counter_branches_valid
    FROM (
        SELECT counter_lines_covered, counter_lines_valid, counter_branches_covered,
               counter_branches_valid
        FROM uploads WHERE run_id = :run AND counter_lines_valid > 0
        ORDER BY counter_lines_valid DESC LIMIT 1
    ) AS u
    WHERE runs.id = :run AND runs.lines_valid = 0
"""


async def _update_totals(conn: Connection, run_id: int) -> None:
    params = {"run": run_id, "now": now()}
    await conn.execute(_TOTALS, params)
    await conn.execute(_COUNTERS_FALLBACK, {"run": run_id})


_SUMMARY = f"{SELECT_RUN} WHERE r.id = ?"


async def _summary(conn: Connection, run_id: int) -> RunSummary:
    row = (await conn.execute(_SUMMARY, (run_id,))).first()
    assert row is not None
    return summary_from_row(row)


def _new_id(inserted: Result) -> int:
    """The id an ``INSERT … RETURNING id`` gave its row."""
    row = inserted.first()
    assert row is not None
    return int(row[0])
