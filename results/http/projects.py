"""Read API of projects and runs: ``/projects``, ``/projects/{id}``, its runs and its trends.

Handlers read the validated query, call ``results.browse`` or ``results.trends``, and encode
(``results.encoders``). This module must not decide visibility or hold SQL.
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import validated
from results import browse, fields, keys, trends
from results.auth import can_read
from results.encoders import encode_project, encode_project_detail, encode_run, encode_trend

routes = web.RouteTableDef()


@routes.get("/projects", name="listProjects")
async def list_projects(request: web.Request) -> web.Response:
    found = await browse.projects(request.app[keys.READS], can_read(request))
    name = validated(request).query.get("name")
    if name is not None:
        found = [p for p in found if p.project.name == name]
    return web.json_response({"projects": [encode_project(p) for p in found]})


@routes.get("/projects/{projectId}", name="getProject")
async def get_project(request: web.Request) -> web.Response:
    project_id = validated(request).path["projectId"]
    found = await browse.project_detail(request.app[keys.READS], project_id, can_read(request))
    return web.json_response(encode_project_detail(found))


@routes.get("/projects/{projectId}/runs", name="listRuns")
async def list_runs(request: web.Request) -> web.Response:
    args = validated(request)
    filters = fields.read_query(args.query)
    page = await browse.run_page(
        request.app[keys.READS],
        args.path["projectId"],
        browse.RunFilter(filters.get("branch"), filters.get("commit"), filters.get("flag")),
        can_read=can_read(request),
        before=args.query.get("before"),
        limit=args.query["limit"],
    )
    body = {"runs": [encode_run(r) for r in page.runs], "nextBefore": page.next_before}
    response = web.json_response(body)
    if page.next_before is not None:
        following = request.rel_url.update_query(before=page.next_before)
        response.headers["Link"] = f'<{following}>; rel="next"'
    return response


@routes.get("/projects/{projectId}/trends", name="getTrends")
async def get_trends(request: web.Request) -> web.Response:
    args = validated(request)
    filters = fields.read_query(args.query)
    query = trends.TrendQuery(
        flag=filters["flag"], branch=filters.get("branch"), points=args.query["points"]
    )
    found = await trends.trend(
        request.app[keys.READS], args.path["projectId"], query, can_read=can_read(request)
    )
    return web.json_response(encode_trend(found))
