"""The MCP server: the official ``mcp`` package's low-level server around the tool set.

A call is validated with the operation's own compiled validators (the 400s and ``errors`` entries of
the REST route), then runs the operation's call (``chartsvc.calls``), the one its REST route runs. The result carries the REST body: JSON as text
and, for JSON, as structured content; a failure is a tool error (``isError``) whose text and
structured content are the REST problem document, status and code included. An unknown tool is a
protocol error, as MCP asks. Of the transports it knows only where an HTTP one leaves the aiohttp
request (a host's cluster resolver chooses by it).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import attrs
import mcp.types as types
from aiohttp import web
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from chartsvc.calls import CALLS, Reply, Services
from chartsvc.mcp.asgi import SCOPE_REQUEST
from chartsvc.mcp.forms import form_of
from chartsvc.mcp.progress import Reporter, with_progress
from chartsvc.mcp.schemas import structured
from chartsvc.mcp.tools import ToolDef
from common.errors import ValidationFailed, WharfError, problem_body
from common.openapi import Validated, validate_arguments

logger = logging.getLogger(__name__)

NAME = "wharf-chartsvc"
INSTRUCTIONS = (
    "Helm chart tools: search Artifact Hub, manage chart repositories, render and inspect charts "
    "by chartRef (<repo>/<chart> or oci://...), resolve dependencies and, when enabled, manage "
    "releases. Results are the JSON or text of the matching REST endpoint; errors carry its "
    "problem document (status, code, detail)."
)


def build_server(
    tools: Mapping[str, ToolDef], services: Services, *, base_path: str, version: str
) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[t.tool for t in tools.values()])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = tools.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool: {params.name[:100]}")
        per_call = attrs.evolve(services, request=_http_request(ctx))
        return await invoke(
            tool, per_call, params.arguments or {}, ctx.session.report_progress, base_path
        )

    return Server(
        NAME,
        version=version,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def invoke(
    tool: ToolDef,
    services: Services,
    arguments: Mapping[str, Any],
    report: Reporter,
    base_path: str,
) -> types.CallToolResult:
    instance = _instance(tool, arguments, base_path)
    try:
        validated = await check_arguments(tool, arguments)
        work = CALLS[tool.name](services, validated)
        if tool.operation.progress:
            reply = await with_progress(work, report, what=tool.operation.summary)
        else:
            reply = await work
    except WharfError as exc:
        return error_result(exc.to_problem(instance=instance))
    except Exception:
        rid = uuid.uuid4().hex
        logger.exception("unhandled error in tool %s (request id %s)", tool.name, rid)
        detail = f"internal server error; quote request id {rid} when reporting it"
        problem = problem_body(
            status=500,
            detail=detail,
            instance=instance,
            code="internal-error",
            extra={"requestId": rid},
        )
        return error_result(problem)
    return await success_result(reply)


async def check_arguments(tool: ToolDef, arguments: Mapping[str, Any]) -> Validated:
    """The call's input as its REST route would read it: parameters and JSON body validated, the
    parts of a multipart operation made into its form (``chartsvc.mcp.forms``)."""
    unknown = tool.arguments.unknown(arguments)
    if unknown:
        raise ValidationFailed(
            [
                {"in": "arguments", "field": n[:100], "message": "is not a known field"}
                for n in unknown
            ]
        )
    params, body = tool.arguments.split(arguments)
    if not tool.arguments.form:
        return validate_arguments(tool.compiled, params, body)
    validated = validate_arguments(tool.compiled, params)
    form = await form_of(body, tool.compiled, binary=tool.arguments.binary, cap=tool.upload_cap)
    return attrs.evolve(validated, body=form)


async def success_result(reply: Reply) -> types.CallToolResult:
    meta = {"httpStatus": reply.status}
    if reply.archive is not None:
        return await archive_result(reply.archive, reply.filename, meta)
    if reply.text is not None:
        return types.CallToolResult(content=[types.TextContent(text=reply.text)], _meta=meta)
    if reply.body is None:
        return types.CallToolResult(content=[], _meta=meta)
    text = reply.encoded.decode("utf-8") if reply.encoded is not None else json.dumps(reply.body)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=structured(reply.body),
        _meta=meta,
    )


async def archive_result(data: bytes, filename: str, meta: dict[str, Any]) -> types.CallToolResult:
    """A chart archive as MCP carries binary: an embedded ``application/gzip`` blob resource.

    Its size is bounded where the archive is made, as for the REST route: a pull by
    ``chartsvc.charts.max-archive-size`` (502 ``upstream-too-large`` beyond), a package by the caps
    on what it packages. Encoding runs in
    a thread, as a large archive would hold the event loop.
    """
    encoded = await asyncio.to_thread(base64.b64encode, data)
    blob = types.BlobResourceContents(
        uri=f"chart:///{quote(filename)}",
        mime_type="application/gzip",
        blob=encoded.decode("ascii"),
    )
    return types.CallToolResult(
        content=[
            types.TextContent(text=f"{filename} ({len(data)} bytes)"),
            types.EmbeddedResource(type="resource", resource=blob),
        ],
        _meta=meta,
    )


def error_result(problem: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(problem))],
        structured_content=problem,
        is_error=True,
        _meta={"httpStatus": problem["status"]},
    )


def _http_request(ctx: ServerRequestContext[Any]) -> web.Request | None:
    """The aiohttp request that carried the call, when an HTTP transport did (see ``asgi``)."""
    scope = getattr(ctx.request, "scope", None)
    found = scope.get(SCOPE_REQUEST) if isinstance(scope, dict) else None
    return found if isinstance(found, web.Request) else None


def _instance(tool: ToolDef, arguments: Mapping[str, Any], base_path: str) -> str:
    """The REST path this call stands for, as the problem's ``instance``."""
    path = tool.operation.path
    for name, where in tool.arguments.locations.items():
        if where == "path":
            path = path.replace("{" + name + "}", quote(str(arguments.get(name, "")), safe=""))
    return base_path + path
