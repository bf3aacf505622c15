"""Metrics on a live cluster (metrics.k8s.io from the simulator) and on a cluster without any
metrics source, where every answer is empty rather than an error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from common.kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.fakeapi import LegacyApiServer, StartFake, fake_kubeconfig
from tests.console.resources_support import (
    create,
    deployment,
    eventually,
    kube,
    live_alpha,
    namespace,
    unique,
)
from tests.guards import assert_problem

BASE = "/api/v1/clusters/alpha/metrics"
Client = TestClient[Any, Any]


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    yield from live_alpha(tmp_path_factory)


@pytest.fixture
async def sampled(console_app: ConsoleApp) -> Client:
    return await console_app("sampler.interval-seconds=0.05")


async def _running(sim: Simulator, client: Client) -> tuple[str, str]:
    ns = unique("use")
    async with kube(sim) as api:
        await create(api, namespace(ns))
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
    # The simulator's kubelet serves no stats summary: no disk figures, and no error.
    disk = await sampled.get(f"{BASE}/nodes/disk")
    assert disk.status == 200
    assert await disk.json() == []


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


class _NoMetrics(LegacyApiServer):
    """A cluster with nodes and Services but no metrics-server, kubelet stats or Prometheus."""

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/api/v1/nodes", self.empty)
        app.router.add_get("/api/v1/services", self.empty)

    async def empty(self, request: web.Request) -> web.Response:
        return web.json_response({"kind": "List", "apiVersion": "v1", "items": [], "metadata": {}})


async def test_without_any_source_every_answer_is_empty(
    fake_api: StartFake, console_app: ConsoleApp, tmp_path: Path
) -> None:
    fake = _NoMetrics({"nodes": "Node", "services": "Service"})
    kubeconfig = fake_kubeconfig(await fake_api(fake), tmp_path / "kubeconfig")
    client = await console_app(environ={"KUBECONFIG": str(kubeconfig)})
    base = "/api/v1/clusters/fake/metrics"
    for path in ("/nodes", "/pods", "/nodes/disk"):
        resp = await client.get(base + path)
        assert resp.status == 200, await resp.text()
        assert await resp.json() == []
    assert (await (await client.get(f"{base}/prometheus")).json())["found"] is False
    graph = await (await client.get(f"{base}/graph", params={"target": "cluster"})).json()
    assert graph["source"] == "none"
    assert graph["series"][0]["points"] == []
