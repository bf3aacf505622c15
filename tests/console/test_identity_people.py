"""alice, bob and the admin through the console's HTTP API on a living simulator that enforces RBAC,
with impersonation on: alice (group team-a, ``edit`` in namespace a) lists, applies, deletes,
execs and port-forwards in a and is refused the same in b; bob (``view`` everywhere) reads but
cannot delete or exec; the admin (group wharf:admins, bound to cluster-admin) does everything; a
RoleBinding removed closes alice's event stream within the review TTL."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest

from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.identity_support import (
    Spaces,
    alice_edit,
    bind,
    people,
    shell_running,
    sleeper_pod,
    unbind,
)
from tests.console.live_cluster import sim
from tests.console.resources_support import kube
from tests.console.support import ADMIN, ALICE, BOB, add_people
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

API = "/api/v1/clusters/alpha"
TTL = 0.5


@pytest.fixture(scope="module")
def spaces(sim: Simulator) -> Spaces:
    return people(sim, sleeper_pod("shell"))


async def _console(console_app: ConsoleApp) -> Client:
    client = await console_app(
        "clusters.impersonate=on", f"security.access-review-ttl={TTL}", "security.open-mode=false"
    )
    await add_people(client)
    return client


def _cm(ns: str, name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}}


async def _exec(client: Client, who: dict[str, str], ns: str) -> int:
    """The exit code of ``exit 3`` run in the pod as ``who``; the handshake's status if refused."""
    params = {"cluster": "alpha", "namespace": ns, "pod": "shell", "command": "sh"}
    query = [*params.items(), ("command", "-c"), ("command", "exit 3")]
    try:
        ws = await client.ws_connect(f"/ws/exec?{urlencode(query)}", headers=who)
    except aiohttp.WSServerHandshakeError as exc:
        return exc.status
    async with asyncio.timeout(10):
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                end: dict[str, Any] = json.loads(msg.data)
                await ws.close()
                return int(end["exitCode"])
    raise AssertionError("no exit frame")


async def _forward(client: Client, who: dict[str, str], ns: str) -> int:
    body = {"kind": "pod", "namespace": ns, "name": "shell", "remotePort": 80}
    resp = await client.post(f"{API}/port-forwards", json=body, headers=who)
    if resp.status < 300:
        forward = await resp.json()
        await client.delete(f"{API}/port-forwards/{forward['id']}", headers=who)
    return resp.status


async def test_alice_bob_and_the_admin(
    console_app: ConsoleApp, sim: Simulator, spaces: Spaces
) -> None:
    client = await _console(console_app)
    a, b = spaces.a, spaces.b
    await shell_running(client, a)
    await shell_running(client, b)
    pods = f"{API}/resources/pods"

    assert (await client.get(pods, params={"namespace": a}, headers=ALICE)).status == 200
    body = await assert_problem(
        await client.get(pods, params={"namespace": b}, headers=ALICE), 403, code="cluster-refused"
    )
    assert 'User "alice"' in body["detail"]
    applied = await client.post(f"{API}/apply", json=_cm(a, "alices"), headers=ALICE)
    assert applied.status < 300, await applied.text()
    refused = await client.post(f"{API}/apply", json=_cm(b, "alices"), headers=ALICE)
    await assert_problem(refused, 403, code="cluster-refused")
    deleted = await client.post(f"{API}/resources/configmaps/{a}/alices/delete", headers=ALICE)
    assert deleted.status < 300, await deleted.text()
    await assert_problem(
        await client.post(f"{API}/resources/pods/{b}/shell/delete", headers=ALICE), 403,
        code="cluster-refused",
    )  # fmt: skip
    assert await _exec(client, ALICE, a) == 3
    assert await _exec(client, ALICE, b) == 403
    assert await _forward(client, ALICE, a) < 300
    assert await _forward(client, ALICE, b) == 403
    assert (await client.get(f"{API}/pods/{a}/shell/log", headers=ALICE)).status == 200
    await assert_problem(
        await client.get(f"{API}/pods/{b}/shell/log", headers=ALICE), 403, code="cluster-refused"
    )
    counted = await (await client.get(f"{API}/counts", headers=ALICE)).json()
    pods_count = [c["count"] for c in counted["counts"] if c["resourceId"] == "pods"]
    assert pods_count == [1]  # her namespace's pod, not b's nor the system's
    found = await (await client.get(f"{API}/search", params={"q": "shell"}, headers=ALICE)).json()
    assert {h["namespace"] for h in found["hits"]} == {a}

    for ns in (a, b):
        assert (await client.get(pods, params={"namespace": ns}, headers=BOB)).status == 200
    await assert_problem(
        await client.post(f"{API}/resources/pods/{a}/shell/delete", headers=BOB), 403,
        code="cluster-refused",
    )  # fmt: skip
    assert await _exec(client, BOB, a) == 403

    assert (await client.get(pods, headers=ADMIN)).status == 200
    assert await _exec(client, ADMIN, b) == 3
    applied = await client.post(f"{API}/apply", json=_cm(b, "admins"), headers=ADMIN)
    assert applied.status < 300, await applied.text()

    trail = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    mine = [e for e in trail if e["user"] == "alice"]
    assert mine
    assert all(e["groups"] == ["team-a"] and e["impersonated"] for e in mine)


async def test_a_removed_rolebinding_closes_alices_stream(
    console_app: ConsoleApp, sim: Simulator, spaces: Spaces
) -> None:
    client = await _console(console_app)
    watch = f"{API}/resources/configmaps/watch"
    await assert_problem(
        await client.get(watch, params={"namespace": spaces.b}, headers=ALICE), 403,
        code="cluster-refused",
    )  # fmt: skip
    resp = await client.get(watch, params={"namespace": spaces.a}, headers=ALICE)
    assert resp.status == 200, await resp.text()
    async with kube(sim) as own:
        await unbind(own, spaces.a, spaces.alice_binding)
        removed = time.monotonic()
        try:
            events: list[str] = []
            async with asyncio.timeout(10):
                async for raw in resp.content:
                    events.append(raw.decode().strip())
            took = time.monotonic() - removed
        finally:
            await bind(own, alice_edit(spaces))
    assert "event: error" in events
    assert any('"status": 403' in e or '"status":403' in e for e in events), events
    assert took < TTL + 1.5, took
