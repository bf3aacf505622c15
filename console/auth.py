"""Who may call what: HTTP Basic, the session cookie or a trusted proxy, in open or closed mode.

Who: the contract's admin login or a named account (``console.accounts``), by HTTP Basic on each
request or by the ``JSESSIONID`` session a sign-in issues (the session names the person; their
account and groups are read again on every request, so a removed account's sessions stop working
and changed groups take effect at once); or the person a trusted authenticating proxy names in
its headers (``console.proxy``, believed only from its own addresses). Every one of them is a
signed-in person; what each may do on a cluster the cluster decides (impersonation).

Rules (the contract's): in open mode every GET is public and every other method needs a signed-in
person; in closed mode everything but ``/actuator/health/**``, ``/actuator/info``, the sign-in
call and the web pages (exactly ``AuthPolicy.public_pages``, which the app sets to
``console.web.PUBLIC_PATHS``: the login page, the shell, their assets; GET and HEAD only) needs
one; paths that return secrets need one in both modes (so do a Secret's values, checked once the
resource is known: ``console.http.clusterapi.target_whole_kind``).

How credentials are read depends on the path (``Reading``): health and info probes and the web
pages ignore every credential sent, so a browser holding a stale one can still load the login
page (issue 39, item 14); in open mode the cluster list and ``/about`` read them leniently (a wrong
one is as good as none, a right one signs in); everywhere else a wrong credential is a bare 401:
a problem body and no ``WWW-Authenticate``, so a browser shows no login dialog. A credential
header or cookie sent twice, or a cookie that does not name the Basic or proxy user beside it, is
a 401 too (``common.presented``). A path is judged by both the request path and the matched
route's template, so an encoded or oddly spelled path cannot slip past a rule its route falls
under.

Cookie- or proxy-authenticated unsafe requests outside ``/api/`` and ``/mcp/`` (and WebSocket
handshakes) must come from this origin (CSRF): a browser sends the proxy's cookie on its own too.
API paths are exempt, as the contract says.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hmac
import re
from collections.abc import Awaitable
from urllib.parse import urlsplit

import attrs
from aiohttp import hdrs, web
from aiohttp.typedefs import Handler, Middleware

from common import sse
from common.errors import Forbidden, Unauthorized
from common.openapi import Spec
from common.presented import ConflictingCredentials, one_cookie, one_header
from common.routing import Guard
from common.sessions import SessionStore
from common.throttle import LoginThrottle
from console import standing as streams_standing
from console.accounts import Accounts, Standing, session_person
from console.errors import AdminRequired
from console.identity import Identity
from console.proxy import TrustedProxy

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
#: Public reads of open mode that show more to a signed-in person: a wrong credential there is
#: as good as none (issue 39, item 14), a right one signs in.
LENIENT_IN_OPEN_MODE = frozenset({f"{API}/clusters", f"{API}/about"})
CSRF_EXEMPT = ("/api/", "/mcp/")
#: Credentials a browser attaches on its own, so a cross-site page could ride them (CSRF): the
#: session cookie, and a proxy's own cookie, which the proxy turns into its identity headers.
BROWSER_BORNE = frozenset({"session", "proxy"})
PAGE_METHODS = frozenset({"GET", "HEAD"})


class Reading(enum.Enum):
    """How a request's credentials are read."""

    IGNORED = "ignored"  # never read: probes and the web pages
    LENIENT = "lenient"  # read; a wrong one is as good as none
    STRICT = "strict"  # read; a wrong one is a 401


@attrs.frozen
class Principal:
    user: str
    via: str  # "basic", "session" or "proxy"
    groups: tuple[str, ...] = ()
    #: What a session signed in now is kept under (``Standing.session_subject``).
    session_subject: str = attrs.field(default="", repr=False, eq=False)

    @property
    def identity(self) -> Identity:
        return Identity(self.user, self.groups)

    @classmethod
    def of(cls, identity: Identity, via: str, *, standing: Standing | None = None) -> Principal:
        subject = standing.session_subject if standing is not None else identity.user
        return cls(identity.user, via, identity.groups, subject)


PRINCIPAL = web.RequestKey("console.principal", Principal)
#: Who the request acts as toward a cluster: set for every request the middleware authenticates.
IDENTITY = web.RequestKey("console.identity", Identity)
#: Whether the signed-in person is in ``console.security.admin.groups`` (``is_admin``).
ADMIN = web.RequestKey("console.admin", bool)
#: The anonymous visitor of open mode, as Kubernetes itself names one.
ANONYMOUS = Identity("system:anonymous", ("system:unauthenticated",), anonymous=True)


