"""Account pages: ``/login`` (form, CSRF-protected), ``/logout``, and ``/profile`` (API tokens).

CSRF: the login form uses a double-submit token (a random value in a SameSite=Strict, HttpOnly
cookie scoped to ``/login`` and in the form; both must match), since there is no session yet.
Forms of a logged-in user carry the session's own CSRF value. A new session is issued at every login
and the previous one deleted (no session fixation). A new token's value is rendered once, in the
response to the form post, with ``Cache-Control: no-store``; it is never put in a URL or stored.
Passwords and token values are never logged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from common import credentials, sessions
from common.errors import BadRequest
from common.throttle import TooManyAttempts
from results import auth, keys
from results.accounts import Credential, LoginFailed, NewSession, Principal
from results.web.render import form_text, page, see_other

logger = logging.getLogger(__name__)
routes = web.RouteTableDef()
LOGIN_CSRF_COOKIE = "results_login_csrf"
LOGIN_CSRF_SECONDS = 3600


#: What a page says of a form whose CSRF token is missing or wrong.
FORM_CSRF_REFUSED = (
    "the form's CSRF token is missing or does not match; reload the page and try again"
)


@routes.get("/login", name="page.login")
async def login_form(request: web.Request) -> web.Response:
    return _login_page(request, next_path=request.query.get("next"))


@routes.post("/login", name="page.login_submit")
async def login_submit(request: web.Request) -> web.Response:
    form = await request.post()
    next_path = form_text(form, "next")
    expected = request.cookies.get(LOGIN_CSRF_COOKIE, "")
    given = form_text(form, "csrf")
    if not expected or not given or not credentials.same_secret(given, expected):
        return _login_page(request, next_path=next_path, status=403, error=FORM_CSRF_REFUSED)
    username = form_text(form, "username").strip()
    password = form_text(form, "password")

    async def verify() -> NewSession:
        _, new = await request.app[keys.ACCOUNTS].login(username, password)
        return new

    try:
        new = await request.app[keys.LOGIN_THROTTLE].attempt(username, request.remote, verify)
    except TooManyAttempts as exc:
        refused = _login_page(request, next_path=next_path, status=429, error=exc.detail)
        refused.headers.update(exc.headers)
        return refused
    except LoginFailed as exc:
        logger.info("failed login for %r", username[:64])
        return _login_page(request, next_path=next_path, status=401, error=exc.detail)
    await _end_previous_session(request)
    response = see_other(auth.safe_next(next_path))
    _set_session_cookie(request, response, new.cookie)
    response.del_cookie(LOGIN_CSRF_COOKIE, path="/login")
    return response


@routes.post("/logout", name="page.logout")
async def logout(request: web.Request) -> web.Response:
    who = auth.principal(request)
    if who is not None and who.session_id is not None:
        _check_csrf(who, await request.post())
        await request.app[keys.ACCOUNTS].logout(who.session_id)
    response = see_other(auth.LOGIN_PATH)
    sessions.clear_cookie(response, auth.SESSION_COOKIE)
    return response


@routes.get("/profile", name="page.profile")
async def profile(request: web.Request) -> web.Response:
    return await _profile_page(request, _signed_in(request))


@routes.post("/profile/tokens", name="page.token_create")
async def create_token(request: web.Request) -> web.Response:
    who = _signed_in(request)
    form = await request.post()
    _check_csrf(who, form)
    days = _expiry_days(form_text(form, "expires_days"))
    made = await request.app[keys.ACCOUNTS].create_token(
        who.user, form_text(form, "name"), expires_days=days
    )
    return await _profile_page(request, who, new_token=made.value, new_name=made.token.name)


@routes.post(r"/profile/tokens/{token_id:\d{1,18}}/revoke", name="page.token_revoke")
async def revoke_token(request: web.Request) -> web.Response:
    who = _signed_in(request)
    _check_csrf(who, await request.post())
    await request.app[keys.ACCOUNTS].revoke_token(who.user, int(request.match_info["token_id"]))
    return see_other("/profile")


def _login_page(
    request: web.Request, *, next_path: str | None, status: int = 200, error: str | None = None
) -> web.Response:
    csrf = credentials.new_secret()
    response = page(
        request, "login.html", status=status, csrf=csrf, next=auth.safe_next(next_path), error=error
    )
    response.set_cookie(
        LOGIN_CSRF_COOKIE,
        csrf,
        max_age=LOGIN_CSRF_SECONDS,
        path="/login",
        httponly=True,
        samesite="Strict",
        secure=_secure(request),
    )
    return response


async def _profile_page(
    request: web.Request, who: Principal, *, new_token: str | None = None, new_name: str = ""
) -> web.Response:
    accounts = request.app[keys.ACCOUNTS]
    tokens = await accounts.tokens(who.user)
    now = accounts.clock()
    rows = [(token, token.state(now)) for token in tokens]
    return page(
        request, "profile.html", user=who.user, tokens=rows, new_token=new_token, new_name=new_name
    )


def _signed_in(request: web.Request) -> Principal:
    who = auth.principal(request)
    assert who is not None, "results.auth sends anonymous /profile requests to /login"
    return who


def _check_csrf(who: Principal, form: Mapping[str, Any]) -> None:
    given = form_text(form, "csrf")
    if who.via is not Credential.SESSION or who.csrf is None or not given:
        raise auth.CsrfRefused(FORM_CSRF_REFUSED)
    if not credentials.same_secret(given, who.csrf):
        raise auth.CsrfRefused(FORM_CSRF_REFUSED)


def _expiry_days(text: str) -> int | None:
    if not text.strip():
        return None
    if not text.strip().isdigit():
        raise BadRequest("expiry must be a whole number of days", code="invalid-expiry")
    return int(text.strip())


async def _end_previous_session(request: web.Request) -> None:
    who = auth.principal(request)
    if who is not None and who.session_id is not None:
        await request.app[keys.ACCOUNTS].logout(who.session_id)


def _set_session_cookie(request: web.Request, response: web.Response, value: str) -> None:
    ttl = request.app[keys.ACCOUNTS].session_ttl
    sessions.set_cookie(
        response, auth.SESSION_COOKIE, value, secure=_secure(request), max_age=ttl.total_seconds()
    )


def _secure(request: web.Request) -> bool:
    return auth.cookie_secure(request, request.app[keys.SETTINGS].security.cookie_secure)
