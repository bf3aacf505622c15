"""A small fake Kubernetes API server for the console's edge cases (a real HTTP seam, no patching).

:class:`LegacyApiServer` serves legacy discovery of the core kinds in ``kinds`` and counts the
reads of ``/api/v1`` in ``discoveries``; subclasses add the routes they need in ``routes``. The
``fake_api`` fixture starts servers on loopback and closes them; :func:`fake_kubeconfig` writes a
kubeconfig whose one context, ``fake`` by default, points at a server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import yaml
from aiohttp import web
from aiohttp.test_utils import TestServer


class LegacyApiServer:
    def __init__(self, kinds: dict[str, str]) -> None:
        self.kinds = dict(kinds)  # plural -> Kind, all namespaced, get and list
        self.discoveries = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/api", self.versions)
        app.router.add_get("/apis", self.groups)
        app.router.add_get("/api/v1", self.resources)
        self.routes(app)
        return app

    def routes(self, app: web.Application) -> None:
        """Add the served collections."""

    async def versions(self, request: web.Request) -> web.Response:
        return web.json_response({"kind": "APIVersions", "versions": ["v1"]})

    async def groups(self, request: web.Request) -> web.Response:
        return web.json_response({"kind": "APIGroupList", "apiVersion": "v1", "groups": []})

    async def resources(self, request: web.Request) -> web.Response:
        self.discoveries += 1
        entries = [{"name": plural, "namespaced": True, "kind": kind, "verbs": ["get", "list"]}
                   for plural, kind in self.kinds.items()]  # fmt: skip
        return web.json_response({"kind": "APIResourceList", "groupVersion": "v1",
                                  "resources": entries})  # fmt: skip


StartFake = Callable[[LegacyApiServer], Awaitable[TestServer]]


@pytest.fixture
async def fake_api() -> AsyncIterator[StartFake]:
    servers: list[TestServer] = []

    async def start(fake: LegacyApiServer) -> TestServer:
        server = TestServer(fake.app())
        await server.start_server()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.close()


def fake_kubeconfig(server: TestServer | str, path: Path, *, context: str = "fake") -> Path:
    """``server`` is a started server or a URL."""
    url = server if isinstance(server, str) else str(server.make_url("")).rstrip("/")
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": context,
           "clusters": [{"name": context, "cluster": {"server": url}}],
           "users": [{"name": "anon", "user": {"token": "x"}}],
           "contexts": [{"name": context, "context": {"cluster": context, "user": "anon"}}]}  # fmt: skip
    path.write_text(yaml.safe_dump(doc), "utf-8")
    return path
