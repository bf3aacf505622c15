"""``GET /me``: the account the request authenticated as (the auth middleware refuses anonymous)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from results import auth
from results.users import Principal

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


def encode_principal(principal: Principal) -> dict[str, Any]:
    user = principal.user
    return {
        "username": user.username,
        "displayName": user.display_name,
        "email": user.email,
        "role": user.role.value,
        "authenticatedBy": principal.via.value,
    }
