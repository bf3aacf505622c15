"""The simulator's aiohttp application: authentication, ``Status`` errors and the route table.

Discovery, ``/version`` and ``/openapi`` are answered here; resource URLs go to ``handlers``.
Everything that fails is answered with a ``metav1.Status`` body, never an HTML error page.
"""

from __future__ import annotations

import collections
import json
import logging
from collections.abc import Awaitable, Callable

import yaml
from aiohttp import web

from kubesim.api import params
from kubesim.encoding import protoencode
from kubesim.http import (
    auth,
    differences,
    discovery,
    handlers,
    health,
    openapiv2,
    responses,
    standin,
)
from kubesim.http.state import STATE, State
from kubesim.machinery.status import KubeError

logger = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
routes = web.RouteTableDef()
VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.4",
    "gitCommit": "59526cd4867447956156ae3a602fcbac10a2c335",
    "gitTreeState": "clean",
    "buildDate": "2025-04-22T16:02:27Z",
    "goVersion": "go1.23.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}
#: On ``/version``: this server is the Wharf simulator; the value is where its differences are.
SIMULATOR_HEADER = "X-Kubesim"
_NOT_FOUND = "the server could not find the requested resource"
# kube-apiserver's limit on a request body (apiserver.MaxRequestBodyBytes).
MAX_REQUEST_BYTES = 3 * 1024 * 1024


def status_response(exc: KubeError) -> web.Response:
    return web.Response(
        body=json.dumps(exc.status(), separators=(",", ":")).encode(),
        status=exc.code,
        content_type="application/json",
        headers=exc.headers or None,
    )


@web.middleware
async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except KubeError as exc:
        return status_response(exc)
    except web.HTTPMethodNotAllowed:
        return status_response(
            KubeError(405, "the server does not allow this method on the requested resource")
        )
    except web.HTTPRequestEntityTooLarge:
        return status_response(
            KubeError(
                413,
                f"Request entity too large: limit is {MAX_REQUEST_BYTES}",
                reason="RequestEntityTooLarge",
            )
        )
    except web.HTTPNotFound:
        return status_response(KubeError(404, _NOT_FOUND, details={}))
    except web.HTTPException:
        raise
    except Exception:  # a simulator bug: a Status as a real server's panic filter answers, no trace
        logger.exception("kubesim: %s %s failed", request.method, request.path)
        return status_response(
            KubeError(500, "Internal error occurred: the simulator failed (see its log)")
        )


def _prefers_yaml(accept: str) -> bool:
    for part in accept.split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media in ("application/json", "*/*", "application/*"):
            return False
        if media == "application/yaml":
            return True
    return False


def _as_protobuf(request: web.Request, response: web.Response) -> web.Response:
    """A JSON answer re-encoded as protobuf; for a kind without a protobuf form, JSON when the
    Accept header also lists it, else 406 (as kube-apiserver answers for custom resources)."""
    encoded = protoencode.encode(json.loads(response.body))  # type: ignore[arg-type]
    if encoded is None:  # no protobuf form (custom resources): JSON if the client takes it
        if params.accepts_json(request.headers.get("Accept", "")):
            return response
        return status_response(params.not_acceptable(protobuf=False))
    response.body = encoded
    response.content_type = params.PROTOBUF
    return response


@web.middleware
async def negotiate(request: web.Request, handler: Handler) -> web.StreamResponse:
    """``Accept: application/yaml`` gets YAML and a protobuf-first Accept gets protobuf, as from
    kube-apiserver (watches stay JSON, so a protobuf-only watch is refused with 406)."""
    protobuf = params.prefers_protobuf(request.headers.get("Accept", ""))
    if protobuf and request.query.get("watch") in ("true", "1"):
        return status_response(params.not_acceptable(protobuf=False))
    response = await handler(request)
    if (
        protobuf
        and isinstance(response, web.Response)
        and response.content_type == "application/json"
        and isinstance(response.body, bytes)
    ):
        return _as_protobuf(request, response)
    if (
        isinstance(response, web.Response)
        and response.content_type == "application/json"
        and isinstance(response.body, bytes)
        and _prefers_yaml(request.headers.get("Accept", ""))
    ):
        text = yaml.safe_dump(json.loads(response.body), sort_keys=False)
        response.body = text.encode()
        response.content_type = "application/yaml"
    return response


def _json(body: object, *, content_type: str = "application/json") -> web.Response:
    return web.Response(
        body=json.dumps(body, separators=(",", ":")).encode(),
        headers={"Content-Type": content_type},
    )


