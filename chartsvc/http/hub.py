"""Route of the hub group: Artifact Hub search (maxResults clamped to the hub's 60)."""

from __future__ import annotations

from aiohttp import web

from chartsvc.encoders import encode_hub_result
from chartsvc.hub import clamp_results
from chartsvc.keys import HUB
from common.openapi import validated

routes = web.RouteTableDef()


@routes.get("/hub/search", name="searchHub")
async def search_hub(request: web.Request) -> web.Response:
    query = validated(request).query
    limit = clamp_results(query["maxResults"])
    results = await request.app[HUB].search(query["keyword"], limit)
    return web.json_response([encode_hub_result(r) for r in results])
