"""Routes of sign-in: ``POST /auth/session`` issues the ``JSESSIONID`` cookie, ``DELETE`` ends it.

The middleware in ``console.auth`` has already checked any Basic header (a wrong one never gets
here); this module decides what a sign-in answers. A new session id is issued on every sign-in so
a cookie planted before it is worth nothing after (session fixation).
"""

from __future__ import annotations

from aiohttp import web

from common import sessions
from common.errors import Unauthorized
from console.auth import COOKIE, PRINCIPAL
from console.http.encode.instance import encode_session
from console.keys import AUTH

routes = web.RouteTableDef()


@routes.post("/auth/session", name="createSession")
async def create_session(request: web.Request) -> web.Response:
    principal = request.get(PRINCIPAL)
    if principal is None:
        raise Unauthorized("not signed in: send HTTP Basic credentials to sign in")
    policy = request.app[AUTH]
    response = web.json_response(encode_session(principal, policy.sessions.idle_seconds))
    if principal.via == "basic":
        if old := request.cookies.get(COOKIE):
            await policy.sessions.end(sessions.session_id(old))
        made = await policy.sessions.create(principal.session_subject)
        sessions.set_cookie(response, COOKIE, made.cookie, secure=sessions.is_https(request))
    return response


@routes.delete("/auth/session", name="deleteSession")
async def delete_session(request: web.Request) -> web.Response:
    if cookie := request.cookies.get(COOKIE):
        await request.app[AUTH].sessions.end(sessions.session_id(cookie))
    response = web.Response(status=204)
    sessions.clear_cookie(response, COOKIE)
    return response