@routes.get("/version")
async def version(request: web.Request) -> web.Response:
    response = _json(VERSION)
    response.headers[SIMULATOR_HEADER] = differences.PATH  # "a simulator; its differences: there"
    return response


@routes.get(differences.PATH)
async def known_differences(request: web.Request) -> web.Response:
    """Where this simulator knowingly differs from kube-apiserver (not a Kubernetes path)."""
    return _json({"document": "kubesim/README.md", "differences": differences.differences()})


def _discovery(request: web.Request, *, core: bool) -> web.Response | None:
    if discovery.wants_aggregated(request.headers.get("Accept", "")):
        doc = discovery.aggregated(request.app[STATE].objects.registry, core=core)
        return _json(doc, content_type=discovery.AGGREGATED_CONTENT_TYPE)
    return None


@routes.get("/api")
async def api(request: web.Request) -> web.Response:
    state = request.app[STATE]
    return _discovery(request, core=True) or _json(discovery.api_versions(state.server_address))


@routes.get("/apis")
async def apis(request: web.Request) -> web.Response:
    registry = request.app[STATE].objects.registry
    return _discovery(request, core=False) or _json(discovery.api_group_list(registry))


@routes.get("/api/{version}")
async def core_resources(request: web.Request) -> web.Response:
    doc = discovery.api_resource_list(
        request.app[STATE].objects.registry, "", request.match_info["version"]
    )
    if doc is None:
        raise KubeError(404, _NOT_FOUND, details={})
    return _json(doc)


@routes.get("/apis/{group}")
async def group(request: web.Request) -> web.Response:
    doc = discovery.api_group(request.app[STATE].objects.registry, request.match_info["group"])
    if doc is None:
        raise KubeError(404, _NOT_FOUND, details={})
    return _json(doc)


@routes.get("/apis/{group}/{version}")
async def group_resources(request: web.Request) -> web.Response:
    doc = discovery.api_resource_list(
        request.app[STATE].objects.registry,
        request.match_info["group"],
        request.match_info["version"],
    )
    if doc is None:
        raise KubeError(404, _NOT_FOUND, details={})
    return _json(doc)


@routes.get("/openapi/v2")
async def openapi_v2(request: web.Request) -> web.Response:
    json_body, proto_body, digest = request.app[STATE].openapi.v2()
    accepted = [m.split(";")[0].strip() for m in request.headers.get("Accept", "*/*").split(",")]
    headers = {"Etag": f'"{digest}"', "Vary": "Accept"}
    if set(openapiv2.PROTOBUF_ACCEPTED) & set(accepted):
        return web.Response(
            body=proto_body, headers={**headers, "Content-Type": openapiv2.PROTOBUF}
        )
    if not {"application/json", "application/*", "*/*"} & set(accepted):
        raise KubeError(406, "the server could not produce any of the accepted media types")
    return web.Response(body=json_body, headers={**headers, "Content-Type": "application/json"})


@routes.get("/openapi/v3")
async def openapi_index(request: web.Request) -> web.Response:
    return _json(request.app[STATE].openapi.index())


@routes.get("/openapi/v3/{path:.+}")
async def openapi_document(request: web.Request) -> web.Response:
    try:
        body, digest = request.app[STATE].openapi.document(request.match_info["path"])
    except KeyError:
        raise KubeError(404, _NOT_FOUND, details={}) from None
    headers = {"Content-Type": "application/json", "Etag": f'"{digest}"'}
    if request.query.get("hash") == digest:
        headers["Cache-Control"] = "public, immutable"
    return web.Response(body=body, headers=headers)


def _resource_routes() -> list[web.RouteDef]:
    out = []
    for path in ("/api/{version}/{tail:.+}", "/apis/{group}/{version}/{tail:.+}"):
        out.append(web.route("*", path, handlers.resource))
    return out


def create_app(state: State) -> web.Application:
    app = web.Application(
        middlewares=[health.count_requests, negotiate, errors, auth.authenticate],
        client_max_size=MAX_REQUEST_BYTES,
    )
    app[STATE] = state
    app[health.COUNTS] = collections.Counter()
    app.add_routes(routes)
    app.add_routes(health.routes)
    app.add_routes(_resource_routes())
    app.on_response_prepare.append(responses.send_warnings)

    async def close_streams(app: web.Application) -> None:
        app[STATE].objects.store.close()

    app.on_shutdown.append(close_streams)
    app.cleanup_ctx.append(standin.context)
    return app
