"""Who may call what: HTTP Basic or the session cookie, checked against open or closed mode.

Rules (the contract's): in open mode every GET is public and every other method needs the admin;
in closed mode everything but ``/actuator/health/**``, ``/actuator/info``, the sign-in call and
the web pages (exactly ``AuthPolicy.public_pages``, which the app sets to
``console.web.PUBLIC_PATHS``: the login page, the shell, their assets; GET and HEAD only) needs
the admin; paths that return secrets need the admin in both modes (so do a Secret's values,
checked once the resource is known: ``console.http.clusterapi.target_whole_kind``).
Health and info probes ignore any credential sent, so a wrong one cannot turn a probe into a 401.
A path is judged by both the request path and the matched route's template, so an encoded or
oddly spelled path cannot slip past a rule its route falls under. A Basic header is checked
wherever else it is sent, and a wrong one is a bare 401: a problem body and no
``WWW-Authenticate``, so a browser shows no login dialog.

Cookie-authenticated unsafe requests outside ``/api/`` and ``/mcp/`` (and WebSocket handshakes)
must come from this origin (CSRF); API paths are exempt, as the contract says.
"""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import urlsplit

import attrs
from aiohttp import hdrs, web
from aiohttp.typedefs import Handler, Middleware

from common import sse
from common.errors import Forbidden, Unauthorized
from common.routing import PerRoute
from common.sessions import SessionStore
from common.throttle import LoginThrottle
from console.credentials import AdminCredentials
from console.identity import Identity

#: The session cookie (the contract's): a browser cannot attach HTTP Basic to a WebSocket
#: handshake, so a session stands in for it. It idles out (``SessionStore.renew``).
COOKIE = "JSESSIONID"

API = "/api/v1"
SESSION_PATH = f"{API}/auth/session"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_SEG = r"[^/]+"
#: Authenticated in both modes: they return secrets (exec, pod files, Helm values and the
#: manifests rendered from them).
SECRET_PATHS = re.compile(
    r"^(?:/ws(?:/.*)?"
    rf"|{API}/clusters/{_SEG}/pods/{_SEG}/{_SEG}/files(?:/.*)?"
    rf"|{API}/helm/values(?:/.*)?"
    rf"|{API}/clusters/{_SEG}/helm/releases/{_SEG}/{_SEG}/(?:values|manifest)/?)$"
)
ALWAYS_PUBLIC = re.compile(r"^/actuator/(?:health(?:/.*)?|info)$")
CSRF_EXEMPT = ("/api/", "/mcp/")
PAGE_METHODS = frozenset({"GET", "HEAD"})


@attrs.frozen
class Principal:
    user: str
    via: str  # "basic" or "session"
    groups: tuple[str, ...] = ()

    @property
    def identity(self) -> Identity:
        return Identity(self.user, self.groups)


PRINCIPAL = web.RequestKey("console.principal", Principal)
#: Who the request acts as toward a cluster: set for every request the middleware authenticates.
IDENTITY = web.RequestKey("console.identity", Identity)
#: The anonymous visitor of open mode, as Kubernetes itself names one.
ANONYMOUS = Identity("system:anonymous", ("system:unauthenticated",), anonymous=True)


@attrs.frozen
class AuthPolicy:
    open_mode: bool
    credentials: AdminCredentials
    sessions: SessionStore
    #: The web pages and their assets, public for GET and HEAD (``console.web.PUBLIC_PATHS``).
    public_pages: frozenset[str]
    #: Wrong Basic passwords, per user name and per client address (see ``common.throttle``).
    throttle: LoginThrottle = attrs.field(factory=LoginThrottle)
    #: Who an anonymous request (a public read in open mode) acts as toward a cluster.
    anonymous: Identity = ANONYMOUS


def current_user(request: web.Request) -> str | None:
    principal = request.get(PRINCIPAL)
    return principal.user if principal is not None else None


def acting_identity(request: web.Request) -> Identity:
    """Who ``request`` acts as toward a cluster: the signed-in person, else the anonymous one."""
    identity: Identity = request.get(IDENTITY, ANONYMOUS)
    return identity


