"""What one simulated cluster's HTTP server holds, and the typed app key it lives under."""

from __future__ import annotations

import collections
import secrets
from collections.abc import Awaitable, Callable

import attrs
from aiohttp import web

from kubesim.api.objects import Objects
from kubesim.api.params import Target
from kubesim.api.rbac import UserInfo
from kubesim.http.openapi import OpenAPI
from kubesim.machinery.registry import Registry, load_builtin
from kubesim.store import Store

SubresourceHandler = Callable[[web.Request, "State", Target], Awaitable[web.StreamResponse]]


@attrs.define
class State:
    objects: Objects
    openapi: OpenAPI
    token: str | None = attrs.field(repr=False)
    # Signs the ServiceAccount tokens this cluster issues (``tokens``); never leaves the process.
    signing_key: bytes = attrs.field(factory=lambda: secrets.token_bytes(32), repr=False)
    bookmark_interval: float = 60.0
    # Bearer token -> the user it authenticates, besides the admin token and ServiceAccount tokens.
    users: dict[str, UserInfo] = attrs.field(factory=dict, repr=False)
    server_address: str = "127.0.0.1:6443"
    # Report workloads rolled out at once (``standin``) until real controllers run.
    instant_rollout: bool = True
    # Shortest ``expirationSeconds`` a TokenRequest may ask (kube-apiserver's is 10 minutes).
    min_token_seconds: int = 600
    # Every watch ends after at most this many seconds (None: as ``timeoutSeconds`` asks).
    max_watch_seconds: float | None = None
    # Access reviews answered, by kind (``SubjectAccessReview`` …): what a benchmark counts.
    reviews_answered: collections.Counter[str] = attrs.Factory(collections.Counter)
    # (group, plural, subresource) -> handler, for subresources served outside ``handlers``
    # (``pods/log``, ``pods/exec``, ``pods/portforward``); anything unregistered is refused with 501.
    subresource_handlers: dict[tuple[str, str, str], SubresourceHandler] = attrs.Factory(dict)

    @classmethod
    def new(
        cls,
        *,
        token: str | None,
        history: int = 2000,
        bookmark_interval: float = 60.0,
        server_address: str = "127.0.0.1:6443",
    ) -> State:
        registry = Registry(load_builtin())
        objects = Objects(registry, Store(history=history))
        return cls(
            objects,
            OpenAPI(registry),
            token,
            bookmark_interval=bookmark_interval,
            server_address=server_address,
        )


STATE = web.AppKey("kubesim.state", State)
