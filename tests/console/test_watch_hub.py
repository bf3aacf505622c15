"""The shared watch against a fake API server it reaches over real HTTP (the seam where the
simulator cannot misbehave on cue): a 410 Gone re-lists and resyncs every subscriber, a slow
subscriber overflows alone, a refused first list reaches the caller, shutdown ends everything."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from common.errors import UpstreamStatus
from console.resources.catalog import Kind
from console.resources.kubeapi import KubeApi
from console.streams.watches import Change, Resync, WatchHub
from tests.console.fakeapi import LegacyApiServer, StartFake
from tests.console.test_objects_stream import api_for

CONFIGMAPS = Kind("configmaps", "", "v1", "configmaps", "ConfigMap", True,
                  frozenset({"list", "watch"}))  # fmt: skip


def cm(name: str, rv: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv)}}


class WatchServer(LegacyApiServer):
    """Lists ``items``; each watch request takes the next script from ``scripts``: a list of
    events sent at once, then (if ``hold``) whatever ``live`` receives until the client leaves."""

    def __init__(self, items: list[dict[str, Any]], scripts: list[list[dict[str, Any]]]) -> None:
        super().__init__({"configmaps": "ConfigMap"})
        self.items = items
        self.scripts = scripts
        self.live: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.lists = 0
        self.watches: list[str] = []
        self.list_status = 200

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/api/v1/namespaces/ns/configmaps", self.configmaps)

    async def configmaps(self, request: web.Request) -> web.StreamResponse:
        if request.query.get("watch") != "true":
            self.lists += 1
            if self.list_status != 200:
                status = {"kind": "Status", "code": self.list_status, "message": "no access"}
                return web.json_response(status, status=self.list_status)
            return web.json_response({"kind": "ConfigMapList", "items": self.items,
                                      "metadata": {"resourceVersion": "10"}})  # fmt: skip
        self.watches.append(request.query.get("resourceVersion", ""))
        response = web.StreamResponse()
        await response.prepare(request)
        script = self.scripts.pop(0) if self.scripts else []
        for event in script:
            await response.write(json.dumps(event).encode() + b"\n")
        if script and script[-1].get("type") == "ERROR":
            return response
        while True:
            event = await self.live.get()
            await response.write(json.dumps(event).encode() + b"\n")


@pytest.fixture
async def hub() -> AsyncIterator[WatchHub]:
    watches = WatchHub(linger_s=0, queue_size=2)
    yield watches
    await watches.close()


async def test_a_410_relists_and_resyncs_every_subscriber(
    fake_api: StartFake, hub: WatchHub
) -> None:
    expired = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}}
    fake = WatchServer([cm("a", 5)], [[expired], []])
    server = await fake_api(fake)
    async with (
        await api_for(server) as client,
        hub.subscribe("c", CONFIGMAPS, "ns", KubeApi(client)) as changes,
    ):
        first = await anext(changes)
        assert isinstance(first, Change)
        assert first.obj["metadata"]["name"] == "a"
        fake.items = [cm("b", 11)]  # the state the re-list finds
        assert await asyncio.wait_for(anext(changes), 5) == Resync("expired")
        again = await anext(changes)
        assert isinstance(again, Change)
        assert (again.type, again.obj["metadata"]["name"]) == ("ADDED", "b")
        assert fake.lists == 2
        await fake.live.put({"type": "MODIFIED", "object": cm("b", 12)})
        change = await asyncio.wait_for(anext(changes), 5)
        assert isinstance(change, Change)
        assert change.type == "MODIFIED"
    assert fake.watches == ["10", "10"]  # resumed from the re-list's resourceVersion


async def test_a_slow_subscriber_is_resynced_alone(fake_api: StartFake, hub: WatchHub) -> None:
    fake = WatchServer([], [[]])
    server = await fake_api(fake)
    async with await api_for(server) as client:
        api = KubeApi(client)
        async with (
            hub.subscribe("c", CONFIGMAPS, "ns", api) as slow,
            hub.subscribe("c", CONFIGMAPS, "ns", api) as fast,
        ):
            got = []
            for i in range(5):  # the fast one keeps up with every change
                await fake.live.put({"type": "ADDED", "object": cm(f"x{i}", 20 + i)})
                got.append(await asyncio.wait_for(anext(fast), 5))
            assert [c.obj["metadata"]["name"] for c in got if isinstance(c, Change)] == [
                f"x{i}" for i in range(5)
            ]
            assert await anext(slow) == Resync("overflow")
            state = [await anext(slow) for _ in range(5)]
            assert sorted(c.obj["metadata"]["name"] for c in state if isinstance(c, Change)) == [
                f"x{i}" for i in range(5)
            ]
            assert hub.upstream_count() == 1
    assert hub.upstream_count() == 0


async def test_a_refused_first_list_reaches_the_subscriber(
    fake_api: StartFake, hub: WatchHub
) -> None:
    fake = WatchServer([], [])
    fake.list_status = 403
    server = await fake_api(fake)
    async with await api_for(server) as client:
        with pytest.raises(UpstreamStatus) as refused:
            async with hub.subscribe("c", CONFIGMAPS, "ns", KubeApi(client)):
                pass
    assert (refused.value.status, refused.value.detail) == (403, "no access")
    assert hub.upstream_count() == 0


async def test_a_removed_cluster_ends_its_watches(fake_api: StartFake, hub: WatchHub) -> None:
    fake = WatchServer([cm("a", 5)], [[]])
    server = await fake_api(fake)
    async with (
        await api_for(server) as client,
        hub.subscribe("c", CONFIGMAPS, "ns", KubeApi(client)) as changes,
    ):
        await anext(changes)
        await hub.cluster_changed("c", "removed")
        with pytest.raises(Exception, match="cluster 'c' was removed"):
            await anext(changes)
    assert hub.upstream_count() == 0
