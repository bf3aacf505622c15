"""SQL behind the read side (``results.browse``, ``trends``, ``history``, ``compare``), on the
reader connection.

Every query is bounded by the runs it looks at, never by the size of the project:
- Run lists and trends read the runs' own totals newest first off an index that holds the
  filters (``runs_by_project``, ``runs_by_flag``, ``runs_by_branch``, ``runs_by_commit``).
- A test's history walks the newest runs of its project (or flag) and looks each one up in
  ``test_cases_by_run_test``; it starts no earlier than the test's first run.
- Evidence of flakiness comes from the cases that did not pass (``test_cases_not_passed``, whose
  queries repeat ``status <> 'passed'`` so SQLite picks the partial index).
``tests/results/test_reads.py`` checks the plans. This module must not write, and must not decide
visibility (the domain modules do).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from common.db import Database, Row
from results.browse import RunFilter
from results.compare import FailingCase, FileDelta
from results.dashboard import CaseRow, ProjectOverview
from results.flakiness import Outcome
from results.history import TestRef
from results.patch import PatchCoverage
from results.runs import Project, RunSummary
from results.store.dashboard import SqlDashboardStore
from results.store.queries import SqlRunQueries, commit_clause
from results.store.rows import SELECT_RUN, summary_from_row

_TEST_COLUMNS = "t.id, t.project_id, t.key, t.suite, t.classname, t.name, t.first_run_id"
_OUTCOMES = """
    SELECT r.id, r.branch, r.commit_sha, r.flag, r.created_at, c.status, c.duration_ms,
           c.reruns, c.message
    FROM runs r JOIN test_cases c ON c.run_id = r.id AND c.test_id = :test
    WHERE r.project_id = :project AND r.id >= :first {filters}
    ORDER BY r.id DESC LIMIT :limit
"""
_EVIDENCE = """
    SELECT run_id, test_id, status, reruns FROM test_cases
    WHERE run_id IN ({runs}) AND status <> 'passed' AND status IN ('failed', 'error', 'flaky')
"""
_FAILING = f"""
    SELECT {_TEST_COLUMNS}, c.status, c.message
    FROM test_cases c JOIN tests t ON t.id = c.test_id
    WHERE c.run_id = ? AND c.status <> 'passed' AND c.status IN ('failed', 'error')
    ORDER BY c.id
"""  # noqa: S608 - constants only
_COVERAGE_PAIRS = """
    SELECT a.path, a.lines_covered, a.lines_valid, b.lines_covered, b.lines_valid
    FROM coverage_files a LEFT JOIN coverage_files b ON b.run_id = :base AND b.path = a.path
    WHERE a.run_id = :run
    UNION ALL
    SELECT b.path, NULL, NULL, b.lines_covered, b.lines_valid
    FROM coverage_files b
    WHERE b.run_id = :base
      AND NOT EXISTS (SELECT 1 FROM coverage_files a WHERE a.run_id = :run AND a.path = b.path)
"""
#: A project's flags, one index seek each (SQLite does not skip-scan without statistics).
_FLAGS = """
    WITH RECURSIVE f(flag) AS (
        SELECT min(flag) FROM runs WHERE project_id = :project
        UNION ALL
        SELECT (SELECT min(flag) FROM runs WHERE project_id = :project AND flag > f.flag)
        FROM f WHERE f.flag IS NOT NULL
    )
    SELECT flag FROM f WHERE flag IS NOT NULL
"""
#: The branches of a project's newest runs, the most recently active first.
_BRANCHES = """
    SELECT branch FROM (
        SELECT branch, id FROM runs WHERE project_id = ? ORDER BY id DESC LIMIT ?
    ) AS recent GROUP BY branch ORDER BY max(id) DESC LIMIT ?
