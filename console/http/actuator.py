"""Actuator extras outside ``/api/v1`` (extra routes, not spec operations): Spring's metrics view.

Health, info and ``/actuator/prometheus`` come from ``common.app``. Whether these need the admin is the auth middleware's
call: public in open mode, authenticated otherwise.
"""

from __future__ import annotations

from aiohttp import web

from common.errors import NotFound
from common.metrics import METRICS
from console import metrics

routes = web.RouteTableDef()


@routes.get("/actuator/metrics")
async def metric_names(request: web.Request) -> web.Response:
    return web.json_response({"names": metrics.names(request.app[METRICS])})


@routes.get("/actuator/metrics/{name}")
async def metric(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    body = metrics.describe(request.app[METRICS], name)
    if body is None:
        raise NotFound(f"no metric named {name!r}; GET /actuator/metrics lists them")
    return web.json_response(body)
