"""What a badge says: line coverage or the gate's verdict for a project's branch, and its colour.

A project the caller may not read is reported like a missing one (404); a project without a run
on the branch gets an "unknown" badge, so a README shows a badge from the first commit on.
Colours follow the usual coverage scale (red below 50 %, green from 90 %). This module must not
know HTTP or SVG.
"""

from __future__ import annotations

import attrs

from results import fields
from results.errors import NoMatchingRun, ProjectNotFound
from results.gate import GateQuery, evaluate
from results.runs import CanRead, Project, RunSummary
from results.runstore import Store
from results.settings import GateSettings

GREEN, YELLOWGREEN, YELLOW, ORANGE, RED, GREY = (
    "#2e7d32",
    "#689f38",
    "#a07800",
    "#d35400",
    "#c62828",
    "#6e7681",
)
#: (lowest percentage, colour), highest first.
COVERAGE_SCALE = ((90.0, GREEN), (80.0, YELLOWGREEN), (65.0, YELLOW), (50.0, ORANGE), (0.0, RED))


@attrs.frozen
class Badge:
    label: str
    message: str
    color: str
    public: bool  # whether caches may keep it (a PUBLIC project's)


@attrs.frozen
class BadgeQuery:
    project: str
    branch: str | None = None  # None: the gate's base branch
    flag: str = fields.DEFAULT_FLAG


async def _readable(store: Store, name: str, can_read: CanRead) -> Project:
    project = await store.find_project(name)
    if project is None or not can_read(project):
        raise ProjectNotFound(name)
    return project


async def _latest_run(
    store: Store, settings: GateSettings, query: BadgeQuery, can_read: CanRead
) -> tuple[bool, RunSummary | None]:
    """Whether the project is public, and its latest run on the badge's branch (if any)."""
    project = await _readable(store, query.project, can_read)
    branch = query.branch or settings.base_branch
    return not project.private, await store.latest_run(project.id, flag=query.flag, branch=branch)


async def coverage_badge(
    store: Store, settings: GateSettings, query: BadgeQuery, *, can_read: CanRead
) -> Badge:
    public, found = await _latest_run(store, settings, query, can_read)
    pct = found.line_coverage_pct if found is not None else None
    if pct is None:
        return Badge("coverage", "unknown", GREY, public)
    return Badge("coverage", f"{pct:.1f}%", coverage_color(pct), public)


async def patch_coverage_badge(
    store: Store, settings: GateSettings, query: BadgeQuery, *, can_read: CanRead
) -> Badge:
    """Patch coverage of the branch's latest run: "no diff" when it came without one."""
    public, found = await _latest_run(store, settings, query, can_read)
    label = "patch coverage"
    if found is None or found.patch_lines_valid is None:
        return Badge(label, "no diff" if found is not None else "unknown", GREY, public)
    pct = found.patch_coverage_pct
    if pct is None:
        return Badge(label, "no coverable lines", GREY, public)
    return Badge(label, f"{pct:.1f}%", coverage_color(pct), public)


async def gate_badge(
    store: Store, settings: GateSettings, query: BadgeQuery, *, can_read: CanRead
) -> Badge:
    project = await _readable(store, query.project, can_read)
    public = not project.private
    branch = query.branch or settings.base_branch
    gate_query = GateQuery(project=query.project, branch=branch, flag=query.flag)
    try:
        verdict = await evaluate(store, settings, gate_query, can_read=can_read)
    except NoMatchingRun:
        return Badge("quality gate", "unknown", GREY, public)
    if verdict.passed:
        return Badge("quality gate", "passed", GREEN, public)
    return Badge("quality gate", "failed", RED, public)


def coverage_color(pct: float) -> str:
    return next(color for floor, color in COVERAGE_SCALE if pct >= floor - 1e-9)
