"""Routes of sign-in: ``POST /auth/session`` issues the ``JSESSIONID`` cookie, ``DELETE`` ends it.

The middleware in ``console.auth`` has already checked any Basic header (a wrong one never gets
here); this module decides what a sign-in answers. A new session id is issued on every sign-in so
a cookie planted before it is worth nothing after (session fixation).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.errors import Unauthorized
from console.auth import PRINCIPAL, Principal
from console.keys import AUTH
from console.sessions import COOKIE

routes = web.RouteTableDef()


@routes.post("/auth/session", name="createSession")
async def create_session(request: web.Request) -> web.Response:
    principal = request.get(PRINCIPAL)
    if principal is None:
        raise Unauthorized("not signed in: send HTTP Basic credentials to sign in")
    policy = request.app[AUTH]
    response = web.json_response(_session(principal, policy.sessions.idle_seconds))
    if principal.via == "basic":
        if old := request.cookies.get(COOKIE):
            await policy.sessions.end(old)
        session_id = await policy.sessions.create(principal.user)
        response.set_cookie(
            COOKIE, session_id, path="/", httponly=True, samesite="Lax", secure=_https(request)
        )
    return response


@routes.delete("/auth/session", name="deleteSession")
async def delete_session(request: web.Request) -> web.Response:
    if session_id := request.cookies.get(COOKIE):
        await request.app[AUTH].sessions.end(session_id)
    response = web.Response(status=204)
    response.del_cookie(COOKIE, path="/", httponly=True, samesite="Lax")
    return response


def _session(principal: Principal, idle_seconds: float) -> dict[str, Any]:
    return {
        "authenticated": True,
        "user": principal.user,
        "username": principal.user,
        "via": principal.via,
        "idleTimeoutSeconds": int(idle_seconds),
    }


def _https(request: web.Request) -> bool:
    return request.secure or request.headers.get("X-Forwarded-Proto", "").lower() == "https"
