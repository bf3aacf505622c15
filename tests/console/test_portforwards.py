"""Port-forwards against a living simulator: a Service resolved to a ready pod and its named target
port, real HTTP through the local listener, counters, refusals as ``port-forward-failed``, stop,
forwards released when their cluster is removed; one upstream SPDY tunnel per forward carrying
every connection, and the v4 channel protocol (a socket per connection) where there is no tunnel."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from console.identity import Identity
from console.keys import PORT_FORWARDS
from console.streams.podports import ForwardRequest
from console.streams.portforward import CHANNELS, PortForwards
from kubesim import Simulator
from tests.console.live_cluster import sim
from tests.console.resources_support import eventually, kube, seeded_namespace
from tests.console.support import ADMIN, kubeconfig_text
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

BASE = "/api/v1/clusters/alpha/port-forwards"
ME = Identity("admin", ("wharf:admins",))


@pytest.fixture(scope="module")
def ns(sim: Simulator) -> str:
    return seeded_namespace(sim, "pf", _deployment("web"), _service("web"))


def _deployment(name: str) -> dict[str, Any]:
    container = {"name": "app", "image": "ghcr.io/wharf-demo/web:1.0",
                 "ports": [{"name": "http", "containerPort": 8080}]}  # fmt: skip
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [container]}}}}  # fmt: skip


def _service(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name},
                     "ports": [{"port": 80, "targetPort": "http"}]}}  # fmt: skip


async def _ready_pod(client: Client, ns: str) -> str:
    async def check() -> str | None:
        resp = await client.get("/api/v1/clusters/alpha/resources/pods/objects",
                                params={"namespace": ns})  # fmt: skip
        for pod in await resp.json():
            conditions = pod.get("status", {}).get("conditions") or []
            if any(c["type"] == "Ready" and c["status"] == "True" for c in conditions):
                return str(pod["metadata"]["name"])
        return None

    found: str = await eventually(check, what="a ready web pod")
    return found


async def _get(port: int, path: str = "/") -> tuple[int, Any]:
    url = f"http://127.0.0.1:{port}{path}"
    async with aiohttp.ClientSession() as http, asyncio.timeout(10), http.get(url) as resp:
        return resp.status, await resp.json(content_type=None)


async def _refused(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return True
    writer.close()
    await writer.wait_closed()
    return False


async def test_service_forward_carries_http(client: Client, ns: str) -> None:
    pod = await _ready_pod(client, ns)
    body = {"kind": "svc", "namespace": ns, "name": "web", "remotePort": 80}
    resp = await client.post(BASE, json=body, headers=ADMIN)
    assert resp.status == 201, await resp.text()
    forward = await resp.json()
    assert forward["localAddress"] == "127.0.0.1"
    assert (forward["pod"], forward["targetPort"], forward["state"]) == (pod, 8080, "active")

    for _ in range(2):
        status, answer = await _get(forward["localPort"], "/hello")
        assert (status, answer["pod"]["name"]) == (200, pod)

    listed = await (await client.get(BASE)).json()
    assert [f["id"] for f in listed] == [forward["id"]]
    assert listed[0]["connections"] == 2
    assert listed[0]["bytesIn"] > 0
    assert listed[0]["bytesOut"] > 0

    stop = f"{BASE}/{forward['id']}/stop"
    assert (await client.post(stop)).status == 401
    resp = await client.post(stop, headers=ADMIN)
    assert (await resp.json())["state"] == "stopped"
    assert await _refused(forward["localPort"])
    assert await (await client.get(BASE)).json() == []
    await assert_problem(await client.post(stop, headers=ADMIN), 404, code="unknown-port-forward")

    audit = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    actions = [(e["action"], e["target"], e["outcome"]) for e in audit]
    assert ("port-forward", f"svc/{ns}/web:80", "success") in actions
    assert ("port-forward-stop", forward["id"], "success") in actions


async def test_workload_and_pod_forwards(client: Client, ns: str) -> None:
    pod = await _ready_pod(client, ns)
    for kind, name, port in (("deployment", "web", 8080), ("Pod", pod, 9999)):
        body = {"kind": kind, "namespace": ns, "name": name, "remotePort": port}
        resp = await client.post(BASE, json=body, headers=ADMIN)
        assert resp.status == 201, await resp.text()
        forward = await resp.json()
        assert (forward["pod"], forward["targetPort"]) == (pod, port)
        if port == 8080:
            assert (await _get(forward["localPort"]))[0] == 200
        else:  # the pod does not listen there: the connection ends, the reason is kept
            with pytest.raises(aiohttp.ClientError):
                await _get(forward["localPort"])
            listed = await (await client.get(BASE)).json()
            mine = next(f for f in listed if f["id"] == forward["id"])
            assert "connection refused" in mine["lastError"]
        await client.post(f"{BASE}/{forward['id']}/stop", headers=ADMIN)


async def test_refusals(client: Client, ns: str) -> None:
    await _ready_pod(client, ns)

    async def start(headers: dict[str, str] | None = None, **body: Any) -> aiohttp.ClientResponse:
        given = {"kind": "service", "namespace": ns, "name": "web", "remotePort": 80} | body
        return await client.post(BASE, json=given, headers=headers or {})

    async def admin(**body: Any) -> aiohttp.ClientResponse:
        return await start(**body, headers=ADMIN)

    assert (await start()).status == 401

    body = await assert_problem(await admin(remotePort=81), 400, code="port-forward-failed")
    assert "80" in body["detail"]
    await assert_problem(await admin(kind="configmap"), 400, code="port-forward-failed")
    await assert_problem(await admin(name="ghost"), 404, code="cluster-refused")
    await assert_problem(await admin(remotePort=0), 400, code="invalid-request")
    resp = await admin()
    first = await resp.json()
    body = await assert_problem(
        await admin(localPort=first["localPort"]), 400, code="port-forward-failed"
    )
    assert str(first["localPort"]) in body["detail"]
    await client.post(f"{BASE}/{first['id']}/stop", headers=ADMIN)
    await assert_problem(
        await client.post("/api/v1/clusters/nope/port-forwards", json={}, headers=ADMIN), 400
    )


async def test_removing_the_cluster_releases_its_forwards(
    client: Client, sim: Simulator, ns: str
) -> None:
    await _ready_pod(client, ns)
    definition = {"id": "gamma", "kubeconfig": kubeconfig_text(sim)}
    assert (await client.post("/api/v1/clusters", json=definition, headers=ADMIN)).status == 201
    body = {"kind": "service", "namespace": ns, "name": "web", "remotePort": 80}
    resp = await client.post("/api/v1/clusters/gamma/port-forwards", json=body, headers=ADMIN)
    forward = await resp.json()
    assert (await _get(forward["localPort"]))[0] == 200
    assert (await client.delete("/api/v1/clusters/gamma", headers=ADMIN)).status == 204
    assert await _refused(forward["localPort"])


async def test_one_tunnel_carries_every_connection(client: Client, ns: str) -> None:
    """kubectl's transport: however many connections, sequential or at once, one upgrade."""
    pod = await _ready_pod(client, ns)
    body = {"kind": "deployment", "namespace": ns, "name": "web", "remotePort": 8080}
    forward = await (await client.post(BASE, json=body, headers=ADMIN)).json()
    port = forward["localPort"]
    try:
        assert (await _get(port, "/one"))[0] == 200
        answers = await asyncio.gather(*(_get(port, f"/at-once/{i}") for i in range(5)))
        assert [(status, a["pod"]["name"]) for status, a in answers] == [(200, pod)] * 5
        assert (await _get(port, "/last"))[0] == 200
        running = client.app[PORT_FORWARDS].get("alpha", forward["id"])
        assert (running.connections, running.upstream_sockets) == (7, 1)
        await eventually(_idle(running), what="connections closed")
        assert running._tunnel is not None
        assert running._tunnel.streams == {}  # every stream pair was released
    finally:
        await client.post(f"{BASE}/{forward['id']}/stop", headers=ADMIN)


def _idle(forward: Any) -> Any:
    async def check() -> bool | None:
        return forward.active == 0 or None

    return check


async def test_channel_protocol_without_a_tunnel(sim: Simulator, ns: str, client: Client) -> None:
    """A cluster that does not offer the tunnel: a v4 socket per connection, errors on channel 1."""
    pod = await _ready_pod(client, ns)
    forwards = PortForwards(protocols=(CHANNELS,))
    async with kube(sim) as api:
        try:
            good = await forwards.start(
                "alpha", api, ForwardRequest("pod", ns, pod, 8080), owner=ME
            )
            for _ in range(2):
                status, answer = await _get(good.address[1], "/v4")
                assert (status, answer["pod"]["name"]) == (200, pod)
            assert (good.connections, good.upstream_sockets) == (2, 2)
            assert good.bytes_out > 0

            bad = await forwards.start("alpha", api, ForwardRequest("pod", ns, pod, 9999), owner=ME)
            with pytest.raises(aiohttp.ClientError):
                await _get(bad.address[1])
            assert bad.last_error is not None
            assert "connection refused" in bad.last_error
        finally:
            await forwards.close()
