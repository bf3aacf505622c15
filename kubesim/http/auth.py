"""Who a request comes from, and whether they may make it: authentication, impersonation, RBAC.

A bearer token is the simulator's admin token (``system:masters``), a token of one of the users the
simulator was given, or a ServiceAccount token it issued; without one, a client certificate signed
by the simulator's authority (when it asks for them) names the user and groups; anything else,
an expired certificate included, is 401. The
``Impersonate-User``/``-Group``/``-Uid``/``-Extra-*`` headers switch to another identity when the
caller may ``impersonate`` it, as kube-apiserver's impersonation filter checks. Non-resource paths
(discovery, OpenAPI, ``/version``) are authorized here; resource requests by ``handlers`` once the
URL is resolved. Decisions are ``api.rbac``'s.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from kubesim.api import rbac, tokens
from kubesim.api.rbac import Request, UserInfo
from kubesim.http import differences, tls
from kubesim.http.state import STATE, State
from kubesim.machinery.status import KubeError

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
USER = web.RequestKey("kubesim.user", UserInfo)
# Paths a real cluster serves to anyone (system:public-info-viewer).
PUBLIC = ("/version", "/healthz", "/livez", "/readyz", differences.PATH)
_EXTRA = "impersonate-extra-"


def identify(state: State, token: str) -> UserInfo | None:
    """The user a bearer token stands for, or None."""
    if state.token is not None and hmac.compare_digest(token.encode(), state.token.encode()):
        return rbac.ADMIN
    for known, user in state.users.items():
        if hmac.compare_digest(token.encode(), known.encode()):
            return user
    account = tokens.user(state.signing_key, token, state.objects.store)
    if account is None:
        return None
    return UserInfo(account["username"], tuple(account["groups"]), uid=account["uid"])


def _certificate_user(request: web.Request) -> UserInfo | None:
    """Who the connection's client certificate (verified against the simulator's authority in the
    handshake) says, while it is valid: its common name, its organizations as groups."""
    transport = request.transport
    found = tls.peer_user(
        transport.get_extra_info("peercert") if transport is not None else None, now=time.time()
    )
    if found is None:
        return None
    name, groups = found
    return UserInfo(name, (*groups, rbac.AUTHENTICATED))


def user_of(request: web.Request) -> UserInfo:
    user: UserInfo = request.get(USER, rbac.ADMIN)
    return user


@web.middleware
async def authenticate(request: web.Request, handler: Handler) -> web.StreamResponse:
    state = request.app[STATE]
    if state.token is None or request.path in PUBLIC:
        return await handler(request)
    header = request.headers.get("Authorization", "")
    given = header[7:].strip() if header[:7].lower() == "bearer " else ""
    user = identify(state, given) if given else _certificate_user(request)
    if user is None:
        raise KubeError(401, "Unauthorized")
    user = impersonate(state, request, user)
    request[USER] = user
    if not _is_resource_path(request.path):
        verb = request.method.lower()
        rbac.check(state.objects.store, user, Request(verb=verb, path=request.path))
    return await handler(request)


def _is_resource_path(path: str) -> bool:
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"]:
        return len(parts) > 2
    if parts[:1] == ["apis"]:
        return len(parts) > 3
    return False


def impersonate(state: State, request: web.Request, user: UserInfo) -> UserInfo:
    """The identity ``user`` acts as, after checking it may impersonate every part of it."""
    headers = request.headers
    name = headers.get("Impersonate-User")
    groups = tuple(headers.getall("Impersonate-Group", []))
    uid = headers.get("Impersonate-Uid", "")
    extra: dict[str, list[str]] = {}
    for key, value in headers.items():
        if key.lower().startswith(_EXTRA):
            extra.setdefault(key[len(_EXTRA) :].lower(), []).append(value)
    if name is None:
        if groups or uid or extra:
            raise KubeError(
                400, "requested impersonation of groups, uid or extras without impersonating a user"
            )
        return user
    store = state.objects.store
    account = rbac.service_account(name)
    if account is not None:
        rbac.check(
            store, user, Request("impersonate", account[0], "", "serviceaccounts", "", account[1])
        )
    else:
        rbac.check(store, user, Request("impersonate", "", "", "users", "", name))
    for group in groups:
        rbac.check(store, user, Request("impersonate", "", "", "groups", "", group))
    if account is not None and not groups:  # a ServiceAccount's groups follow from its name
        groups = ("system:serviceaccounts", f"system:serviceaccounts:{account[0]}")
    if uid:
        rbac.check(
            store, user, Request("impersonate", "", "authentication.k8s.io", "uids", "", uid)
        )
    for key, values in extra.items():
        for value in values:
            req = Request("impersonate", "", "authentication.k8s.io", "userextras", key, value)
            rbac.check(store, user, req)
    if name != "system:anonymous" and rbac.AUTHENTICATED not in groups:
        groups = (*groups, rbac.AUTHENTICATED)
    return UserInfo(name, groups, uid=uid, extra=tuple((k, tuple(v)) for k, v in extra.items()))
