"""Paging edge cases against a small fake API server (a real HTTP seam, no patching): legacy
discovery, a continue token that expires (410: the list starts over once), a second expiry in the
middle of a streamed response (the connection is cut, so the client never sees a short list that
parses), and a server that ignores ``limit`` or omits ``remainingItemCount`` (counted by paging)."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from console.resources.catalog import Kind
from console.resources.counts import count_kind
from console.resources.kubeapi import KubeApi
from tests.console.conftest import ConsoleOn
from tests.console.fakeapi import LegacyApiServer, StartFake

CONFIGMAPS = Kind("configmaps", "", "v1", "configmaps", "ConfigMap", True, frozenset({"list"}))


class FakeApiServer(LegacyApiServer):
    """Serves ``items`` ConfigMaps in pages; ``expire`` says how often a continue token is
    answered 410 before it works."""

    def __init__(self, items: int, *, expire: dict[str, int], remaining: bool = True) -> None:
        super().__init__({"configmaps": "ConfigMap"})
        self.items = [{"metadata": {"name": f"cm-{i:04}", "namespace": "ns"}, "data": {"k": "v"}}
                      for i in range(items)]  # fmt: skip
        self.expire = expire
        self.remaining = remaining
        self.requests: list[str] = []

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/api/v1/configmaps", self.configmaps)

    async def configmaps(self, request: web.Request) -> web.Response:
        token = request.query.get("continue", "")
        self.requests.append(token)
        if self.expire.get(token):
            self.expire[token] -= 1
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410,
                      "reason": "Expired", "message": "The provided continue parameter is too old"}  # fmt: skip
            return web.json_response(status, status=410)
        start = int(token or 0)
        limit = int(request.query.get("limit", 0)) or len(self.items)
        page = self.items[start : start + limit]
        meta: dict[str, Any] = {"resourceVersion": "7"}
        if start + limit < len(self.items):
            meta["continue"] = str(start + limit)
            if self.remaining:
                meta["remainingItemCount"] = len(self.items) - start - limit
        return web.json_response({"kind": "ConfigMapList", "apiVersion": "v1",
                                  "metadata": meta, "items": page})  # fmt: skip


async def api_for(server: TestServer) -> Any:
    from kubernetes_asyncio.client import ApiClient, Configuration

    cfg = Configuration()
    cfg.host = str(server.make_url("")).rstrip("/")
    return ApiClient(cfg)


async def test_an_expired_continue_token_starts_the_list_over_once(fake_api: StartFake) -> None:
    server_api = FakeApiServer(25, expire={"10": 1})
    server = await fake_api(server_api)
    async with await api_for(server) as client:
        pages = [p async for p in KubeApi(client).chunks("/api/v1/configmaps", limit=10)]
    names = [i["metadata"]["name"] for p in pages for i in p["items"]]
    assert names == [f"cm-{i:04}" for i in range(25)]  # what was yielded is not yielded again
    assert server_api.requests == ["", "10", "", "10", "20"]


async def test_counts_page_through_when_the_server_omits_the_remaining_count(
    fake_api: StartFake,
) -> None:
    server = await fake_api(FakeApiServer(1234, expire={}, remaining=False))
    async with await api_for(server) as client:
        counted = await count_kind(KubeApi(client), CONFIGMAPS, None)
    assert (counted.count, counted.source, counted.exact) == (1234, "paged", True)


async def test_a_stream_broken_after_it_started_is_cut_off(console_on: ConsoleOn) -> None:
    client = await console_on(FakeApiServer(1200, expire={"500": 2}))
    nav = await (await client.get("/api/v1/clusters/fake/nav")).json()  # legacy discovery
    assert [k["resourceId"] for c in nav["categories"] for k in c["kinds"]] == ["configmaps"]
    resp = await client.get("/api/v1/clusters/fake/resources/configmaps/objects")
    assert resp.status == 200
    with pytest.raises(aiohttp.ClientPayloadError):
        await resp.read()


async def test_a_stream_that_recovers_is_complete(console_on: ConsoleOn) -> None:
    client = await console_on(FakeApiServer(1200, expire={"500": 1}))
    resp = await client.get("/api/v1/clusters/fake/resources/configmaps/objects")
    items = json.loads(await resp.read())
    assert [i["metadata"]["name"] for i in items] == [f"cm-{i:04}" for i in range(1200)]
    assert items[0]["data"] == {"k": None}
