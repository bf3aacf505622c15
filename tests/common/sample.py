"""A small spec and routes that exercise the foundation the way a service would."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from common.app import as_problem, build_app
from common.errors import Conflict
from common.openapi import Spec, validated
from common.uploads import UploadLimits, read_multipart

DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Sample", "version": "1"},
    "servers": [{"url": "/api/v1"}],
    "paths": {
        "/things": {
            "post": {
                "operationId": "createThing",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}
                    },
                },
                "responses": {"201": {"description": "made"}},
            },
            "get": {
                "operationId": "listThings",
                "parameters": [
                    {"$ref": "#/components/parameters/Namespace"},
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer", "maximum": 60, "default": 20},
                    },
                    {"name": "all", "in": "query", "schema": {"type": "boolean", "default": False}},
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            },
        },
        "/things/{name}": {
            "get": {
                "operationId": "getThing",
                "parameters": [
                    {
                        "name": "name",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "pattern": "^[a-z]+$"},
                    }
                ],
                "responses": {"200": {"description": "ok"}, "409": {"description": "conflict"}},
            }
        },
        "/things/special": {
            "post": {"operationId": "specialThing", "responses": {"204": {"description": "ok"}}}
        },
        "/uploads": {
            "post": {
                "operationId": "upload",
                "requestBody": {
                    "content": {
                        "multipart/form-data": {
                            "schema": {"type": "object", "required": ["archive", "request"]}
                        }
                    }
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/boom": {"get": {"operationId": "boom", "responses": {"500": {"description": "x"}}}},
    },
    "components": {
        "parameters": {
            "Namespace": {
                "name": "namespace",
                "in": "query",
                "schema": {"type": "string", "default": "default"},
            }
        },
        "schemas": {
            "Thing": {
                "type": "object",
                "required": ["chartRef"],
                "properties": {
                    "chartRef": {"type": "string"},
                    "replicas": {"type": "integer", "minimum": 0},
                    "values": {"type": "object"},
                },
            }
        },
    },
}

routes = web.RouteTableDef()


@routes.post("/things", name="createThing")
async def create_thing(request: web.Request) -> web.Response:
    return web.json_response(validated(request).body, status=201)


@routes.get("/things", name="listThings")
async def list_things(request: web.Request) -> web.Response:
    return web.json_response(dict(validated(request).query))


@routes.get("/things/{name}", name="getThing")
async def get_thing(request: web.Request) -> web.Response:
    name = validated(request).path["name"]
    if name == "taken":
        raise Conflict(f"thing {name} exists", code="thing-conflict")
    return web.json_response({"name": name})


@routes.post("/things/special", name="specialThing")  # after /things/{name}, which matches it
async def special_thing(request: web.Request) -> web.Response:
    return web.Response(status=204)


@routes.post("/uploads", name="upload")
async def upload(request: web.Request) -> web.Response:
    limits = UploadLimits(max_part_bytes=1024, max_total_bytes=4096, max_parts=4)
    async with read_multipart(request, limits=limits) as form:
        archive = form.file("archive")
        assert archive is not None
        size = archive.path.stat().st_size
        return web.json_response({"request": form.fields.get("request"), "size": size})


@routes.get("/boom", name="boom")
async def boom(request: web.Request) -> web.Response:
    raise RuntimeError("secret-internal-detail")


def make_app(**kwargs: Any) -> web.Application:
    return build_app(
        service="sample",
        spec=Spec.from_document(DOCUMENT),
        api_routes=[routes],
        **kwargs,
    )


@web.middleware
async def problem_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Problem details alone, for a test's app that is not a Wharf service."""
    try:
        return await handler(request)
    except Exception as exc:
        problem = as_problem(request, exc)
        if problem is None:
            raise
        return problem
