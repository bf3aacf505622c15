"""Read API of tests: finding one, its history, and a project's flaky tests.

This module must not decide visibility, score flakiness or hold SQL.
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import validated
from results import fields, history, keys
from results.auth import can_read
from results.encoders import encode_flaky_list, encode_test, encode_test_history

routes = web.RouteTableDef()
_FILTERS = {"branch": fields.branch, "flag": fields.flag}


@routes.get("/projects/{projectId}/tests", name="searchTests")
async def search_tests(request: web.Request) -> web.Response:
    args = validated(request)
    reads, project_id = request.app[keys.READS], args.path["projectId"]
    key = args.query.get("key")
    if key is not None:
        found = [await history.find_test(reads, project_id, key, can_read=can_read(request))]
    else:
        text = args.query.get("q", "").strip()
        _, found = await history.search_tests(
            reads, project_id, text, can_read=can_read(request), limit=args.query["limit"]
        )
    return web.json_response({"tests": [encode_test(t) for t in found]})


@routes.get("/projects/{projectId}/tests/{testId}/history", name="getTestHistory")
async def get_test_history(request: web.Request) -> web.Response:
    args = validated(request)
    filters = fields.read_query(args.query, _FILTERS)
    query = history.HistoryQuery(
        flag=filters.get("flag"), branch=filters.get("branch"), limit=args.query["limit"]
    )
    found = await history.test_history(
        request.app[keys.READS],
        args.path["projectId"],
        args.path["testId"],
        query,
        can_read=can_read(request),
    )
    return web.json_response(encode_test_history(found))


@routes.get("/projects/{projectId}/flaky", name="listFlakyTests")
async def list_flaky_tests(request: web.Request) -> web.Response:
    args = validated(request)
    filters = fields.read_query(args.query, _FILTERS)
    query = history.FlakyQuery(
        flag=filters.get("flag"),
        branch=filters.get("branch"),
        window=args.query["runs"],
        limit=args.query["limit"],
    )
    found = await history.flaky_tests(
        request.app[keys.READS], args.path["projectId"], query, can_read=can_read(request)
    )
    return web.json_response(encode_flaky_list(found))