@attrs.frozen
class AuthPolicy:
    open_mode: bool
    #: The admin login and the named accounts (``console.accounts``).
    accounts: Accounts
    sessions: SessionStore
    #: The web pages and their assets, public for GET and HEAD (``console.web.PUBLIC_PATHS``).
    public_pages: frozenset[str]
    #: Wrong Basic passwords, per user name and client address (see ``common.throttle``).
    throttle: LoginThrottle = attrs.field(factory=LoginThrottle)
    #: Who an anonymous request (a public read in open mode) acts as toward a cluster.
    anonymous: Identity = ANONYMOUS
    #: A trusted authenticating proxy's headers (``console.proxy``); off by default.
    proxy: TrustedProxy = attrs.field(factory=TrustedProxy)
    #: Seconds between re-validations of the account behind a long-lived stream
    #: (``console.security.access-review-ttl``; ``console.standing``).
    recheck_s: float = 10.0


#: The spec's mark on an operation only the admin groups may call (``admin_only_routes``).
ADMIN_ONLY = "x-admin-only"


def current_user(request: web.Request) -> str | None:
    principal = request.get(PRINCIPAL)
    return principal.user if principal is not None else None


def acting_identity(request: web.Request) -> Identity:
    """Who ``request`` acts as toward a cluster: the signed-in person, else the anonymous one."""
    identity: Identity = request.get(IDENTITY, ANONYMOUS)
    return identity


def is_admin(request: web.Request) -> bool:
    """Whether the request's signed-in person is in ``console.security.admin.groups``."""
    admin: bool = request.get(ADMIN, False)
    return admin


def _admin_only(route: web.AbstractRoute, spec: Spec) -> bool:
    """Whether the route's operation is marked ``x-admin-only: true`` by the spec: runtime
    cluster management, the chart repositories and values library writes, the audit trail and
    the cluster config view. Declared in the contract, enforced by the guard alone."""
    operation = spec.operations.get(route.name) if route.name else None
    return operation is not None and operation.raw.get(ADMIN_ONLY) is True


def needs_auth(
    method: str, paths: tuple[str, ...], *, open_mode: bool, public_pages: frozenset[str]
) -> bool:
    if any(SECRET_PATHS.match(p) for p in paths):
        return True
    if any(ALWAYS_PUBLIC.match(p) for p in paths):
        return False
    if SESSION_PATH in paths and method in ("POST", "DELETE"):
        return False
    if _page(method, paths, public_pages):
        return False  # the login page, the shell and their assets: they show only what the API does
    return method not in SAFE_METHODS if open_mode else True


def _page(method: str, paths: tuple[str, ...], public_pages: frozenset[str]) -> bool:
    return method in PAGE_METHODS and all(p in public_pages for p in paths)


def _paths(request: web.Request) -> tuple[str, ...]:
    resource = request.match_info.route.resource
    template = resource.canonical if resource is not None else None
    return (request.path, template) if template else (request.path,)


#: What the rules say of a request: (how its credentials are read, refused without one).
Rules = tuple[Reading, bool]


def _rules(method: str, paths: tuple[str, ...], policy: AuthPolicy) -> Rules:
    needed = needs_auth(method, paths, open_mode=policy.open_mode, public_pages=policy.public_pages)
    if any(ALWAYS_PUBLIC.match(p) for p in paths) or _page(method, paths, policy.public_pages):
        return Reading.IGNORED, False
    if (
        policy.open_mode
        and method in PAGE_METHODS
        and all(p in LENIENT_IN_OPEN_MODE for p in paths)
    ):
        return Reading.LENIENT, False
    return Reading.STRICT, needed


def _route_rules(route: web.AbstractRoute, policy: AuthPolicy) -> Rules | None:
    """The rules of a route whose path has no variables: its path is its template, so every
    request to it is judged alike. None for the others (and for a route taking any method):
    their requests are judged one by one."""
    resource = route.resource
    if route.method == hdrs.METH_ANY or not isinstance(resource, web.PlainResource):
        return None
    path = resource.canonical
    return _rules(route.method, (path, path), policy)  # what ``_paths`` gives its requests


def auth_guard(policy: AuthPolicy, spec: Spec) -> Guard:
    """Authenticate by ``policy``, each route by the rules decided for it when the app starts.
    The operations only the admin groups may call (``x-admin-only`` in ``spec``) refuse a
    signed-in person outside them with 403 ``admin-required``. In open mode the contract makes
    every GET public, so the reads among them stay public there (to the anonymous visitor and so
    to everyone: refusing a signed-in person what an anonymous one may read would protect
    nothing)."""

    def for_route(route: web.AbstractRoute | None) -> Middleware:
        if route is None:  # aiohttp's 404 and 405 routes: judged per request
            return _authenticating(policy, None, admin_only=False)
        return _authenticating(
            policy, _route_rules(route, policy), admin_only=_admin_only(route, spec)
        )

    return for_route


