"""``GET /me``: the account the request authenticated as (the auth middleware refuses anonymous)."""

from __future__ import annotations

from aiohttp import web

from results import auth
from results.encoders import encode_principal

routes = web.RouteTableDef()


@routes.get("/me", name="getMe")
async def get_me(request: web.Request) -> web.Response:
    found = auth.principal(request)
    assert found is not None, "results.auth lets no anonymous request reach /me"
    response = web.json_response(encode_principal(found))
    if found.csrf is not None:  # a session: what its API writes must echo (see results.auth)
        response.headers[auth.CSRF_HEADER] = found.csrf
        response.headers["Cache-Control"] = "no-store"
    return response
