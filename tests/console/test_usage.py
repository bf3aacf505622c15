"""Metrics on a live cluster (metrics.k8s.io and kubelet stats from the simulator, graphs from the
sampler or from a Prometheus in the cluster, queried through the API server's service proxy) and
on a cluster without any metrics source, where every answer is empty rather than an error."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from kubesim import Simulator
from tests.console.conftest import ConsoleApp, ConsoleOn
from tests.console.fakeapi import LegacyApiServer
from tests.console.live_cluster import sim
from tests.console.resources_support import (
    create,
    deployment,
    eventually,
    kube,
    kube_in_new_namespace,
    namespace,
    unique,
)
from tests.guards import assert_json, assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

BASE = "/api/v1/clusters/alpha/metrics"


@pytest.fixture
async def sampled(console_app: ConsoleApp) -> Client:
    return await console_app("sampler.interval-seconds=0.05")


async def _running(sim: Simulator, client: Client) -> tuple[str, str]:
    async with kube_in_new_namespace(sim, "use") as (api, ns):
        await create(api, deployment(ns, "web"))

    async def reported() -> list[dict[str, Any]] | None:
        pods = await (await client.get(f"{BASE}/pods", params={"namespace": ns})).json()
        return pods or None

    pods = await eventually(reported, what="pod metrics")
    return ns, pods[0]["name"]


async def test_node_and_pod_usage(sampled: Client, sim: Simulator) -> None:
    ns, pod = await _running(sim, sampled)
    nodes = await (await sampled.get(f"{BASE}/nodes")).json()
    async with kube(sim) as api:
        names = {n["metadata"]["name"] for n in (await api.get("/api/v1/nodes"))["items"]}
    assert {n["name"] for n in nodes} == names
    assert all(n["memoryBytes"] > 0 and n["cpuMillicores"] >= 0 for n in nodes)
    pods = await (await sampled.get(f"{BASE}/pods", params={"namespace": ns})).json()
    assert [(p["namespace"], p["name"]) for p in pods] == [(ns, pod)]
    assert [c["name"] for c in pods[0]["containers"]] == ["app"]
    assert pods[0]["memoryBytes"] == sum(c["memoryBytes"] for c in pods[0]["containers"])
    # Disk from each kubelet's stats summary, through the API server's node proxy.
    disk = await (await sampled.get(f"{BASE}/nodes/disk")).json()
    assert {d["node"] for d in disk} == names
    for entry in disk:
        assert entry["capacityBytes"] == 102626232 * 1024  # the node's ephemeral-storage
        assert entry["usedBytes"] + entry["availableBytes"] == entry["capacityBytes"]
        assert entry["usedFraction"] == round(entry["usedBytes"] / entry["capacityBytes"], 4)
        assert 0 < entry["imageFsUsedBytes"] < entry["usedBytes"]


async def test_graphs_come_from_the_sampler(sampled: Client, sim: Simulator) -> None:
    ns, pod = await _running(sim, sampled)
    params = {"target": "pod", "namespace": ns, "name": pod}
    first = await (await sampled.get(f"{BASE}/graph", params=params)).json()
    assert first["source"] == "sampler"
    assert first["minutes"] == 60
    assert len(first["series"][1]["points"]) >= 1  # the first request samples at once

    async def more() -> dict[str, Any] | None:
        body: dict[str, Any] = await (await sampled.get(f"{BASE}/graph", params=params)).json()
        return body if len(body["series"][0]["points"]) >= 3 else None

    graph = await eventually(more, what="three samples")
    times = [t for t, _ in graph["series"][0]["points"]]
    assert times == sorted(times)
    whole = await (await sampled.get(f"{BASE}/graph", params={"target": "cluster"})).json()
    assert whole["series"][1]["points"][-1][1] > 0
    await assert_problem(await sampled.get(f"{BASE}/graph", params={"target": "node"}), 400)
    await assert_problem(await sampled.get(f"{BASE}/graph", params={"target": "disk"}), 400)


async def test_the_metrics_backend_is_found_by_its_service(client: Client, sim: Simulator) -> None:
    assert await (await client.get(f"{BASE}/prometheus")).json() == {
        "found": False,
        "chosen": None,
        "candidates": [],
    }
    ns = unique("mon")

    def service(name: str, port: int) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"app": name}, "ports": [{"port": port}]},
        }

    async with kube(sim) as api:
        await create(api, namespace(ns))
        await create(api, service("prometheus-alertmanager", 9093))
        await create(api, service("prometheus-server", 9090))
    body = await (await client.get(f"{BASE}/prometheus")).json()
    assert body["found"] is True
    assert body["chosen"] == {
        "backend": "prometheus",
        "namespace": ns,
        "service": "prometheus-server",
        "port": 9090,
        "proxyPath": f"/api/v1/namespaces/{ns}/services/prometheus-server:9090/proxy",
    }
    assert len(body["candidates"]) == 1
    async with kube(sim) as api:  # stand-ins without pods: gone, so other graphs are unaffected
        for name in ("prometheus-alertmanager", "prometheus-server"):
            await api.send("DELETE", f"/api/v1/namespaces/{ns}/services/{name}", None)


def _prometheus(ns: str) -> list[dict[str, Any]]:
    server = deployment(ns, "prometheus")
    server["spec"]["template"]["spec"]["containers"] = [
        {
            "name": "prometheus",
            "image": "quay.io/prometheus/prometheus:v2.54.1",
            "ports": [{"name": "web", "containerPort": 9090}],
        }
    ]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "prometheus", "namespace": ns},
        "spec": {"selector": {"app": "prometheus"}, "ports": [{"port": 9090, "targetPort": "web"}]},
    }
    return [server, service]


async def _monitored(sim: Simulator) -> str:
    """A new namespace running a Prometheus and a Deployment it can report on."""
    async with kube_in_new_namespace(sim, "prom") as (api, ns):
        for obj in [*_prometheus(ns), deployment(ns, "web")]:
            await create(api, obj)
    return ns


async def _graph(client: Client, **params: str) -> dict[str, Any]:
    body: dict[str, Any] = await assert_json(await client.get(f"{BASE}/graph", params=params))
    return body


async def test_graphs_come_from_the_detected_prometheus_else_the_sampler(
    console_app: ConsoleApp, sim: Simulator
) -> None:
    monitored = await _monitored(sim)
    client = await console_app("sampler.interval-seconds=0.05")

    async def web_pod() -> str | None:
        pods = await (await client.get(f"{BASE}/pods", params={"namespace": monitored})).json()
        names = [p["name"] for p in pods if p["name"].startswith("web-")]
        return names[0] if names else None

    pod = await eventually(web_pod, what="the web pod's metrics")

    async def from_prometheus() -> dict[str, Any] | None:
        graph = await _graph(client, target="pod", namespace=monitored, name=pod, minutes="30")
        return graph if graph["source"] == "prometheus" else None

    graph = await eventually(from_prometheus, what="a graph from Prometheus")
    assert graph["backend"]["service"] == "prometheus"
    assert graph["backend"]["proxyPath"] == (
        f"/api/v1/namespaces/{monitored}/services/prometheus:9090/proxy"
    )
    assert graph["warning"] is None
    assert graph["intervalSeconds"] == 15  # 30 minutes / 240 points, at least 15 s
    cpu, memory = (s["points"] for s in graph["series"])
    assert cpu
    assert memory
    assert [t for t, _ in memory] == sorted(t for t, _ in memory)
    pods = await (await client.get(f"{BASE}/pods", params={"namespace": monitored})).json()
    reported = next(p["memoryBytes"] for p in pods if p["name"] == pod)
    assert abs(memory[-1][1] - reported) / reported < 0.2  # the same usage, by either road

    whole = await _graph(client, target="cluster")
    assert whole["source"] == "prometheus"
    assert len(whole["series"][0]["points"]) == 241  # an hour at 15 s, both ends included
    assert whole["series"][1]["points"][-1][1] > memory[-1][1]
    nodes = await (await client.get(f"{BASE}/nodes")).json()
    node = await _graph(client, target="node", name=nodes[0]["name"])
    assert node["source"] == "prometheus"
    assert node["series"][1]["points"]
    nothing = await _graph(client, target="namespace", namespace="no-such-namespace")
    assert (nothing["source"], nothing["series"][0]["points"]) == ("none", [])

    # Prometheus goes away (no ready endpoint behind its Service): the sampler takes over.
    async with kube(sim) as api:
        await api.send(
            "PATCH",
            f"/apis/apps/v1/namespaces/{monitored}/deployments/prometheus",
            {"spec": {"replicas": 0}},
            content_type="application/merge-patch+json",
        )

    async def from_sampler() -> dict[str, Any] | None:
        graph = await _graph(client, target="cluster")
        return graph if graph["source"] == "sampler" else None

    graph = await eventually(from_sampler, what="the sampler taking over")
    assert graph["backend"] is None
    assert "prometheus failed" in graph["warning"]
    assert "no endpoints available" in graph["warning"]
    assert graph["series"][1]["points"][-1][1] > 0


class _NoMetrics(LegacyApiServer):
    """A cluster with nodes and Services but no metrics-server, kubelet stats or Prometheus."""

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/api/v1/nodes", self.empty)
        app.router.add_get("/api/v1/services", self.empty)

    async def empty(self, request: web.Request) -> web.Response:
        return web.json_response({"kind": "List", "apiVersion": "v1", "items": [], "metadata": {}})


async def test_without_any_source_every_answer_is_empty(console_on: ConsoleOn) -> None:
    client = await console_on(_NoMetrics({"nodes": "Node", "services": "Service"}))
    base = "/api/v1/clusters/fake/metrics"
    for path in ("/nodes", "/pods", "/nodes/disk"):
        resp = await client.get(base + path)
        assert resp.status == 200, await resp.text()
        assert await resp.json() == []
    assert (await (await client.get(f"{base}/prometheus")).json())["found"] is False
    graph = await (await client.get(f"{base}/graph", params={"target": "cluster"})).json()
    assert graph["source"] == "none"
    assert graph["series"][0]["points"] == []
