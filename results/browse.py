"""Reading projects and runs as a caller may see them: lists, filters, pages, one run in full.

Shared by the read API and the dashboard pages. Visibility is decided here through the caller's
``CanRead``: a private project the caller may not read is reported exactly like a missing one, and
so is a run of it. Run lists page by run id (``before``): ids only grow, so a page never shifts
when new runs arrive while a client walks the list. This module must not know HTTP or SQL.
"""

from __future__ import annotations

from typing import Protocol

import attrs

from results.dashboard import MAX_CASES, CaseRow, ProjectOverview, project_of
from results.errors import ProjectNotFound, RunNotFound
from results.patch import PatchCoverage
from results.runs import CanRead, Project, RunSummary

#: Runs in one page of a run list, when the caller does not say; and the most it may ask for.
DEFAULT_PAGE = 50
MAX_PAGE = 500
#: Branches offered to filter by (the most recently active ones).
MAX_BRANCHES = 50


@attrs.frozen
class RunFilter:
    """Which runs of a project: any of branch, commit (or a 7+ hex prefix of one) and flag."""

    branch: str | None = None
    commit: str | None = None
    flag: str | None = None


@attrs.frozen
class RunPage:
    runs: list[RunSummary]  # newest first
    next_before: int | None  # pass as ``before`` for the next (older) page; None at the end


@attrs.frozen
class ProjectDetail:
    overview: ProjectOverview
    flags: list[str]
    branches: list[str]  # the most recently active first


@attrs.frozen
class RunFailures:
    run: RunSummary
    cases: list[CaseRow]  # failed and errored first, then flaky; at most MAX_CASES
    total: int  # how many such cases the run holds
    patch: PatchCoverage | None = None  # per changed file; None when the run came without a diff


class BrowseStore(Protocol):
    async def projects(self) -> list[ProjectOverview]: ...
    async def project(self, project_id: int) -> Project | None: ...
    async def project_overview(self, project_id: int) -> ProjectOverview | None: ...
    async def flags(self, project_id: int) -> list[str]: ...
    async def branches(self, project_id: int, *, limit: int) -> list[str]: ...
    async def get_run(self, run_id: int) -> RunSummary | None: ...
    async def list_runs(
        self, project_id: int, runs: RunFilter, *, before: int | None, limit: int
    ) -> list[RunSummary]:
        """Newest first, ids below ``before`` when given."""

    async def problem_cases(self, run_id: int, *, limit: int) -> list[CaseRow]: ...
    async def patch_files(self, run_id: int) -> PatchCoverage | None: ...


async def projects(store: BrowseStore, can_read: CanRead) -> list[ProjectOverview]:
    return [p for p in await store.projects() if can_read(p.project)]


async def readable_project(store: BrowseStore, project_id: int, can_read: CanRead) -> Project:
    project = await store.project(project_id)
    if project is None or not can_read(project):
        raise ProjectNotFound(project_id)
    return project


async def project_detail(store: BrowseStore, project_id: int, can_read: CanRead) -> ProjectDetail:
    found = await store.project_overview(project_id)
    if found is None or not can_read(found.project):
        raise ProjectNotFound(project_id)
    branches = await store.branches(project_id, limit=MAX_BRANCHES)
    return ProjectDetail(found, await store.flags(project_id), branches)


async def readable_run(store: BrowseStore, run_id: int, can_read: CanRead) -> RunSummary:
    run = await store.get_run(run_id)
    if run is None or not can_read(project_of(run)):
        raise RunNotFound(run_id)
    return run


async def run_page(
    store: BrowseStore,
    project_id: int,
    runs: RunFilter,
    *,
    can_read: CanRead,
    before: int | None = None,
    limit: int = DEFAULT_PAGE,
) -> RunPage:
    await readable_project(store, project_id, can_read)
    limit = max(1, min(limit, MAX_PAGE))
    found = await store.list_runs(project_id, runs, before=before, limit=limit + 1)
    more = len(found) > limit
    found = found[:limit]
    return RunPage(found, found[-1].run_id if more else None)


async def run_failures(store: BrowseStore, run_id: int, *, can_read: CanRead) -> RunFailures:
    run = await readable_run(store, run_id, can_read)
    cases = await store.problem_cases(run_id, limit=MAX_CASES)
    patch = await store.patch_files(run_id) if run.patch_lines_valid is not None else None
    return RunFailures(run, cases, total=run.failures + run.errors + run.flaky, patch=patch)