def needs_auth(
    method: str, paths: tuple[str, ...], *, open_mode: bool, public_pages: frozenset[str]
) -> bool:
    if any(SECRET_PATHS.match(p) for p in paths):
        return True
    if any(ALWAYS_PUBLIC.match(p) for p in paths):
        return False
    if SESSION_PATH in paths and method in ("POST", "DELETE"):
        return False
    if method in PAGE_METHODS and all(p in public_pages for p in paths):
        return False  # the login page, the shell and their assets: they show only what the API does
    return method not in SAFE_METHODS if open_mode else True


def _paths(request: web.Request) -> tuple[str, ...]:
    resource = request.match_info.route.resource
    template = resource.canonical if resource is not None else None
    return (request.path, template) if template else (request.path,)


#: What the rules say of a request: (public whatever is sent, refused without a credential).
Rules = tuple[bool, bool]


def _rules(method: str, paths: tuple[str, ...], policy: AuthPolicy) -> Rules:
    public = any(ALWAYS_PUBLIC.match(p) for p in paths)
    return public, not public and needs_auth(
        method, paths, open_mode=policy.open_mode, public_pages=policy.public_pages
    )


def route_rules(policy: AuthPolicy) -> PerRoute[Rules | None]:
    """The rules of each route whose path has no variables, decided when the app starts: its path
    is its template, so every request to it is judged alike. None for the others (and for a route
    taking any method): their requests are judged one by one."""

    def decide(route: web.AbstractRoute) -> Rules | None:
        resource = route.resource
        if route.method == hdrs.METH_ANY or not isinstance(resource, web.PlainResource):
            return None
        path = resource.canonical
        return _rules(route.method, (path, path), policy)  # what ``_paths`` gives its requests

    return PerRoute(decide, default=None)


def auth_middleware(policy: AuthPolicy, fixed: PerRoute[Rules | None]) -> Middleware:
    """Authenticate by ``policy``; ``fixed`` holds the rules decided per route (``route_rules``)."""

    def rules_of(request: web.Request) -> Rules:
        return fixed(request) or _rules(request.method, _paths(request), policy)

    @web.middleware
    async def authenticate(request: web.Request, handler: Handler) -> web.StreamResponse:
        public, refused_anonymous = rules_of(request)
        if public:
            return await handler(request)  # probes: public in both modes, credentials unread
        principal = await identify(request, policy)
        if principal is not None:
            request[PRINCIPAL] = principal
            request[IDENTITY] = principal.identity
        elif refused_anonymous:
            raise Unauthorized("authentication required: HTTP Basic or a session cookie")
        else:
            request[IDENTITY] = policy.anonymous
        if principal is not None and principal.via == "session":
            _check_origin(request)
        return await handler(request)

    return authenticate


async def identify(request: web.Request, policy: AuthPolicy) -> Principal | None:
    """The Basic credentials if sent (a wrong one is a 401), else the session cookie's user."""
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "basic":
        user, password = _basic(value.strip())

        async def verify() -> Principal:
            if not await policy.credentials.check(user, password):
                raise Unauthorized("bad credentials")
            return Principal(user, "basic")

        return await policy.throttle.attempt(user, request.remote, verify)
    cookie = request.cookies.get(COOKIE)
    signed_in = await policy.sessions.find(cookie) if cookie else None
    if signed_in is None:
        return None
    # Signed out, or idle past its expiry, the session ends the request's event streams (HTTP
    # Basic cannot be revoked: its streams end with the process).
    request[sse.CREDENTIAL] = policy.sessions.stream_credential(signed_in.id, signed_in.expires)
    return Principal(signed_in.subject, "session")


def _basic(value: str) -> tuple[str, str]:
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise Unauthorized("bad credentials") from None
    user, sep, password = decoded.partition(":")
    if not sep:
        raise Unauthorized("bad credentials")
    return user, password


def _check_origin(request: web.Request) -> None:
    websocket = request.headers.get("Upgrade", "").lower() == "websocket"
    unsafe = request.method not in SAFE_METHODS and not request.path.startswith(CSRF_EXEMPT)
    if not (websocket or unsafe):
        return
    origin = request.headers.get("Origin")
    if origin is None:
        return  # not a browser's cross-site request: browsers send Origin on these
    hosts = {request.host, request.headers.get("X-Forwarded-Host", request.host)}
    if urlsplit(origin).netloc not in hosts:
        raise Forbidden("cross-site request refused (CSRF)", code="csrf-rejected")
