"""Route of the hub group: Artifact Hub search (maxResults clamped to the hub's 60)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from chartsvc.hub import HubResult, clamp_results
from chartsvc.keys import HUB
from common.openapi import validated

routes = web.RouteTableDef()


def encode_result(result: HubResult) -> dict[str, Any]:
    return {
        "name": result.name,
        "version": result.version,
        "appVersion": result.app_version,
        "repoName": result.repo_name,
        "repoUrl": result.repo_url,
        "description": result.description,
    }


@routes.get("/hub/search", name="searchHub")
async def search_hub(request: web.Request) -> web.Response:
    query = validated(request).query
    limit = clamp_results(query["maxResults"])
    results = await request.app[HUB].search(query["keyword"], limit)
    return web.json_response([encode_result(r) for r in results])
