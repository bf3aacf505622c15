"""Watch streams against the simulator over real HTTP: current state first, live changes to every
subscriber through one shared upstream watch (counted at the simulator), rows and objects from the
same watch, the watch closed after the last subscriber, keepalives, and the problems."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from common import sse
from console.keys import WATCHES
from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.live_support import open_stream, upstream_watches
from tests.console.resources_support import create, eventually, kube_in_new_namespace
from tests.guards import assert_problem
from tests.typing_support import Client

BASE = "/api/v1/clusters/alpha"


def config_map(ns: str, name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns},
            "data": data}  # fmt: skip


async def test_subscribers_share_one_upstream_watch_and_see_state_then_changes(
    client: Client, sim: Simulator
) -> None:
    async with kube_in_new_namespace(sim, "watch") as (api, ns):
        await create(api, config_map(ns, "first", secret="s3cr3t"))
        before = upstream_watches(sim, "", "configmaps")
        objects = await open_stream(
            client, f"{BASE}/resources/configmaps/objects/watch", namespace=ns
        )
        rows = await open_stream(client, f"{BASE}/resources/configmaps/watch", namespace=ns)
        first = await objects.next()
        assert (first.event, first.json()["metadata"]["name"]) == ("ADDED", "first")
        assert first.json()["data"] == {"secret": None}  # projected: values are not sent
        assert "managedFields" not in first.json()["metadata"]
        row = await rows.next()
        assert row.event == "ADDED"
        assert row.json() | {"age": None} == {"kind": "ConfigMap", "namespace": ns,
                                              "name": "first", "status": None, "age": None}  # fmt: skip
        await eventually(_async(lambda: upstream_watches(sim, "", "configmaps") == before + 1))
        assert client.app[WATCHES].upstream_count() == 1

        await create(api, config_map(ns, "second"))
        added = await objects.next()
        assert (added.event, added.json()["metadata"]["name"]) == ("ADDED", "second")
        added = await rows.next()
        assert (added.event, added.json()["name"]) == ("ADDED", "second")
        await api.send("DELETE", f"/api/v1/namespaces/{ns}/configmaps/first", None)
        gone = await objects.next()
        assert (gone.event, gone.json()["metadata"]["name"]) == ("DELETED", "first")
        assert (await rows.next()).event == "DELETED"
        assert upstream_watches(sim, "", "configmaps") == before + 1


async def test_a_late_subscriber_starts_from_the_shared_cache(
    client: Client, sim: Simulator
) -> None:
    async with kube_in_new_namespace(sim, "late") as (api, ns):
        early = await open_stream(
            client, f"{BASE}/resources/configmaps/objects/watch", namespace=ns
        )
        await create(api, config_map(ns, "a"))
        assert (await early.next()).json()["metadata"]["name"] == "a"
        late = await open_stream(client, f"{BASE}/resources/configmaps/objects/watch", namespace=ns)
        assert (await late.next()).json()["metadata"]["name"] == "a"  # from the cache
        await create(api, config_map(ns, "b"))
        assert [(await r.next()).json()["metadata"]["name"] for r in (early, late)] == ["b", "b"]
    assert client.app[WATCHES].upstream_count() == 1


async def test_the_upstream_watch_closes_after_the_last_subscriber_leaves(
    console_app: ConsoleApp, sim: Simulator
) -> None:
    client = await console_app()
    client.app[WATCHES].linger_s = 0.05
    async with kube_in_new_namespace(sim, "leave") as (api, ns):
        before = upstream_watches(sim, "", "secrets")
        readers = [
            await open_stream(client, f"{BASE}/resources/secrets/watch", namespace=ns)
            for _ in range(3)
        ]
        await eventually(_async(lambda: upstream_watches(sim, "", "secrets") == before + 1))
        for reader in readers[:2]:
            reader.resp.close()
        await asyncio.sleep(0.2)
        assert client.app[WATCHES].upstream_count() == 1  # one subscriber is still there
        readers[2].resp.close()
        await eventually(_async(lambda: client.app[WATCHES].upstream_count() == 0), timeout=2)
        # The simulator notices the closed connection at its next write to it.
        await create(api, {"apiVersion": "v1", "kind": "Secret",
                           "metadata": {"name": "poke", "namespace": ns}})  # fmt: skip
        await eventually(_async(lambda: upstream_watches(sim, "", "secrets") == before), timeout=8)


async def test_streams_write_keepalive_comments(console_app: ConsoleApp, sim: Simulator) -> None:
    client = await console_app()
    client.app[sse.STREAMS].interval = 0.05
    reader = await open_stream(client, f"{BASE}/resources/namespaces/watch")
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(0.5):  # the namespaces, then keepalives
            while ":keepalive" not in reader.comments:
                await reader.next()
    assert ":keepalive" in reader.comments


async def test_watch_problems_come_before_the_stream(client: Client) -> None:
    await assert_problem(
        await client.get(f"{BASE}/resources/bogus/watch"), 404, code="unknown-resource"
    )
    await assert_problem(
        await client.get("/api/v1/clusters/nope/resources/pods/watch"), 404, code="unknown-cluster"
    )
    # bindings can be created but not listed or watched
    await assert_problem(await client.get(f"{BASE}/resources/bindings/objects/watch"), 400)


def _async(check: Any) -> Any:
    async def run() -> Any:
        return check()

    return run
