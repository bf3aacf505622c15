"""Encoding answers: JSON bodies with warnings, and the form the Accept header asks for."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from kubesim.api.params import Target, response_form
from kubesim.encoding import tables, validation
from kubesim.store import Obj

#: Warnings a request earned before its answer was made (a deprecated API), sent with the answer.
WARNINGS = web.RequestKey("kubesim.warnings", list)


def warn(request: web.Request, message: str) -> None:
    request.setdefault(WARNINGS, []).append(message)


async def send_warnings(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """``on_response_prepare``: the request's warnings join the answer's own ``Warning`` header,
    whatever the answer (an object, a list, a watch, an error)."""
    messages = request.get(WARNINGS) if isinstance(request, web.Request) else None
    if not messages:
        return
    mine = validation.warning_header(messages)
    given = response.headers.get("Warning")
    response.headers["Warning"] = f"{mine}, {given}" if given else mine


def json_response(
    body: Any, *, status: int = 200, warnings: list[str] | None = None
) -> web.Response:
    headers = {"Warning": validation.warning_header(warnings)} if warnings else None
    return web.Response(
        body=json.dumps(body, separators=(",", ":")).encode(),
        status=status,
        content_type="application/json",
        headers=headers,
    )


def encode_one(request: web.Request, target: Target, obj: Obj) -> Any:
    form = response_form(request.headers.get("Accept", ""))
    if form == "Table":
        include = request.query.get("includeObject", "Metadata")
        return tables.table(
            target.rt,
            [obj],
            include=include,
            list_meta={"resourceVersion": obj["metadata"].get("resourceVersion")},
        )
    if form == "PartialObjectMetadata":
        return tables.partial_metadata(obj)
    return obj
