"""``common.routing.PerRoute``: decided per route when the app starts; the default elsewhere."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler
from pytest_aiohttp import AiohttpClient

from common.routing import PerRoute


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
