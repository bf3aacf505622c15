"""Routes of the repositories group: add, list, remove, update, listings, pull and push."""

from __future__ import annotations

from aiohttp import web

from chartsvc.encoders import encode_chart_version, encode_repository, encode_update
from chartsvc.http.forms import read_chart_form
from chartsvc.http.responses import archive_response
from chartsvc.keys import CHARTS, REPOS
from common.openapi import validated

routes = web.RouteTableDef()


@routes.post("/repos", name="addRepository")
async def add_repository(request: web.Request) -> web.Response:
    body = validated(request).body
    repo, created = await request.app[REPOS].add(body["name"], body["url"])
    return web.json_response(encode_repository(repo), status=201 if created else 200)


@routes.get("/repos", name="listRepositories")
async def list_repositories(request: web.Request) -> web.Response:
    repos = await request.app[REPOS].configured()
    return web.json_response([encode_repository(r) for r in repos])


@routes.delete("/repos/{name}", name="removeRepository")
async def remove_repository(request: web.Request) -> web.Response:
    await request.app[REPOS].remove(validated(request).path["name"])
    return web.Response(status=204)


@routes.post("/repos/{name}/update", name="updateRepository")
async def update_repository(request: web.Request) -> web.Response:
    result = await request.app[REPOS].update(validated(request).path["name"])
    return web.json_response(encode_update(result))


@routes.post("/repos/update-all", name="updateAllRepositories")
async def update_all_repositories(request: web.Request) -> web.Response:
    results = await request.app[REPOS].update_all()
    return web.json_response([encode_update(r) for r in results])


@routes.get("/repos/{name}/charts", name="listRepositoryCharts")
async def list_repository_charts(request: web.Request) -> web.Response:
    charts = await request.app[REPOS].charts(validated(request).path["name"])
    return web.json_response([encode_chart_version(c) for c in charts])


@routes.get("/repos/{name}/charts/{chart}/versions", name="listChartVersions")
async def list_chart_versions(request: web.Request) -> web.Response:
    path = validated(request).path
    entries = await request.app[REPOS].versions(path["name"], path["chart"])
    return web.json_response([encode_chart_version(e) for e in entries])


@routes.post("/repos/pull", name="pullChart")
async def pull_chart(request: web.Request) -> web.Response:
    body = validated(request).body
    data, filename = await request.app[CHARTS].pull(
        body["chart"], body.get("version"), field="chart"
    )
    return archive_response(data, filename)


@routes.post("/repos/push", name="pushChart")
async def push_chart(request: web.Request) -> web.Response:
    form = await read_chart_form(request)
    result = await request.app[CHARTS].push(form.archive(), form.text("remote") or "")
    return web.json_response(result)
