"""Dashboard pages: ``/`` (projects), ``/projects/{id}`` (its trend and runs), ``/runs/{id}``.

Private projects the viewer may not read answer 404, as in the API. Handlers only fetch through
the domain modules (``results.dashboard``, ``browse``, ``trends``) and render.
"""

from __future__ import annotations

from aiohttp import web

from results import browse, keys, trends
from results.auth import can_read
from results.web import query
from results.web.charts import trend_charts
from results.web.render import page

routes = web.RouteTableDef()
#: Runs on the project page's small trend.
OVERVIEW_POINTS = 30


@routes.get("/", name="page.index")
async def index(request: web.Request) -> web.Response:
    projects = await request.app[keys.DASHBOARD].overview(can_read(request))
    return page(request, "index.html", projects=projects)


@routes.get(r"/projects/{project_id:\d{1,18}}", name="page.project")
async def project_page(request: web.Request) -> web.Response:
    project_id = int(request.match_info["project_id"])
    reads, reader = request.app[keys.READS], can_read(request)
    chosen = query.filters(request, "branch", "commit", "flag")
    runs = browse.RunFilter(chosen.get("branch"), chosen.get("commit"), chosen.get("flag"))
    before = query.number(request, "before", default=0, low=1, high=2**62) or None
    runs_page = await browse.run_page(reads, project_id, runs, can_read=reader, before=before)
    base = request.app[keys.SETTINGS].gate.base_branch
    wanted = trends.TrendQuery(branch=base, points=OVERVIEW_POINTS)
    trend = await trends.trend(
        reads, project_id, wanted, can_read=reader, or_every_branch=True, choices=True
    )
    charts = trend_charts(trend.runs, prefix="overview")
    return page(
        request,
        "project.html",
        project=trend.project,
        trend=trend,
        charts=[charts[0], charts[3]],  # pass rate and coverage
        runs=runs_page.runs,
        next_before=runs_page.next_before,
        chosen=chosen,
        origin=f"{request.scheme}://{request.host}",
    )


@routes.get(r"/runs/{run_id:\d{1,18}}", name="page.run")
async def run_page(request: web.Request) -> web.Response:
    run_id = int(request.match_info["run_id"])
    detail = await request.app[keys.DASHBOARD].run(run_id, can_read(request))
    place = await trends.run_place(request.app[keys.READS], run_id, can_read=can_read(request))
    charts = trend_charts(place.runs, prefix="place", highlight=run_id)
    return page(request, "run.html", detail=detail, run=detail.run, place=place, charts=charts)
