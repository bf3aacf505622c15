"""Discovery as the console caches it, against a small fake API server that counts discovery reads:
the start-up warm-up reads it before the first request, requests arriving together share one read,
a kind that appears right after a read is found at once (as kubectl finds it), and a cluster that
cannot be reached neither holds start-up back nor breaks the others."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from common import tasks
from console.app import warm_up
from tests.addresses import free_port
from tests.console.conftest import ConsoleApp, ConsoleOn
from tests.console.fakeapi import LegacyApiServer, StartFake, fake_kubeconfig


class CountingApiServer(LegacyApiServer):
    """Serves every kind in ``kinds`` as an empty list; each discovery read takes ``delay`` s."""

    def __init__(self, *, delay: float = 0.0) -> None:
        super().__init__({"configmaps": "ConfigMap"})
        self.delay = delay

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/api/v1/{plural}", self.list)

    async def resources(self, request: web.Request) -> web.Response:
        await asyncio.sleep(self.delay)
        return await super().resources(request)

    async def list(self, request: web.Request) -> web.Response:
        kind = self.kinds.get(request.match_info["plural"])
        if kind is None:
            return web.json_response({"kind": "Status", "code": 404}, status=404)
        return web.json_response({"kind": f"{kind}List", "apiVersion": "v1",
                                  "metadata": {"resourceVersion": "1"}, "items": []})  # fmt: skip


async def eventually(condition: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


OBJECTS = "/api/v1/clusters/fake/resources/configmaps/objects"


async def test_start_up_reads_discovery_before_the_first_request(console_on: ConsoleOn) -> None:
    fake = CountingApiServer()
    client = await console_on(fake)
    await eventually(lambda: fake.discoveries == 1)
    assert (await client.get(OBJECTS)).status == 200
    assert fake.discoveries == 1


async def test_without_warm_up_the_first_request_reads_discovery(console_on: ConsoleOn) -> None:
    fake = CountingApiServer()
    client = await console_on(fake, "clusters.warm-up=false")
    await asyncio.sleep(0.2)
    assert fake.discoveries == 0
    assert (await client.get(OBJECTS)).status == 200
    assert fake.discoveries == 1


async def test_requests_arriving_together_share_one_discovery(console_on: ConsoleOn) -> None:
    fake = CountingApiServer(delay=0.2)
    client = await console_on(fake)  # warm-up under way
    answers = await asyncio.gather(*(client.get(OBJECTS) for _ in range(6)))
    assert [a.status for a in answers] == [200] * 6
    assert fake.discoveries == 1


async def test_a_kind_served_right_after_discovery_is_found_at_once(console_on: ConsoleOn) -> None:
    fake = CountingApiServer()
    client = await console_on(fake)
    await eventually(lambda: fake.discoveries == 1)
    fake.kinds["widgets"] = "Widget"  # a CRD established a moment after the catalog was read
    resp = await client.get("/api/v1/clusters/fake/resources/widgets/objects")
    assert resp.status == 200, await resp.text()
    assert fake.discoveries == 2
    unknown = await client.get("/api/v1/clusters/fake/resources/gadgets/objects")
    assert unknown.status == 404
    assert fake.discoveries == 3  # a miss always looks again, once


class HangingApiServer(CountingApiServer):
    """An API server whose discovery answers only once :attr:`release` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.waiting = 0

    async def resources(self, request: web.Request) -> web.Response:
        self.waiting += 1
        await self.release.wait()
        return await super().resources(request)


async def test_an_unreachable_cluster_neither_holds_start_up_nor_the_others(
    fake_api: StartFake, console_app: ConsoleApp, tmp_path: Path
) -> None:
    dead_port = free_port()  # nothing listens on it
    fake, hanging = CountingApiServer(), HangingApiServer()
    live = fake_kubeconfig(await fake_api(fake), tmp_path / "live")
    held = fake_kubeconfig(await fake_api(hanging), tmp_path / "held", context="held")
    dead = fake_kubeconfig(f"http://127.0.0.1:{dead_port}", tmp_path / "dead", context="dead")
    # Start-up must not wait for a cluster whose discovery never ends: were it to, this would
    # time out (the bound only turns a hang into a failure; it does not time start-up).
    client = await asyncio.wait_for(
        console_app(environ={"KUBECONFIG": f"{live}:{held}:{dead}"}), timeout=60
    )
    await eventually(lambda: fake.discoveries == 1 and hanging.waiting == 1, timeout=30)
    assert (await client.get(OBJECTS)).status == 200
    assert hanging.waiting == 1  # still held all along
    assert hanging.discoveries == 0
    resp = await client.get("/api/v1/clusters/dead/resources/configmaps/objects")
    assert resp.status == 502
    hanging.release.set()


async def test_a_warm_up_stopped_on_its_own_leaves_no_other_running_past_shutdown() -> None:
    # One cluster's warm-up ends cancelled by itself (its shared discovery was stopped) while
    # another's discovery still hangs: the warm-up as a whole must go on until the shutdown
    # cancels it, and then leave nothing running (gather ended at once and left the other).
    hanging = asyncio.Event()

    class Registry:
        def list(self) -> list[Any]:
            return [type("Cluster", (), {"id": name})() for name in ("stopped", "hanging")]

        async def client(self, cluster_id: str) -> str:
            return cluster_id

    class Catalogs:
        async def get(self, api: Any) -> None:
            if api.client == "stopped":
                raise asyncio.CancelledError
            hanging.set()
            await asyncio.Event().wait()

    before = asyncio.all_tasks()
    warming = asyncio.create_task(warm_up(Registry(), Catalogs()))  # type: ignore[arg-type]
    await asyncio.wait_for(hanging.wait(), 5)
    await asyncio.sleep(0.05)
    assert not warming.done()  # still waiting for the hanging one
    await tasks.cancel(warming)
    await asyncio.sleep(0)
    assert [t for t in asyncio.all_tasks() - before if t is not asyncio.current_task()] == []
