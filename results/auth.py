"""Who is calling, and whether they may: the results service's authentication middleware.

Credentials, in order: ``Authorization: Bearer <token>``, ``X-Results-Token: <token>``, then the
session cookie from the ``/login`` form. Every token presented must be valid: one that is unknown,
revoked or expired is a 401 wherever it is sent, even beside a valid one in the other header (a
silent fall-back would hide the mistake). An unknown or expired session cookie alone is simply no
session; beside a token it must be a valid session of the token's user. A credential header or
cookie sent twice is a 401 (``common.presented``, the rule of every service).

A session cookie is sent by the browser on its own, so an API write (any method but GET/HEAD/OPTIONS)
honours it only with the session's CSRF value in ``X-CSRF-Token`` (``GET /api/v1/me`` returns it in
that response header); a wrong value is a 403, a missing one leaves the write anonymous.

Rules: ``GET /api/v1/me`` always needs a principal; ingest needs a token when
``require-ingest-token`` is set; with ``open-mode`` off every API call and page needs a principal.
An API call without one gets a 401 problem, a page a redirect to ``/login``. Visibility of private
projects is not decided here but by :func:`results.accounts.can_read`, which the doors reach through
:func:`can_read` (the API's handlers and the pages alike).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from urllib.parse import quote

import attrs
from aiohttp import hdrs, web
from aiohttp.typedefs import Handler, Middleware

from common import credentials, pages, sessions, sse
from common.errors import Forbidden, Unauthorized
from common.openapi import Operation, Spec
from common.presented import ConflictingCredentials, one_cookie, one_header
from common.routing import Guard
from results import accounts, keys
from results.runs import CanRead
from results.settings import CookieSecure
from results.users import Credential, Principal

SESSION_COOKIE = "results_session"
TOKEN_HEADER = "X-Results-Token"  # noqa: S105 - a header name
CSRF_HEADER = "X-CSRF-Token"
LOGIN_PATH = "/login"
#: Paths anyone reaches in every mode: the login form itself, health probes and the API docs.
PUBLIC_PREFIXES = (
    "/login",
    "/actuator/",
    "/v3/api-docs",
    "/swagger-ui",
    "/favicon.ico",
    pages.STYLESHEET_PATH,  # the login page's look
)
#: Pages that need a login even in open mode: they show or change a person's own credentials.
PERSONAL_PREFIXES = ("/profile",)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="results"'}


@attrs.frozen
class AuthPolicy:
    open_mode: bool = True
    require_ingest_token: bool = False
    base_path: str = "/api/v1"
    #: ``base_path`` as request paths spell it, made once.
    api_base: str = attrs.field(init=False)

    @api_base.default
    def _api_base(self) -> str:
        return "/" + self.base_path.strip("/")


class AuthenticationRequired(Unauthorized):
    def __init__(self, detail: str, *, code: str = "unauthorized") -> None:
        super().__init__(detail, code=code, headers=CHALLENGE)


class InvalidToken(Unauthorized, code="invalid-token"):
    def __init__(self) -> None:
        super().__init__(
            "the API token is not valid: unknown, revoked or expired",
            headers={"WWW-Authenticate": 'Bearer realm="results", error="invalid_token"'},
        )


def principal(request: web.Request) -> Principal | None:
    """Who the request runs as; None for an anonymous one."""
    return request[keys.PRINCIPAL]


def can_read(request: web.Request) -> CanRead:
    """The request's principal as the ``CanRead`` the domain asks for (anonymous: PUBLIC only).

    Visibility itself is decided by ``results.accounts.can_read``, not here."""
    return functools.partial(accounts.can_read, principal(request))


class CsrfRefused(Forbidden, code="csrf-refused"):
    """A cookie-authenticated write whose CSRF value is missing or wrong (API header or form)."""

    def __init__(
        self,
        detail: str = f"the {CSRF_HEADER} header does not match this session's CSRF value "
        "(GET /api/v1/me returns it)",
    ) -> None:
        super().__init__(detail)


def presented_tokens(request: web.Request) -> list[str]:
    """The tokens sent, Bearer first; the same value in both headers counts once. A header sent
    twice is a 401 (``common.presented``)."""
    found: list[str] = []
    authorization = one_header(request.headers, hdrs.AUTHORIZATION) or ""
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        found.append(value.strip())
    header = (one_header(request.headers, TOKEN_HEADER) or "").strip()
    if header and header not in found:
        found.append(header)
    return found


async def resolve(request: web.Request) -> Principal | None:
    """The request's principal. Every credential sent must hold, and all name one person: a bad
    session cookie beside a good token is a 401, as is a cookie of someone else (issue 39)."""
    accounts = request.app[keys.ACCOUNTS]
    tokens = presented_tokens(request)
    cookie = one_cookie(request.headers, request.cookies, SESSION_COOKIE)
    session = await accounts.session_principal(cookie) if cookie else None
    if not tokens:
        return session
    principals = [await accounts.token_principal(token) for token in tokens]
    first = principals[0]
    if first is None or any(p is None or p.user != first.user for p in principals):
        raise InvalidToken()
    if cookie and (session is None or session.user != first.user):
        raise ConflictingCredentials()
    return first


@attrs.frozen
class Place:
    """What the rules read of where a request goes."""

    public: bool  # a public path: a bad credential is ignored there, and no login is asked
    api: bool  # under the API's base path
    target: tuple[str, str]  # its operation's (method, spec path); (method, "") outside the spec
    page_login: bool  # a page that needs a login when no one is signed in


def _place(method: str, path: str, op: Operation | None, policy: AuthPolicy) -> Place:
    base = policy.api_base
    public = path.startswith(PUBLIC_PREFIXES)
    return Place(
        public=public,
        api=path == base or path.startswith(base + "/"),
        target=(op.method, op.path) if op is not None else (method, ""),
        page_login=not public and (not policy.open_mode or path.startswith(PERSONAL_PREFIXES)),
    )


def _route_place(
    route: web.AbstractRoute, policy: AuthPolicy, op: Operation | None
) -> Place | None:
    """The place of a route whose path has no variables: its path is its template, so every
    request to it lands alike. None for the others (and for a route taking any method): their
    requests are placed one by one."""
    resource = route.resource
    if route.method == hdrs.METH_ANY or not isinstance(resource, web.PlainResource):
        return None
    return _place(route.method, resource.canonical, op, policy)


def auth_guard(policy: AuthPolicy, spec: Spec) -> Guard:
    """Authenticate by ``policy``, each route at the place decided for it when the app starts."""

    def for_route(route: web.AbstractRoute | None) -> Middleware:
        if route is None:  # aiohttp's 404 and 405 routes: no operation
            return _authenticating(policy, None, None)
        op = spec.operations.get(route.name) if route.name else None
        return _authenticating(policy, _route_place(route, policy, op), op)

    return for_route


def _authenticating(policy: AuthPolicy, fixed: Place | None, op: Operation | None) -> Middleware:
    """The guard of one route: ``fixed`` its place (None: placed per request, the route's
    operation ``op`` decided already)."""

    def place_of(request: web.Request) -> Place:
        if fixed is not None:
            return fixed
        return _place(request.method, request.path, op, policy)

    def admit(request: web.Request, place: Place, found: Principal | None) -> None:
        if place.api:
            _check_api(place.target, policy, found)
        elif found is None and place.page_login:
            raise web.HTTPFound(f"{LOGIN_PATH}?next={quote(request.path_qs, safe='/?=&')}")

    async def authenticated(
        request: web.Request, handler: Handler, *, place: Place
    ) -> web.StreamResponse:
        found = await (_quiet_resolve(request) if place.public else resolve(request))
        if place.api and found is not None and _cookie_write(request, found):
            found = _with_csrf(request, found)  # see the docstring
        if found is not None:
            request[keys.PRINCIPAL] = found
            request[sse.CREDENTIAL] = stream_credential(found)
        admit(request, place, found)
        return await handler(request)

    anonymous_passes = fixed is not None and _admits_anonymous(fixed, policy)

    # Not a coroutine: a request with no credential (a CI gate check, a badge, an open-mode
    # dashboard: most polls) is judged here, without parsing, and hands over the handler's
    # awaitable; one carrying any header ``resolve`` reads is resolved by ``authenticated``.
    @web.middleware
    def authenticate(request: web.Request, handler: Handler) -> Awaitable[web.StreamResponse]:
        # Anonymous until resolved: an error page for a refused credential renders as anonymous.
        request[keys.PRINCIPAL] = None
        headers = request.headers
        if hdrs.AUTHORIZATION in headers or TOKEN_HEADER in headers or hdrs.COOKIE in headers:
            return authenticated(request, handler, place=place_of(request))
        if not anonymous_passes:
            admit(request, place_of(request), None)
        return handler(request)

    return authenticate


def _admits_anonymous(place: Place, policy: AuthPolicy) -> bool:
    """Whether a request that names no one passes at ``place`` (decided once for a route's)."""
    if not place.api:
        return not place.page_login
    try:
        _check_api(place.target, policy, None)
    except Unauthorized:
        return False
    return True


def stream_credential(found: Principal) -> sse.Credential:
    """What the request's event streams remember: revoked or expired, it ends them."""
    expires = found.expires_at.timestamp() if found.expires_at is not None else None
    return sse.Credential((found.revocation_key,), expires)


async def _quiet_resolve(request: web.Request) -> Principal | None:
    """Public paths never fail on a bad credential (the login form must stay reachable)."""
    try:
        return await resolve(request)
    except Unauthorized:
        return None


def _check_api(target: tuple[str, str], policy: AuthPolicy, found: Principal | None) -> None:
    if target == ("GET", "/me") and found is None:
        raise AuthenticationRequired(
            "GET /me needs a session or an API token", code="login-required"
        )
    if target == ("POST", "/ingest") and policy.require_ingest_token and not _by_token(found):
        raise AuthenticationRequired(
            "ingest needs an API token (Authorization: Bearer or X-Results-Token)",
            code="token-required",
        )
    if not policy.open_mode and found is None:
        raise AuthenticationRequired(
            "this server is not in open mode: send an API token, or log in (a signed-in "
            f"session writes to the API with its {CSRF_HEADER} header)",
            code="login-required",
        )


def _cookie_write(request: web.Request, found: Principal) -> bool:
    return found.via is Credential.SESSION and request.method not in SAFE_METHODS


def _with_csrf(request: web.Request, found: Principal) -> Principal | None:
    """The session's principal if the write carries its CSRF value; None if it carries none."""
    given = request.headers.get(CSRF_HEADER)
    if given is None:
        return None
    if found.csrf is None or not credentials.same_secret(given, found.csrf):
        raise CsrfRefused()
    return found


def _by_token(found: Principal | None) -> bool:
    return found is not None and found.via is Credential.TOKEN


def safe_next(target: str | None) -> str:
    """Where to go after login: a path on this site only (no ``//host`` or scheme tricks)."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return "/"
    return target


def cookie_secure(request: web.Request, mode: CookieSecure) -> bool:
    """AUTO follows the request: HTTPS, or ``X-Forwarded-Proto: https`` from a TLS proxy."""
    if mode is CookieSecure.AUTO:
        return sessions.is_https(request)
    return mode is CookieSecure.ALWAYS
