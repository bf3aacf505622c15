"""Trends of a project: pass rate, failures, duration and line coverage over its last N runs.

A trend is always of one flag (components are never mixed into one line: that draws a sawtooth
of unrelated numbers) and of one branch or of all of them. Its points are the runs themselves,
whose totals the store keeps per run, so a trend of 100 runs reads 100 rows however many runs
the project has. A run's place in its trend is the same series cut around the run.
This module must not know HTTP, HTML or SQL.
"""

from __future__ import annotations

from typing import Protocol

import attrs

from results import fields
from results.browse import MAX_BRANCHES, BrowseStore, readable_project, readable_run
from results.runs import CanRead, Project, RunSummary

DEFAULT_POINTS = 100
MAX_POINTS = 1000


@attrs.frozen
class TrendQuery:
    flag: str = fields.DEFAULT_FLAG
    branch: str | None = None  # None: every branch
    points: int = DEFAULT_POINTS


@attrs.frozen
class Trend:
    project: Project
    query: TrendQuery
    runs: list[RunSummary]  # oldest first
    flags: list[str]  # the project's flags, to choose from (pages only: empty for the API)
    branches: list[str]  # its most recently active branches (pages only)

    @property
    def latest(self) -> RunSummary | None:
        return self.runs[-1] if self.runs else None


@attrs.frozen
class RunPlace:
    """A run among its neighbours of the same project, flag and branch."""

    run: RunSummary
    runs: list[RunSummary]  # oldest first, the run among them
    query: TrendQuery


class TrendStore(BrowseStore, Protocol):
    async def trend_runs(
        self, project_id: int, *, flag: str, branch: str | None, limit: int, before: int | None
    ) -> list[RunSummary]:
        """Newest first; ids below ``before`` when given."""

    async def runs_after(
        self, project_id: int, *, flag: str, branch: str | None, after: int, limit: int
    ) -> list[RunSummary]:
        """Oldest first, ids above ``after``."""


async def trend(
    store: TrendStore,
    project_id: int,
    query: TrendQuery,
    *,
    can_read: CanRead,
    or_every_branch: bool = False,
    choices: bool = False,
) -> Trend:
    """The trend ``query`` asks for; with ``or_every_branch``, a branch without runs of the flag
    (a page's default branch, say) gives way to every branch; with ``choices``, the flags and
    branches to choose from come along (a page's filter form)."""
    project = await readable_project(store, project_id, can_read)
    query = attrs.evolve(query, points=max(1, min(query.points, MAX_POINTS)))
    newest = await _newest(store, project_id, query)
    if not newest and or_every_branch and query.branch is not None:
        query = attrs.evolve(query, branch=None)
        newest = await _newest(store, project_id, query)
    flags, branches = [], []
    if choices:
        flags = await store.flags(project_id)
        branches = await store.branches(project_id, limit=MAX_BRANCHES)
        if query.branch is not None and query.branch not in branches:
            branches.append(query.branch)
    return Trend(project, query, newest[::-1], flags, branches)


async def _newest(store: TrendStore, project_id: int, query: TrendQuery) -> list[RunSummary]:
    return await store.trend_runs(
        project_id, flag=query.flag, branch=query.branch, limit=query.points, before=None
    )


async def run_place(
    store: TrendStore, run_id: int, *, can_read: CanRead, before: int = 30, after: int = 10
) -> RunPlace:
    """The run with up to ``before`` older and ``after`` newer runs of its flag and branch."""
    run = await readable_run(store, run_id, can_read)
    kw = {"flag": run.flag, "branch": run.branch}
    older = await store.trend_runs(run.project_id, limit=before, before=run.run_id, **kw)
    newer = await store.runs_after(run.project_id, after=run.run_id, limit=after, **kw)
    query = TrendQuery(flag=run.flag, branch=run.branch)
    return RunPlace(run, [*older[::-1], run, *newer], query)