def _authenticating(policy: AuthPolicy, fixed: Rules | None, *, admin_only: bool) -> Middleware:
    """The guard of one route: ``fixed`` its rules (None: judged per request)."""

    proxied = policy.proxy.user_header is not None  # else no header names anyone

    def admin_refused(request: web.Request) -> bool:
        return admin_only and not (policy.open_mode and request.method in SAFE_METHODS)

    def as_anonymous(request: web.Request, *, refused_anonymous: bool) -> None:
        """A request that names no one: refused where the route needs someone, else anonymous."""
        if refused_anonymous or admin_refused(request):
            raise Unauthorized("authentication required: HTTP Basic or a session cookie")
        request[IDENTITY] = policy.anonymous

    async def authenticated(
        request: web.Request, handler: Handler, *, reading: Reading, refused_anonymous: bool
    ) -> web.StreamResponse:
        principal = await _read(request, policy, lenient=reading is Reading.LENIENT)
        if principal is None:
            as_anonymous(request, refused_anonymous=refused_anonymous)
            return await handler(request)
        request[PRINCIPAL] = principal
        request[IDENTITY] = principal.identity
        admin_groups = policy.accounts.admin_groups
        request[ADMIN] = any(group in admin_groups for group in principal.groups)
        if principal.via in BROWSER_BORNE:
            _check_origin(request)
        if admin_refused(request) and not request[ADMIN]:
            raise AdminRequired(policy.accounts.admin_groups)
        return await handler(request)

    # Not a coroutine: a request with no credential at all (most public reads) is judged here
    # and hands over the handler's awaitable; one with a credential is read by ``authenticated``.
    @web.middleware
    def authenticate(request: web.Request, handler: Handler) -> Awaitable[web.StreamResponse]:
        reading, refused_anonymous = fixed or _rules(request.method, _paths(request), policy)
        if reading is Reading.IGNORED:
            request[IDENTITY] = policy.anonymous
            return handler(request)  # credentials unread
        headers = request.headers
        if (
            hdrs.AUTHORIZATION in headers
            or hdrs.COOKIE in headers
            or (proxied and policy.proxy.sent(headers))
        ):
            return authenticated(
                request, handler, reading=reading, refused_anonymous=refused_anonymous
            )
        as_anonymous(request, refused_anonymous=refused_anonymous)
        return handler(request)

    return authenticate


async def _read(request: web.Request, policy: AuthPolicy, *, lenient: bool) -> Principal | None:
    if not lenient:
        return await identify(request, policy)
    try:
        return await identify(request, policy)
    except Unauthorized:
        return None  # throttled guesses included: the page answers as to anyone


async def identify(request: web.Request, policy: AuthPolicy) -> Principal | None:
    """Who sent ``request``: the Basic credentials (a wrong one is a 401), the trusted proxy's
    user, or the session cookie's person. Each credential sent must hold and all must name one
    person; the sign-in call alone lets Basic replace a cookie (whatever that cookie is)."""
    headers = request.headers
    scheme, _, value = (one_header(headers, hdrs.AUTHORIZATION) or "").partition(" ")
    cookie = one_cookie(headers, request.cookies, COOKIE)
    proxied = policy.proxy.identity(headers, request.remote)
    found = Principal.of(proxied, "proxy") if proxied is not None else None
    if scheme.lower() == "basic":
        basic = await _basic_principal(request, policy, value.strip())
        if found is not None and found.user != basic.user:
            raise ConflictingCredentials()
        found = basic
        if request.method == "POST" and request.path == SESSION_PATH:
            return found  # signing in: the old cookie is replaced, valid or not
    session = await _session_principal(request, policy, cookie) if cookie else None
    if found is None:
        return session
    if cookie and (session is None or session.user != found.user):
        raise ConflictingCredentials()
    return found


async def _basic_principal(request: web.Request, policy: AuthPolicy, value: str) -> Principal:
    user, password = _basic(value)

    async def verify() -> Standing:
        standing = await policy.accounts.verify(user, password)
        if standing is None:
            raise Unauthorized("bad credentials")
        return standing

    standing = await policy.throttle.attempt(user, request.remote, verify)
    _remember(request, policy, standing, session=None)
    return Principal.of(standing.identity, "basic", standing=standing)


async def _session_principal(
    request: web.Request, policy: AuthPolicy, cookie: str
) -> Principal | None:
    signed_in = await policy.sessions.find(cookie)
    if signed_in is None:
        return None
    user, stamp = session_person(signed_in.subject)
    standing = await policy.accounts.standing(user)
    if standing is None or not _same_stamp(standing.stamp, stamp):
        # The account was removed, or given a new password: its sessions end with it.
        await policy.sessions.end(signed_in.id)
        return None
    # Signed out, or idle past its expiry, the session ends the request's long-lived streams; so
    # does its account changing (``console.standing``).
    session = policy.sessions.stream_credential(signed_in.id, signed_in.expires)
    _remember(request, policy, standing, session=session)
    return Principal.of(standing.identity, "session")


def _same_stamp(now: str | None, signed_in: str | None) -> bool:
    if now is None or signed_in is None:  # the admin login; a session older than stamps
        return now is None or signed_in is None
    return hmac.compare_digest(now, signed_in)


def _remember(
    request: web.Request,
    policy: AuthPolicy,
    standing: Standing,
    *,
    session: sse.Credential | None,
) -> None:
    """Put on ``request`` what its long-lived streams must keep holding (``console.standing``)."""
    held = streams_standing.credential(
        policy.accounts, standing, every_s=policy.recheck_s, session=session
    )
    if held is not None:
        request[sse.CREDENTIAL] = held


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
