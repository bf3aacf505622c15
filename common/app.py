"""``build_app``: the one place that assembles a Wharf service's aiohttp application.

It fixes, for all three services, the middleware order (the envelope: request id, problem details
and metrics → the service's own guards (auth, access gate) → OpenAPI validation → handler; the
guards and validation composed per route, each route running only those it needs), the
API docs and Swagger UI, the health endpoints, ``/actuator/prometheus``, the stream registry and the
spec/route parity check. A service adds only its routes, cleanup contexts and keys. Nothing here
knows a service.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from importlib import metadata
from typing import Any, NoReturn

import attrs
from aiohttp import hdrs, web
from aiohttp.typedefs import Handler, Middleware

from common import apidocs, sse
from common.errors import PROBLEM_CONTENT_TYPE, WharfError, problem_body
from common.metrics import CLIENT_GONE, METRICS, Metrics, route_of
from common.metrics import routes as metrics_routes
from common.openapi import SPEC, Spec, check_parity, validation
from common.revocation import REVOCATIONS, Revocations
from common.routing import Guard, PerRoute, Plan, plans

logger = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-Id"
_REQUEST_ID_OK = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
#: Ids made here: this process's random prefix and a counter (a uuid4 per request costs more than
#: the rest of the middleware; ids need to be unique, not secret).
_ID_PREFIX = uuid.uuid4().hex[:16]
_id_counter = itertools.count(1)

HealthCheck = Callable[[web.Application], Awaitable[Mapping[str, Any] | None]]
#: A service with HTML pages shows some errors as a page: the page for what a request raised, or
#: None for a problem (``as_problem``).
ErrorPage = Callable[[web.Request, Exception], web.StreamResponse | None]


@attrs.frozen
class ServiceInfo:
    service: str
    base_path: str
    info: Mapping[str, Any]
    readiness: Mapping[str, HealthCheck]
    started: float


SERVICE = web.AppKey("wharf.service", ServiceInfo)
REQUEST_ID = web.RequestKey("wharf.request_id", str)


class RequestIdFilter(logging.Filter):
    """Stamps every log record with the id of the request it belongs to (``-`` outside one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        return True


def envelope_middleware(
    metrics: Metrics, error_page: ErrorPage | None = None, routes: PerRoute[Plan] | None = None
) -> Middleware:
    """The outermost middleware: what every request of every service gets, in one coroutine frame
    (three middlewares cost three frames and three ``try`` blocks per request).

    - The request id: the caller's ``X-Request-Id`` when well-formed, else a new one; on the
      request, in log records (``request_id_var``) and on the response, problems included.
    - The route's guards (``routes``, decided when the app starts: ``common.routing.plans``),
      run inside it so that their refusals are problems too.
    - Problem details: our errors, aiohttp's own HTTP errors and unknown exceptions → RFC 9457;
      or a page, where ``error_page`` gives one (here, not in a middleware of the service's own:
      one more middleware is one more coroutine for every request, pages or not).
    - Metrics: the final status of every request (problems and refusals included; 499 when the
      client left first) and its time, per route template.
    """
    observe = metrics.observe
    plan_of = routes or PerRoute(lambda route: _UNGUARDED, default=_UNGUARDED)

    @web.middleware
    async def envelope(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        given = request.headers.get(REQUEST_ID_HEADER)
        rid = (
            given
            if given and _REQUEST_ID_OK.match(given)
            else f"{_ID_PREFIX}{next(_id_counter):016x}"
        )
        request[REQUEST_ID] = rid
        token = request_id_var.set(rid)
        plan = plan_of.decided.get(request.match_info.route, plan_of.default)  # no call
        status = 500
        try:
            try:
                chain = plan.chain
                response = await (handler(request) if chain is None else chain(request, handler))
            except asyncio.CancelledError:
                status = CLIENT_GONE
                raise
            except Exception as exc:
                problem = _error_page(error_page, request, exc)
                if problem is None:
                    problem = as_problem(request, exc)
                if problem is None:
                    if isinstance(exc, web.HTTPException):
                        status = exc.status
                        exc.headers[REQUEST_ID_HEADER] = rid
                    raise
                response = problem
            if not response.prepared:
                response.headers[REQUEST_ID_HEADER] = rid
            status = response.status
            return response
        finally:
            request_id_var.reset(token)
            route = plan.template or route_of(request)
            observe(request.method, route, status, time.perf_counter() - started)

    return envelope


#: A route with no guards, its template read per request.
_UNGUARDED = Plan(None, None)


#: The type ``web.json_response`` gives a JSON body, whole: a fraction of the cost of aiohttp
#: putting it together from ``content_type`` and ``charset`` for every response.
JSON_HEADERS = {"Content-Type": "application/json; charset=utf-8"}


def encoded_json(body: bytes, status: int = 200) -> web.Response:
    """A response of JSON already encoded (a kept answer, encoded once)."""
    return web.Response(body=body, status=status, headers=JSON_HEADERS)


def _error_page(
    error_page: ErrorPage | None, request: web.Request, exc: Exception
) -> web.StreamResponse | None:
    if error_page is None:
        return None
    try:
        return error_page(request, exc)
    except Exception:  # a page that cannot be shown: the error goes on as a problem
        logger.exception("the error page for %s %s failed", request.method, request.path)
        return None


def problem_response(
    request: web.Request, body: dict[str, Any], headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.json_response(
        body, status=body["status"], content_type=PROBLEM_CONTENT_TYPE, headers=headers
    )


def as_problem(request: web.Request, exc: Exception) -> web.Response | None:
    """The problem response for what a handler raised; None for an HTTP exception that is not an
    error with a body (a redirect, a bare 404 of a HEAD), which goes on as it is. Call it inside
    the ``except`` block: an unknown exception is logged with its traceback."""
    if isinstance(exc, WharfError):
        return problem_response(request, exc.to_problem(instance=request.path), exc.headers)
    if isinstance(exc, web.HTTPException):
        if exc.status < 400 or exc.empty_body:
            return None
        return problem_response(request, _http_problem(request, exc), _keep_headers(exc))
    rid = request.get(REQUEST_ID, "-")
    logger.exception("unhandled error in %s %s", request.method, request.path)
    body = problem_body(
        status=500,
        detail=f"internal server error; quote request id {rid} when reporting it",
        instance=request.path,
        code="internal-error",
        extra={"requestId": rid},
    )
    return problem_response(request, body)


def _http_problem(request: web.Request, exc: web.HTTPException) -> dict[str, Any]:
    details = {
        404: f"no resource at {request.path}",
        405: f"method {request.method} is not allowed on {request.path}",
        413: "request body is larger than this endpoint accepts",
    }
    codes = {404: "not-found", 405: "method-not-allowed", 413: "payload-too-large"}
    detail = details.get(exc.status) or exc.reason
    return problem_body(
        status=exc.status, detail=detail, instance=request.path, code=codes.get(exc.status)
    )


def _keep_headers(exc: web.HTTPException) -> dict[str, str]:
    keep = ("Allow", "WWW-Authenticate", "Retry-After", REQUEST_ID_HEADER)
    return {k: v for k, v in exc.headers.items() if k in keep}


def _live_tasks() -> float:
    try:
        return len(asyncio.all_tasks())
    except RuntimeError:  # read outside the service's loop: nothing to count there
        return 0


def _in_matching_order(tables: Sequence[web.RouteTableDef]) -> list[web.RouteDef]:
    """The routes of ``tables``, those of each concrete path together and before every templated
    one: OpenAPI matches a concrete path (``/repos/pull``) before a templated one that also
    matches it (``/repos/{name}``), and aiohttp tries resources in the order they were added.
    On a concrete path its GET goes first: the reads polled most find their route at the first
    try (each method is a resource of its own, named by its operationId)."""
    routes = [route for table in tables for route in table]
    assert all(isinstance(route, web.RouteDef) for route in routes)
    defs = [route for route in routes if isinstance(route, web.RouteDef)]
    return sorted(
        defs,
        key=lambda r: (True, "", False) if "{" in r.path else (False, r.path, r.method != "GET"),
    )


def _answer_other_methods(app: web.Application, base: str, paths: dict[str, set[str]]) -> None:
    """On each concrete path, a method the spec does not document there is a 405 naming the ones
    it does, not a call of a templated operation that also matches the path. (HEAD is not
    served either: the spec lists it nowhere, so every ``Allow`` names exactly the documented
    methods.)"""
    for path, methods in paths.items():
        allowed = sorted(methods)

        async def not_allowed(request: web.Request, allowed: list[str] = allowed) -> NoReturn:
            raise web.HTTPMethodNotAllowed(request.method, allowed)

        app.router.add_route(hdrs.METH_ANY, base + path, not_allowed)


def build_app(
    *,
    service: str,
    spec: Spec,
    api_routes: Sequence[web.RouteTableDef],
    base_path: str = "/api/v1",
    extra_routes: Sequence[web.RouteTableDef] = (),
    guards: Sequence[Guard] = (),
    error_page: ErrorPage | None = None,
    ui_path: str = apidocs.UI_PATH,
    info: Mapping[str, Any] | None = None,
    readiness: Mapping[str, HealthCheck] | None = None,
    client_max_size: int = 1024 * 1024,
    keepalive_s: float = sse.KEEPALIVE_INTERVAL_S,
) -> web.Application:
    """Assemble a service; raises ``RuntimeError`` when the routes and the spec disagree."""
    base = "/" + base_path.strip("/") if base_path.strip("/") else ""
    metrics = Metrics(service)
    per_route = plans([*guards, validation(spec)])
    app = web.Application(
        middlewares=[envelope_middleware(metrics, error_page, per_route)],
        client_max_size=client_max_size,
    )
    per_route.install(app)
    app[SPEC] = spec
    app[METRICS] = metrics
    app[SERVICE] = ServiceInfo(service, base, dict(info or {}), dict(readiness or {}), time.time())
    sse.install(app, keepalive_s=keepalive_s)
    app[REVOCATIONS] = Revocations(app[sse.STREAMS], channel=f"{service}_revoked")
    streams = app[sse.STREAMS].streams
    metrics.gauge("wharf_sse_streams", "Open Server-Sent Events streams.", lambda: len(streams))
    metrics.gauge(
        "wharf_asyncio_tasks",
        "Asyncio tasks alive in the service's event loop (a leak shows as growth).",
        _live_tasks,
    )
    relative = []
    concrete: dict[str, set[str]] = {}
    routes = _in_matching_order(api_routes)
    for route in routes:
        if "{" in route.path and concrete:  # the concrete paths are all in: close them
            _answer_other_methods(app, base, concrete)
            concrete = {}
        kwargs = {k: v for k, v in route.kwargs.items() if k != "allow_head"}
        app.router.add_route(route.method, base + route.path, route.handler, **kwargs)
        relative.append((route.method, route.path, kwargs.get("name", "")))
        if "{" not in route.path:
            concrete.setdefault(route.path, set()).add(route.method)
    _answer_other_methods(app, base, concrete)
    for table in extra_routes:
        app.router.add_routes(table)
    drift = check_parity(relative, spec)
    if drift:
        raise RuntimeError(f"{service}: spec and routes disagree: " + "; ".join(drift))
    app.router.add_routes(health_routes)
    app.router.add_routes(metrics_routes)
    apidocs.add_routes(app, base_path=base, ui_path=ui_path)
    return app


health_routes = web.RouteTableDef()


@health_routes.get("/actuator/health")
async def health(request: web.Request) -> web.Response:
    ready = await _readiness(request.app)
    status = "UP" if ready["status"] == "UP" else "DOWN"
    body = {"status": status, "components": {"liveness": {"status": "UP"}, "readiness": ready}}
    return web.json_response(body, status=200 if status == "UP" else 503)


#: The liveness answer never changes: encoded once (probes ask every few seconds, and the JSON
#: encoding cost more than the rest of the handler).
_LIVE = json.dumps({"status": "UP"}).encode("utf-8")


@health_routes.get("/actuator/health/liveness")
async def liveness(request: web.Request) -> web.Response:
    return encoded_json(_LIVE)


@health_routes.get("/actuator/health/readiness")
async def readiness(request: web.Request) -> web.Response:
    ready = await _readiness(request.app)
    return web.json_response(ready, status=200 if ready["status"] == "UP" else 503)


async def _readiness(app: web.Application) -> dict[str, Any]:
    components: dict[str, Any] = {}
    for name, check in app[SERVICE].readiness.items():
        try:
            details = await check(app)
        except Exception as exc:  # a failing check is the answer, not an error
            components[name] = {"status": "DOWN", "details": {"error": type(exc).__name__}}
        else:
            components[name] = {"status": "UP", **({"details": details} if details else {})}
    down = any(c["status"] != "UP" for c in components.values())
    return {"status": "DOWN" if down else "UP", "components": components}


@health_routes.get("/actuator/info")
async def info(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = {
        "app": {"name": "wharf", "service": svc.service, "version": wharf_version()},
        "uptimeSeconds": round(time.time() - svc.started, 3),
        **svc.info,
    }
    return web.json_response(body)


def wharf_version() -> str:
    try:
        return metadata.version("wharf")
    except metadata.PackageNotFoundError:
        return "0+unknown"
