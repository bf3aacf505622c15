"""Dashboard pages: ``/`` (projects), ``/projects/{id}`` (recent runs), ``/runs/{id}`` (a run).

Private projects the viewer may not read answer 404, as in the API. Handlers only fetch through
``results.dashboard`` and render.
"""

from __future__ import annotations

from aiohttp import web

from results import keys
from results.http.viewer import can_read
from results.web.render import page

routes = web.RouteTableDef()


@routes.get("/", name="page.index")
async def index(request: web.Request) -> web.Response:
    projects = await request.app[keys.DASHBOARD].overview(can_read(request))
    return page(request, "index.html", projects=projects)


@routes.get(r"/projects/{project_id:\d{1,18}}", name="page.project")
async def project_page(request: web.Request) -> web.Response:
    project_id = int(request.match_info["project_id"])
    project, runs = await request.app[keys.DASHBOARD].project(project_id, can_read(request))
    return page(request, "project.html", project=project, runs=runs)


@routes.get(r"/runs/{run_id:\d{1,18}}", name="page.run")
async def run_page(request: web.Request) -> web.Response:
    run_id = int(request.match_info["run_id"])
    detail = await request.app[keys.DASHBOARD].run(run_id, can_read(request))
    return page(request, "run.html", detail=detail, run=detail.run)
