"""The REST routes, one per operation of the spec, each running that operation's call.

Method, path, operationId and group come from the spec (``chartsvc.operations``), the work from
``chartsvc.calls``, so a route is never written by hand and cannot drift from either. A route reads
the validated input (and, for a multipart operation, the form, under the upload caps), runs the call
with the app's services and this request (a host's cluster resolver chooses by it), and renders the
reply. A table per group lets a host replace one group with its own (``create_app(groups=...)``).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from aiohttp import web
from aiohttp.typedefs import Handler

from chartsvc.calls import CALLS, Call, Reply
from chartsvc.http.forms import read_chart_form
from chartsvc.http.responses import archive_response, text_response
from chartsvc.keys import SERVICES
from chartsvc.operations import Operation
from common.app import encoded_json
from common.openapi import MULTIPART, Spec, validated


def route_tables(spec: Spec, operations: Mapping[str, Operation]) -> dict[str, web.RouteTableDef]:
    """A route table per group; ValueError when an operation of the spec has no call."""
    missing = sorted(set(operations) - set(CALLS))
    if missing:
        raise ValueError(f"operations without an implementation: {', '.join(missing)}")
    tables: dict[str, web.RouteTableDef] = {}
    forms = form_operations(spec)
    for op_id, op in operations.items():
        table = tables.setdefault(op.group, web.RouteTableDef())
        table.route(op.method, op.path, name=op_id)(_handler(CALLS[op_id], form=op_id in forms))
    return tables


def form_operations(spec: Spec) -> frozenset[str]:
    """The operations that take a multipart form (their routes read uploads)."""
    return frozenset(
        op_id for op_id, op in spec.operations.items() if MULTIPART in op.other_body_types
    )


def _handler(call: Call, *, form: bool) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        args = validated(request)
        if form:
            args = attrs.evolve(args, body=await read_chart_form(request))
        return render(await call(request.app[SERVICES].for_request(request), args))

    return handle


def render(reply: Reply) -> web.Response:
    if reply.archive is not None:
        return archive_response(reply.archive, reply.filename)
    if reply.text is not None:
        if reply.media == "text/plain":
            return text_response(reply.text)
        return web.Response(
            body=reply.text.encode("utf-8"),
            status=reply.status,
            headers={"Content-Type": reply.media},
        )
    if reply.encoded is not None:
        return encoded_json(reply.encoded, reply.status)
    if reply.body is None:
        return web.Response(status=reply.status)
    return web.json_response(reply.body, status=reply.status)
