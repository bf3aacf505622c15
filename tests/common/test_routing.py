"""``common.routing``: decided per route when the app starts (``PerRoute``, ``plans``); the default
elsewhere."""

from __future__ import annotations

from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from aiohttp.typedefs import Handler, Middleware
from pytest_aiohttp import AiohttpClient

from common.routing import PerRoute, plans


async def test_each_route_is_decided_at_start_and_unknown_ones_get_the_default(
    aiohttp_client: AiohttpClient,
) -> None:
    decided: list[str] = []

    def decide(route: web.AbstractRoute) -> str:
        decided.append(f"{route.method} {route.name}")
        return f"{route.method} {route.name}"

    per_route = PerRoute(decide, default="undecided")

    @web.middleware
    async def tell(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as exc:  # aiohttp's 404 and 405 routes raise
            exc.headers["X-Decided"] = per_route(request)
            raise
        response.headers["X-Decided"] = per_route(request)
        return response

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application(middlewares=[tell])
    app.router.add_get("/a", ok, name="a", allow_head=False)
    app.router.add_post("/b", ok, name="b")
    per_route.install(app)
    client = await aiohttp_client(app)
    assert sorted(decided) == ["GET a", "POST b"]  # once each, at start
    assert (await client.get("/a")).headers["X-Decided"] == "GET a"
    assert (await client.post("/b")).headers["X-Decided"] == "POST b"
    assert (await client.get("/a")).headers["X-Decided"] == "GET a"
    assert len(decided) == 2  # never again per request
    for answer in (await client.get("/nowhere"), await client.post("/a")):
        assert answer.status in (404, 405)
        assert answer.headers["X-Decided"] == "undecided"  # routes aiohttp makes per request


async def test_plans_run_on_each_route_only_the_guards_made_for_it_in_order(
    aiohttp_client: AiohttpClient,
) -> None:
    ran: list[str] = []

    def mark(name: str) -> Middleware:
        @web.middleware
        async def marked(request: web.Request, handler: Handler) -> web.StreamResponse:
            ran.append(name)
            return await handler(request)

        return marked

    outer, inner, fallback = mark("outer"), mark("inner"), mark("undecided")

    def first(route: web.AbstractRoute | None) -> Middleware | None:
        return fallback if route is None else outer if route.name != "bare" else None

    def second(route: web.AbstractRoute | None) -> Middleware | None:
        return inner if route is not None and route.name == "both" else None

    per_route = plans([first, second])

    @web.middleware
    async def run_plan(request: web.Request, handler: Handler) -> web.StreamResponse:
        chain = per_route(request).chain
        return await (handler(request) if chain is None else chain(request, handler))

    async def ok(request: web.Request) -> web.Response:
        ran.append("handler")
        return web.Response(text="ok")

    app = web.Application(middlewares=[run_plan])
    for name in ("bare", "one", "both"):
        app.router.add_get(f"/{name}", ok, name=name, allow_head=False)
    per_route.install(app)
    client = await aiohttp_client(app)
    seen = {}
    for path in ("/bare", "/one", "/both", "/nowhere"):
        ran.clear()
        await client.get(path)
        seen[path] = list(ran)
    assert seen == {
        "/bare": ["handler"],
        "/one": ["outer", "handler"],
        "/both": ["outer", "inner", "handler"],  # the guards' order, the first outermost
        "/nowhere": ["undecided"],  # aiohttp's 404 route: what the guards make for None
    }
    assert per_route(make_mocked_request("GET", "/x")).template is None
