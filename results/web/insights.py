"""Pages over many runs: a project's trends, its flaky tests, its tests, one test's history, and
a run compared with its baseline.

Each reads its filters from the query (``results.web.query``), fetches through one domain module
(``trends``, ``history``, ``compare``) and renders; private projects answer 404 like the API.
"""

from __future__ import annotations

from aiohttp import web

from results import compare, history, keys, trends
from results.auth import can_read
from results.web import query
from results.web.charts import duration_chart, outcome_strip, trend_charts
from results.web.render import page

routes = web.RouteTableDef()
PROJECT = r"/projects/{project_id:\d{1,18}}"
POINT_CHOICES = (25, 50, 100, 250, 500)


@routes.get(PROJECT + "/trends", name="page.trends")
async def trends_page(request: web.Request) -> web.Response:
    chosen = query.filters(request, "branch", "flag")
    points = query.number(
        request, "points", default=trends.DEFAULT_POINTS, low=1, high=trends.MAX_POINTS
    )
    every = request.query.get("branch") == ""  # the form's "all branches"
    branch = chosen.get("branch") or (
        None if every else request.app[keys.SETTINGS].gate.base_branch
    )
    wanted = trends.TrendQuery(flag=chosen.get("flag", "default"), branch=branch, points=points)
    found = await trends.trend(
        request.app[keys.READS],
        _project_id(request),
        wanted,
        can_read=can_read(request),
        or_every_branch="branch" not in request.query,
        choices=True,
    )
    return page(
        request,
        "trends.html",
        project=found.project,
        trend=found,
        charts=trend_charts(found.runs, prefix="trend"),
        point_choices=POINT_CHOICES,
    )


@routes.get(PROJECT + "/flaky", name="page.flaky")
async def flaky_page(request: web.Request) -> web.Response:
    chosen = query.filters(request, "branch", "flag")
    window = query.number(
        request, "runs", default=history.DEFAULT_WINDOW, low=1, high=history.MAX_WINDOW
    )
    wanted = history.FlakyQuery(flag=chosen.get("flag"), branch=chosen.get("branch"), window=window)
    reads = request.app[keys.READS]
    found = await history.flaky_tests(
        reads, _project_id(request), wanted, can_read=can_read(request)
    )
    flags = await reads.flags(found.project.id)
    return page(request, "flaky.html", project=found.project, found=found, flags=flags)


@routes.get(PROJECT + "/tests", name="page.tests")
async def tests_page(request: web.Request) -> web.Response:
    text = request.query.get("q", "").strip()[:500]
    project, found = await history.search_tests(
        request.app[keys.READS], _project_id(request), text, can_read=can_read(request)
    )
    return page(request, "tests.html", project=project, text=text, tests=found)


@routes.get(PROJECT + r"/tests/{test_id:\d{1,18}}", name="page.test")
async def test_page(request: web.Request) -> web.Response:
    chosen = query.filters(request, "branch", "flag")
    limit = query.number(
        request, "runs", default=history.DEFAULT_OUTCOMES, low=1, high=history.MAX_OUTCOMES
    )
    wanted = history.HistoryQuery(flag=chosen.get("flag"), branch=chosen.get("branch"), limit=limit)
    found = await history.test_history(
        request.app[keys.READS],
        _project_id(request),
        int(request.match_info["test_id"]),
        wanted,
        can_read=can_read(request),
    )
    return page(
        request,
        "test.html",
        project=found.project,
        found=found,
        strip=outcome_strip(found.project.id, found.outcomes, ident="history-strip"),
        durations=duration_chart(found.outcomes, ident="history-time"),
    )


@routes.get(r"/runs/{run_id:\d{1,18}}/compare", name="page.compare")
async def compare_page(request: web.Request) -> web.Response:
    base_sha = query.filters(request, "baseSha").get("baseSha")
    found = await compare.compare(
        request.app[keys.STORE],
        request.app[keys.READS],
        request.app[keys.SETTINGS].gate,
        int(request.match_info["run_id"]),
        base_sha=base_sha,
        can_read=can_read(request),
    )
    return page(request, "compare.html", found=found, run=found.run)


def _project_id(request: web.Request) -> int:
    return int(request.match_info["project_id"])
