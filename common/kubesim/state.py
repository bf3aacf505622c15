"""What one simulated cluster's HTTP server holds, and the typed app key it lives under."""

from __future__ import annotations

import attrs
from aiohttp import web

from common.kubesim.objects import Objects
from common.kubesim.openapi import OpenAPI
from common.kubesim.registry import Registry, load_builtin
from common.kubesim.store import Store


@attrs.define
class State:
    objects: Objects
    openapi: OpenAPI
    token: str | None = attrs.field(repr=False)
    bookmark_interval: float = 60.0
    server_address: str = "127.0.0.1:6443"
    # Report workloads rolled out at once (``standin``) until real controllers run.
    instant_rollout: bool = True

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
        return cls(objects, OpenAPI(registry), token, bookmark_interval, server_address)


STATE = web.AppKey("kubesim.state", State)
