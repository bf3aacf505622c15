"""Read API of one run: ``/runs/{id}`` with its failures, ``/runs/{id}/compare`` against its
baseline. This module must not decide visibility or hold SQL."""

from __future__ import annotations

from aiohttp import web

from common.openapi import validated
from results import browse, compare, fields, keys
from results.auth import can_read
from results.encoders import encode_comparison, encode_run_detail

routes = web.RouteTableDef()


@routes.get("/runs/{runId}", name="getRun")
async def get_run(request: web.Request) -> web.Response:
    run_id = validated(request).path["runId"]
    found = await browse.run_failures(request.app[keys.READS], run_id, can_read=can_read(request))
    return web.json_response(encode_run_detail(found))


@routes.get("/runs/{runId}/compare", name="compareRun")
async def compare_run(request: web.Request) -> web.Response:
    args = validated(request)
    base_sha = fields.read_query(args.query).get("baseSha")
    found = await compare.compare(
        request.app[keys.STORE],
        request.app[keys.READS],
        request.app[keys.SETTINGS].gate,
        args.path["runId"],
        base_sha=base_sha,
        can_read=can_read(request),
    )
    return web.json_response(encode_comparison(found))
