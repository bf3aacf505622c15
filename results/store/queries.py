"""The reads of the ``Store``: projects and runs for the gate, ingest and the read pages.

All reads use the reader connection, which sees only committed data. "Latest" means the highest
run id: ids grow with every new run and, unlike timestamps, do not depend on the clock. Every
lookup below is served by an index (``runs_by_commit``, ``runs_by_branch``,
``test_cases_not_passed``); ``scripts/bench/results_gate.py`` holds the gate to its budget with
100,000 runs. That index holds only cases that did not pass, and SQLite uses a partial index only
for a query that repeats its condition, so queries of failing cases say ``status <> 'passed'``.
This module must not write.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import attrs

from common.db import Database, Row
from results.runs import Project, RunSummary
from results.store.rows import SELECT_RUN, project_from_row, summary_from_row

#: A commit given this short or longer may name a stored full SHA by its prefix, as git allows.
MIN_SHA_PREFIX = 7


@attrs.define(eq=False)
class SqlRunQueries:
    """The ``Store`` reads; ``SqlStore`` adds ingest's write to them."""

    db: Database

    async def find_project(self, name: str) -> Project | None:
        sql = "SELECT id, name, visibility, created_at FROM projects WHERE name = ?"
        row = await self.db.fetchone(sql, (name,))
        return project_from_row(row) if row is not None else None

    async def get_run(self, run_id: int) -> RunSummary | None:
        row = await self.db.fetchone(f"{SELECT_RUN} WHERE r.id = ?", (run_id,))
        return summary_from_row(row) if row is not None else None

    async def latest_run(
        self,
        project_id: int,
        *,
        flag: str,
        commit: str | None = None,
        branch: str | None = None,
        exclude_run_id: int | None = None,
        before_run_id: int | None = None,
    ) -> RunSummary | None:
        """The newest run of the project and flag on ``commit`` (else ``branch``)."""
        where = ["r.project_id = ?", "r.flag = ?"]
        params: list[object] = [project_id, flag]
        if exclude_run_id is not None:
            where.append("r.id != ?")
            params.append(exclude_run_id)
        if before_run_id is not None:
            where.append("r.id < ?")
            params.append(before_run_id)
        row = await self._newest(where, params, commit=commit, branch=branch)
        return summary_from_row(row) if row is not None else None

    async def project_run(
        self, project: str, *, flag: str, commit: str | None, branch: str | None
    ) -> tuple[Project, RunSummary] | None:
        """Like ``latest_run`` by project name, with the project, in one statement (the gate's
        first lookup: one round trip to the database thread instead of two)."""
        # The project as a subquery, not a filter on the join: one project id known before the
        # runs are read lets PostgreSQL take the newest run off the index instead of sorting a
        # branch's.
        where = ["r.project_id = (SELECT id FROM projects WHERE name = ?)", "r.flag = ?"]
        row = await self._newest(where, [project, flag], commit=commit, branch=branch)
        if row is None:
            return None
        return project_from_row(row, of_run=True), summary_from_row(row)

    async def failing_keys(self, run_ids: Sequence[int]) -> dict[int, frozenset[str]]:
        """Keys of the failed and errored test cases of each run, in one statement."""
        sql = failing_keys_sql(len(run_ids))
        keys: dict[int, set[str]] = {run_id: set() for run_id in run_ids}
        for row in await self.db.fetchall(sql, tuple(run_ids)):
            keys[row[0]].add(row[1])
        return {run_id: frozenset(found) for run_id, found in keys.items()}

    async def run_hashes(self, project: str, run_key: str) -> frozenset[str]:
        """sha256 of every file already in the run named ``run_key`` (empty when there is none)."""
        sql = """
            SELECT u.sha256 FROM uploads u
            JOIN runs r ON r.id = u.run_id JOIN projects p ON p.id = r.project_id
            WHERE p.name = ? AND r.run_key = ?
        """
        return frozenset(row[0] for row in await self.db.fetchall(sql, (project, run_key)))

    async def _newest(
        self, where: list[str], params: list[object], *, commit: str | None, branch: str | None
    ) -> Row | None:
        if commit is not None:
            found = await self._first([*where, "r.commit_sha = ?"], [*params, commit])
            if found is None and _is_sha_prefix(commit):
                clause, values = commit_clause(commit)
                found = await self._first([*where, clause], [*params, *values])
            return found
        if branch is None:
            raise ValueError("commit or branch is required")
        return await self._first([*where, "r.branch = ?"], [*params, branch])

    async def _first(self, where: list[str], params: list[object]) -> Row | None:
        sql = f"{SELECT_RUN} WHERE {' AND '.join(where)} ORDER BY r.id DESC LIMIT 1"
        return await self.db.fetchone(sql, tuple(params))


def commit_clause(commit: str) -> tuple[str, list[object]]:
    """Runs on ``commit``, or on any commit it is a 7+ hex prefix of (one index range)."""
    if _is_sha_prefix(commit):
        upper = commit[:-1] + chr(ord(commit[-1]) + 1)
        return "r.commit_sha >= ? AND r.commit_sha < ?", [commit, upper]
    return "r.commit_sha = ?", [commit]


def _is_sha_prefix(commit: str) -> bool:
    return len(commit) >= MIN_SHA_PREFIX and all(c in string.hexdigits for c in commit)


def failing_keys_sql(runs: int) -> str:
    marks = ", ".join("?" for _ in range(runs))
    return (
        "SELECT c.run_id, t.key FROM test_cases c JOIN tests t ON t.id = c.test_id "  # noqa: S608
        f"WHERE c.run_id IN ({marks}) "
        "AND c.status <> 'passed' AND c.status IN ('failed', 'error')"  # the <> picks the index
    )
