"""What the dashboard pages show: projects with their latest run, a project's runs, a run's detail.

Visibility is applied here, through the caller's ``CanRead``: a private project the caller may not
read is reported exactly like a missing one. The SQL is ``results.store.dashboard``; the pages are
``results.web``. This module must not know HTTP, HTML or SQL.
"""

from __future__ import annotations

from typing import Protocol

import attrs

from results.errors import ProjectNotFound, RunNotFound
from results.parsers.model import percentage
from results.patch import PatchCoverage
from results.runs import CanRead, Project, RunSummary

RECENT_RUNS = 50
#: Failed, errored and flaky cases listed on a run page; a run with thousands of failures is broken
#: in a way the first few hundred already show.
MAX_CASES = 500
MAX_COVERAGE_FILES = 500


@attrs.frozen
class ProjectOverview:
    project: Project
    latest: RunSummary | None
    runs: int


@attrs.frozen
class CaseRow:
    suite: str
    classname: str
    name: str
    status: str
    duration_ms: int | None
    message: str | None
    failure_type: str | None
    trace: str | None
    reruns: int
    test_id: int
    key: str


@attrs.frozen
class CoverageRow:
    path: str
    lines_covered: int
    lines_valid: int
    branches_covered: int
    branches_valid: int

    @property
    def line_pct(self) -> float | None:
        return percentage(self.lines_covered, self.lines_valid)


@attrs.frozen
class RunDetail:
    run: RunSummary
    problems: list[CaseRow]  # failed and errored first, then flaky
    coverage: list[CoverageRow]  # least covered first
    coverage_files: int
    patch: PatchCoverage | None = None  # per changed file; None when the run came without a diff


class DashboardStore(Protocol):
    async def projects(self) -> list[ProjectOverview]: ...
    async def project(self, project_id: int) -> Project | None: ...
    async def recent_runs(self, project_id: int, *, limit: int) -> list[RunSummary]: ...
    async def get_run(self, run_id: int) -> RunSummary | None: ...
    async def problem_cases(self, run_id: int, *, limit: int) -> list[CaseRow]: ...
    async def coverage(self, run_id: int, *, limit: int) -> tuple[list[CoverageRow], int]: ...
    async def patch_files(self, run_id: int) -> PatchCoverage | None: ...


def project_of(run: RunSummary) -> Project:
    return Project(id=run.project_id, name=run.project, visibility=run.visibility, created_at="")


@attrs.define
class Dashboard:
    store: DashboardStore

    async def overview(self, can_read: CanRead) -> list[ProjectOverview]:
        return [p for p in await self.store.projects() if can_read(p.project)]

    async def project(self, project_id: int, can_read: CanRead) -> tuple[Project, list[RunSummary]]:
        project = await self.store.project(project_id)
        if project is None or not can_read(project):
            raise ProjectNotFound(project_id)
        return project, await self.store.recent_runs(project_id, limit=RECENT_RUNS)

    async def run(self, run_id: int, can_read: CanRead) -> RunDetail:
        run = await self.store.get_run(run_id)
        if run is None or not can_read(project_of(run)):
            raise RunNotFound(run_id)
        cases = await self.store.problem_cases(run_id, limit=MAX_CASES)
        files, total = await self.store.coverage(run_id, limit=MAX_COVERAGE_FILES)
        patch = await self.store.patch_files(run_id) if run.patch_lines_valid is not None else None
        return RunDetail(run=run, problems=cases, coverage=files, coverage_files=total, patch=patch)
