"""Encoding answers: JSON bodies with warnings, and the form the Accept header asks for."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from kubesim.api.params import Form, Target, include_object, response_form
from kubesim.encoding import tables, validation
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.status import KubeError
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


def requested_form(request: web.Request, rt: ResourceType) -> Form:
    """The form the request's Accept header asks for ``rt``'s objects in (or a 406)."""
    return response_form(request.headers.get("Accept", ""), protobuf=rt.crd is None)


def encode_one(request: web.Request, target: Target, obj: Obj) -> Any:
    form = requested_form(request, target.rt)
    if form.kind == "Table":
        return tables.table(
            target.rt,
            [obj],
            include=include_object(request.query),
            list_meta={"resourceVersion": obj["metadata"].get("resourceVersion")},
            version=form.version,
        )
    if form.kind == "PartialObjectMetadataList":
        raise _not_acceptable(form.kind, f"is not a list ({_go_type(target.rt)})")
    if form.kind == "PartialObjectMetadata":
        return tables.partial_metadata(obj, form.version)
    return obj


def transformed_list(request: web.Request, rt: ResourceType, items: list[Obj], meta: Obj) -> Any:
    """The Table or PartialObjectMetadataList of ``items`` the Accept header asks for, or None
    when it asks for the list itself."""
    form = requested_form(request, rt)
    if form.kind == "Table":
        return tables.table(
            rt, items, include=include_object(request.query), list_meta=meta, version=form.version
        )
    if form.kind == "PartialObjectMetadata":
        raise _not_acceptable(form.kind, f"is a list ({_go_type(rt, 'List')})")
    if form.kind == "PartialObjectMetadataList":
        return {
            "kind": "PartialObjectMetadataList",
            "apiVersion": form.api_version,
            "metadata": meta,
            "items": [tables.partial_metadata(o, form.version) for o in items],
        }
    return None


def _not_acceptable(asked: str, what: str) -> KubeError:
    """``handlers/response.go`` ``asPartialObjectMetadata``/``...List``: the form asked for does
    not fit the answer (``newNotAcceptableError``)."""
    message = f"you requested {asked}, but the requested object {what}"
    return KubeError(406, message, reason="NotAcceptable", details={})


#: Internal API packages whose name is not the group's first word.
_PACKAGES = {"": "core", "events.k8s.io": "core", "internal.apiserver.k8s.io": "apiserverinternal"}


def _go_type(rt: ResourceType, suffix: str = "") -> str:
    """The ``%T`` of what the storage returns: the internal type, or unstructured for CRs."""
    if rt.crd is not None:
        return f"*unstructured.Unstructured{suffix}"
    package = _PACKAGES.get(rt.group, rt.group.split(".")[0])
    return f"*{package}.{rt.kind}{suffix}"
