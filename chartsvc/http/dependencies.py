"""Route of the dependencies group: resolve a chart's dependencies into Chart.lock content."""

from __future__ import annotations

from aiohttp import web

from chartsvc.keys import CHARTS
from common.openapi import validated

routes = web.RouteTableDef()


@routes.post("/dependencies/resolve", name="resolveDependencies")
async def resolve_dependencies(request: web.Request) -> web.Response:
    body = validated(request).body
    lock = await request.app[CHARTS].resolve_dependencies(body["chartRef"], body.get("version"))
    # Exactly the contract's media type: the lock is ASCII YAML, a charset parameter adds nothing.
    return web.Response(body=lock.encode("utf-8"), headers={"Content-Type": "text/yaml"})
