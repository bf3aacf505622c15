"""SQL behind the dashboard pages (``results.dashboard.DashboardStore``), on the reader connection.

This module must not write, and must not decide visibility (``results.dashboard`` does).
"""

from __future__ import annotations

import attrs

from common.db import Database, Row
from results.dashboard import CaseRow, CoverageRow, ProjectOverview
from results.patch import PatchCoverage
from results.runs import Project, RunSummary, Visibility
from results.store.patches import read_patch
from results.store.queries import SqlRunQueries
from results.store.rows import RUN_COLUMNS, SELECT_RUN, project_from_row, summary_from_row

_PROJECTS = f"""
    SELECT p.id AS pid, p.name AS pname, p.visibility AS pvis, p.created_at AS pcreated,
           (SELECT count(*) FROM runs c WHERE c.project_id = p.id) AS run_count, {RUN_COLUMNS}
    FROM projects p
    LEFT JOIN runs r ON r.id = (SELECT max(id) FROM runs m WHERE m.project_id = p.id)
"""  # noqa: S608 - constants only
_RECENT = f"{SELECT_RUN} WHERE r.project_id = ? ORDER BY r.id DESC LIMIT ?"
#: A run's cases that did not pass (``status <> 'passed'`` picks the partial index).
RUN_CASES = """
    SELECT t.suite, t.classname, t.name, c.status, c.duration_ms, c.message, c.failure_type,
           c.trace, c.reruns, t.id, t.key
    FROM test_cases c JOIN tests t ON t.id = c.test_id
    WHERE c.run_id = ? AND c.status <> 'passed' AND c.status IN ('failed', 'error', 'flaky')
    ORDER BY c.status = 'flaky', c.id LIMIT ?
"""
_COVERAGE = """
    SELECT path, lines_covered, lines_valid, branches_covered, branches_valid
    FROM coverage_files WHERE run_id = ?
    ORDER BY CASE WHEN lines_valid = 0 THEN 1.0 ELSE 1.0 * lines_covered / lines_valid END, path
    LIMIT ?
"""


@attrs.define(eq=False)
class SqlDashboardStore:
    db: Database

    async def patch_files(self, run_id: int) -> PatchCoverage | None:
        return await read_patch(self.db, run_id)

    async def projects(self) -> list[ProjectOverview]:
        return [_overview(row) for row in await self.db.fetchall(f"{_PROJECTS} ORDER BY p.name")]

    async def project_overview(self, project_id: int) -> ProjectOverview | None:
        row = await self.db.fetchone(f"{_PROJECTS} WHERE p.id = ?", (project_id,))
        return _overview(row) if row is not None else None

    async def project(self, project_id: int) -> Project | None:
        sql = "SELECT id, name, visibility, created_at FROM projects WHERE id = ?"
        row = await self.db.fetchone(sql, (project_id,))
        return project_from_row(row) if row is not None else None

    async def recent_runs(self, project_id: int, *, limit: int) -> list[RunSummary]:
        rows = await self.db.fetchall(_RECENT, (project_id, limit))
        return [summary_from_row(row) for row in rows]

    async def get_run(self, run_id: int) -> RunSummary | None:
        return await SqlRunQueries(self.db).get_run(run_id)

    async def problem_cases(self, run_id: int, *, limit: int) -> list[CaseRow]:
        rows = await self.db.fetchall(RUN_CASES, (run_id, limit))
        return [CaseRow(*row) for row in rows]

    async def coverage(self, run_id: int, *, limit: int) -> tuple[list[CoverageRow], int]:
        rows = await self.db.fetchall(_COVERAGE, (run_id, limit))
        count = await self.db.fetchone(
            "SELECT count(*) FROM coverage_files WHERE run_id = ?", (run_id,)
        )
        return [CoverageRow(*row) for row in rows], int(count[0]) if count else 0


def _overview(row: Row) -> ProjectOverview:
    project = Project(row["pid"], row["pname"], Visibility(row["pvis"]), row["pcreated"])
    latest = summary_from_row(row) if row["id"] is not None else None
    return ProjectOverview(project=project, latest=latest, runs=row["run_count"])
