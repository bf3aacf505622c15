"""Routes of the charts group: template (by reference or upload), create, show."""

from __future__ import annotations

from aiohttp import web

from chartsvc.charts import RenderRequest
from chartsvc.helm import ShowFormat
from chartsvc.http.forms import read_chart_form
from chartsvc.http.responses import archive_response, text_response
from chartsvc.keys import CHARTS
from common.openapi import validated

routes = web.RouteTableDef()


@routes.post("/charts/template", name="templateChart")
async def template_chart(request: web.Request) -> web.Response:
    body = validated(request).body
    render = RenderRequest.from_body(body)
    text = await request.app[CHARTS].template(body["chartRef"], body.get("version"), render)
    return text_response(text)


@routes.post("/charts/template/upload", name="templateChartUpload")
async def template_chart_upload(request: web.Request) -> web.Response:
    form = await read_chart_form(request)
    render = RenderRequest.from_body(form.json_object("request"))
    text = await request.app[CHARTS].template_upload(form.archive(), render)
    return text_response(text)


@routes.post("/charts/create", name="createChart")
async def create_chart(request: web.Request) -> web.Response:
    name = validated(request).body["name"]
    data = await request.app[CHARTS].create(name)
    return archive_response(data, f"{name}.tgz")


async def _show(request: web.Request, what: ShowFormat) -> web.Response:
    query = validated(request).query
    text = await request.app[CHARTS].show(query["chartRef"], query.get("version"), what)
    return text_response(text)


@routes.get("/charts/show", name="showChart")
async def show_chart(request: web.Request) -> web.Response:
    return await _show(request, "all")


@routes.get("/charts/show/values", name="showChartValues")
async def show_chart_values(request: web.Request) -> web.Response:
    return await _show(request, "values")


@routes.get("/charts/show/readme", name="showChartReadme")
async def show_chart_readme(request: web.Request) -> web.Response:
    return await _show(request, "readme")


@routes.get("/charts/show/chart", name="showChartMetadata")
async def show_chart_metadata(request: web.Request) -> web.Response:
    return await _show(request, "chart")


@routes.get("/charts/show/crds", name="showChartCrds")
async def show_chart_crds(request: web.Request) -> web.Response:
    return await _show(request, "crds")