"""
#: Branches offered are those of the newest runs: a branch quiet for longer is still reachable
#: by name, and listing it would cost a scan of every run of the project.
RECENT_RUNS_FOR_BRANCHES = 2000
#: SQLite's default LIKE escape is none; ours is backslash, so a search for ``50%`` means it.
_LIKE_ESCAPE = str.maketrans({"\\": "\\\\", "%": "\\%", "_": "\\_"})


@attrs.define(eq=False)
class SqlReadStore:
    db: Database

    async def projects(self) -> list[ProjectOverview]:
        return await SqlDashboardStore(self.db).projects()

    async def project(self, project_id: int) -> Project | None:
        return await SqlDashboardStore(self.db).project(project_id)

    async def project_overview(self, project_id: int) -> ProjectOverview | None:
        return await SqlDashboardStore(self.db).project_overview(project_id)

    async def get_run(self, run_id: int) -> RunSummary | None:
        return await SqlRunQueries(self.db).get_run(run_id)

    async def problem_cases(self, run_id: int, *, limit: int) -> list[CaseRow]:
        return await SqlDashboardStore(self.db).problem_cases(run_id, limit=limit)

    async def patch_files(self, run_id: int) -> PatchCoverage | None:
        return await SqlDashboardStore(self.db).patch_files(run_id)

    async def list_runs(
        self, project_id: int, runs: RunFilter, *, before: int | None, limit: int
    ) -> list[RunSummary]:
        where, params = _run_filter(project_id, runs)
        if before is not None:
            where.append("r.id < ?")
            params.append(before)
        sql = f"{SELECT_RUN} WHERE {' AND '.join(where)} ORDER BY {_newest_first(runs)} LIMIT ?"
        return [summary_from_row(row) for row in await self.db.fetchall(sql, (*params, limit))]

    async def trend_runs(
        self, project_id: int, *, flag: str, branch: str | None, limit: int, before: int | None
    ) -> list[RunSummary]:
        runs = RunFilter(branch=branch, flag=flag)
        return await self.list_runs(project_id, runs, before=before, limit=limit)

    async def runs_after(
        self, project_id: int, *, flag: str, branch: str | None, after: int, limit: int
    ) -> list[RunSummary]:
        where, params = _run_filter(project_id, RunFilter(branch=branch, flag=flag))
        sql = f"{SELECT_RUN} WHERE {' AND '.join(where)} AND r.id > ? ORDER BY r.id LIMIT ?"
        rows = await self.db.fetchall(sql, (*params, after, limit))
        return [summary_from_row(row) for row in rows]

    async def flags(self, project_id: int) -> list[str]:
        return [row[0] for row in await self.db.fetchall(_FLAGS, {"project": project_id})]

    async def branches(self, project_id: int, *, limit: int) -> list[str]:
        rows = await self.db.fetchall(_BRANCHES, (project_id, RECENT_RUNS_FOR_BRANCHES, limit))
        return [row[0] for row in rows]

    async def test(self, project_id: int, test_id: int) -> TestRef | None:
        sql = f"SELECT {_TEST_COLUMNS} FROM tests t WHERE t.id = ? AND t.project_id = ?"  # noqa: S608
        row = await self.db.fetchone(sql, (test_id, project_id))
        return _test(row) if row is not None else None

    async def test_by_key(self, project_id: int, key: str) -> TestRef | None:
        sql = f"SELECT {_TEST_COLUMNS} FROM tests t WHERE t.project_id = ? AND t.key = ?"  # noqa: S608
        row = await self.db.fetchone(sql, (project_id, key))
        return _test(row) if row is not None else None

    async def tests(self, test_ids: Sequence[int]) -> dict[int, TestRef]:
        if not test_ids:
            return {}
        sql = f"SELECT {_TEST_COLUMNS} FROM tests t WHERE t.id IN ({_marks(test_ids)})"  # noqa: S608
        return {row[0]: _test(row) for row in await self.db.fetchall(sql, tuple(test_ids))}

    async def search_tests(self, project_id: int, text: str, *, limit: int) -> list[TestRef]:
        sql = (
            f"SELECT {_TEST_COLUMNS} FROM tests t "  # noqa: S608 - constants only
            "WHERE t.project_id = ? AND t.key LIKE ? ESCAPE '\\' ORDER BY t.key LIMIT ?"
        )
        pattern = f"%{text.translate(_LIKE_ESCAPE)}%"
        return [_test(row) for row in await self.db.fetchall(sql, (project_id, pattern, limit))]

    async def outcomes(
        self, test: TestRef, *, flag: str | None, branch: str | None, limit: int
    ) -> list[Outcome]:
        filters = ""
        params: dict[str, object] = {
            "test": test.id,
            "project": test.project_id,
            "first": test.first_run_id,
            "limit": limit,
        }
        if flag is not None:
            filters += " AND r.flag = :flag"
            params["flag"] = flag
        if branch is not None:
            filters += " AND r.branch = :branch"
            params["branch"] = branch
        rows = await self.db.fetchall(_OUTCOMES.format(filters=filters), params)
        return [Outcome(*row) for row in rows]

    async def evidence(self, run_ids: Sequence[int]) -> list[tuple[int, int, str, int]]:
        if not run_ids:
            return []
        sql = _EVIDENCE.format(runs=_marks(run_ids))
        return [tuple(row) for row in await self.db.fetchall(sql, tuple(run_ids))]

    async def statuses(
        self, run_ids: Sequence[int], test_ids: Sequence[int]
    ) -> list[tuple[int, int, str]]:
        if not run_ids or not test_ids:
            return []
        sql = (
            "SELECT run_id, test_id, status FROM test_cases "  # noqa: S608 - marks only
            f"WHERE run_id IN ({_marks(run_ids)}) AND test_id IN ({_marks(test_ids)})"
        )
        rows = await self.db.fetchall(sql, (*run_ids, *test_ids))
        return [tuple(row) for row in rows]

    async def presence(self, run_ids: Sequence[int], test_ids: Sequence[int]) -> dict[int, int]:
        if not run_ids or not test_ids:
            return {}
        sql = (
            "SELECT test_id, count(DISTINCT run_id) FROM test_cases "  # noqa: S608 - marks only
            f"WHERE run_id IN ({_marks(run_ids)}) AND test_id IN ({_marks(test_ids)}) "
            "GROUP BY test_id"
        )
        rows = await self.db.fetchall(sql, (*run_ids, *test_ids))
        return {row[0]: row[1] for row in rows}

    async def failing_cases(self, run_id: int) -> list[FailingCase]:
        rows = await self.db.fetchall(_FAILING, (run_id,))
        return [FailingCase(_test(row), row["status"], row["message"]) for row in rows]

    async def coverage_pairs(self, run_id: int, base_run_id: int) -> list[FileDelta]:
        rows = await self.db.fetchall(_COVERAGE_PAIRS, {"run": run_id, "base": base_run_id})
        return [FileDelta(*row) for row in rows]


def _run_filter(project_id: int, runs: RunFilter) -> tuple[list[str], list[object]]:
    where: list[str] = ["r.project_id = ?"]
    params: list[object] = [project_id]
    if runs.flag is not None:
        where.append("r.flag = ?")
        params.append(runs.flag)
    if runs.branch is not None:
        where.append("r.branch = ?")
        params.append(runs.branch)
    if runs.commit is not None:
        clause, values = commit_clause(runs.commit)
        where.append(clause)
        params.extend(values)
    return where, params


def _newest_first(runs: RunFilter) -> str:
    """The order of a run list. A commit names a handful of runs: ``+r.id`` keeps SQLite from
    walking every run of the project newest first to find them, and it finds them by
    ``runs_by_commit`` and sorts the few instead."""
    return "+r.id DESC" if runs.commit is not None else "r.id DESC"


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


def _test(row: Row) -> TestRef:
    return TestRef(*row[:7])
