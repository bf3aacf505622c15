"""Actuator extras outside ``/api/v1`` (extra routes, not spec operations): metrics and Prometheus.

Health and info come from ``common.app``. Whether these need the admin is the auth middleware's
call: public in open mode, authenticated otherwise.
"""

from __future__ import annotations

from aiohttp import web

from common.errors import NotFound
from console.keys import METRICS
from console.metrics import PROMETHEUS_CONTENT_TYPE

routes = web.RouteTableDef()


@routes.get("/actuator/metrics")
async def metric_names(request: web.Request) -> web.Response:
    return web.json_response({"names": request.app[METRICS].names()})


@routes.get("/actuator/metrics/{name}")
async def metric(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    body = request.app[METRICS].describe(name)
    if body is None:
        raise NotFound(f"no metric named {name!r}; GET /actuator/metrics lists them")
    return web.json_response(body)


@routes.get("/actuator/prometheus")
async def prometheus(request: web.Request) -> web.Response:
    text = request.app[METRICS].exposition()
    return web.Response(body=text.encode(), headers={"Content-Type": PROMETHEUS_CONTENT_TYPE})
