"""metrics.k8s.io/v1beta1: NodeMetrics and PodMetrics as kubectl top and dashboards read them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

from kubesim import Simulator
from kubesim.machinery import quantity
from tests.kubesim.conftest import Raw
from tests.kubesim.livesim import demo_simulator, pods, wait_for

T = TypeVar("T")

BASE = "/apis/metrics.k8s.io/v1beta1"


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    yield from demo_simulator(tmp_path_factory.mktemp("kubesim"), nodes=2)


async def test_node_metrics(raw: Raw) -> None:
    status, body, _ = await raw("GET", f"{BASE}/nodes")
    assert status == 200
    assert body["kind"] == "NodeMetricsList"
    assert [n["metadata"]["name"] for n in body["items"]] == ["kubesim-node-1", "kubesim-node-2"]
    usage = body["items"][0]["usage"]
    assert usage["cpu"].endswith("n")
    assert usage["memory"].endswith("Ki")
    assert 0.1 < quantity.parse(usage["cpu"]) < 4  # cores: plausible for a 4-core node
    status, one, _ = await raw("GET", f"{BASE}/nodes/kubesim-node-2")
    assert (status, one["kind"], one["window"]) == (200, "NodeMetrics", "20.05s")


async def test_pod_metrics_selectors_and_missing_pods(sim: Simulator, raw: Raw) -> None:
    status, body, _ = await raw(
        "GET", f"{BASE}/namespaces/shop/pods", labelSelector="app.kubernetes.io/name=frontend"
    )
    assert status == 200
    assert len(body["items"]) == 3
    assert body["items"][0]["containers"][0]["name"] == "nginx"
    status, every, _ = await raw("GET", f"{BASE}/pods")
    assert {p["metadata"]["namespace"] for p in every["items"]} >= {
        "shop",
        "kube-system",
        "monitoring",
    }
    pending = wait_for(sim, lambda st: pods(st, "broken", "too-big"))[0]["metadata"]["name"]
    status, missing, _ = await raw("GET", f"{BASE}/namespaces/broken/pods/{pending}")
    assert (status, missing["message"]) == (
        404,
        f'podmetrics.metrics.k8s.io "broken/{pending}" not found',
    )
    assert (await raw("GET", f"{BASE}/pods", watch="true"))[0] == 405


def _phases_on(sim: Simulator, node: str) -> dict[tuple[str, str], str | None]:
    """Each pod on ``node`` and its phase, read on the simulator's loop."""
    return {
        (p["metadata"]["namespace"], p["metadata"]["name"]): (p.get("status") or {}).get("phase")
        for p in sim.call(lambda state: state.objects.store.list(("", "pods")))
        if (p.get("spec") or {}).get("nodeName") == node
    }


async def test_the_kubelet_stats_summary_through_the_node_proxy(sim: Simulator, raw: Raw) -> None:
    # The demo's Job pods run for a moment and then fail, so the pods are compared with the summary
    # as they were when it was taken: read before and after it, taken again until nothing moved in
    # between (a phase never goes back, so an unchanged phase held throughout).
    async def unmoved() -> tuple[int, Any, dict[tuple[str, str], str | None]] | None:
        before = _phases_on(sim, "kubesim-node-1")
        status, body, _ = await raw("GET", "/api/v1/nodes/kubesim-node-1/proxy/stats/summary")
        after = _phases_on(sim, "kubesim-node-1")
        return (status, body, after) if after == before else None

    status, body, phases = await _eventually(unmoved)
    assert status == 200
    node = body["node"]
    assert node["nodeName"] == "kubesim-node-1"
    fs, image_fs = node["fs"], node["runtime"]["imageFs"]
    assert fs["capacityBytes"] == 102626232 * 1024  # the node's ephemeral-storage
    assert 0 < fs["usedBytes"] < fs["capacityBytes"]
    assert fs["availableBytes"] == fs["capacityBytes"] - fs["usedBytes"]
    assert fs["inodesFree"] + fs["inodesUsed"] == fs["inodes"]
    assert 0 < image_fs["usedBytes"] < fs["usedBytes"]
    assert node["cpu"]["usageNanoCores"] > 0
    assert node["memory"]["workingSetBytes"] > 0
    on_node = {pod for pod, phase in phases.items() if phase == "Running"}
    reported = {(p["podRef"]["namespace"], p["podRef"]["name"]) for p in body["pods"]}
    assert reported
    assert reported <= on_node
    pod = body["pods"][0]
    container = pod["containers"][0]
    assert {"name", "startTime", "cpu", "memory", "rootfs", "logs"} <= set(container)
    assert pod["ephemeral-storage"]["usedBytes"] >= container["rootfs"]["usedBytes"]

    status, missing, _ = await raw("GET", "/api/v1/nodes/nope/proxy/stats/summary")
    assert (status, missing["message"]) == (404, 'nodes "nope" not found')
    status, text, _ = await raw("GET", "/api/v1/nodes/kubesim-node-1/proxy/nothing-here")
    assert (status, text) == (404, "404 page not found\n")


PROM = "/api/v1/namespaces/monitoring/services/prometheus:9090/proxy/api/v1"


async def test_prometheus_answers_queries_through_the_service_proxy(
    sim: Simulator, raw: Raw
) -> None:
    wait_for(sim, lambda st: pods(st, "monitoring", "prometheus"), what="prometheus pod")
    query = 'sum(rate(container_cpu_usage_seconds_total{namespace="shop",container!=""}[5m]))'

    async def instant() -> Any:
        status, body, _ = await raw("GET", f"{PROM}/query", query=query)
        return body if status == 200 else None

    body = await _eventually(instant)
    assert body["status"] == "success"
    assert body["data"]["resultType"] == "vector"
    [sample] = body["data"]["result"]
    assert sample["metric"] == {}
    assert 0 < float(sample["value"][1]) < 4

    memory = (
        'sum by (pod) (container_memory_working_set_bytes{namespace="shop",pod=~"frontend-.*"})'
    )
    status, by_pod, _ = await raw("GET", f"{PROM}/query", query=memory)
    assert status == 200
    assert len(by_pod["data"]["result"]) == 3  # the three frontend replicas
    assert all(set(r["metric"]) == {"pod"} for r in by_pod["data"]["result"])

    now = time.time()
    status, ranged, _ = await raw(
        "POST",
        f"{PROM}/query_range",
        f'query=sum(container_memory_working_set_bytes{{id="/"}})&start={now - 300}&end={now}&step=60',
        content_type="application/x-www-form-urlencoded",
    )
    assert status == 200, ranged
    assert ranged["data"]["resultType"] == "matrix"
    [series] = ranged["data"]["result"]
    times = [t for t, _ in series["values"]]
    assert len(times) == 6
    assert times == sorted(times)

    status, bad, _ = await raw("GET", f"{PROM}/query", query="sum(rate(")
    assert (status, bad["status"], bad["errorType"]) == (400, "error", "bad_data")
    status, tiny, _ = await raw(
        "GET", f"{PROM}/query_range", query="up", start="0", end=str(now), step="1"
    )
    assert status == 400
    assert "11,000 points" in tiny["error"]
    status, gone, _ = await raw("GET", "/api/v1/namespaces/monitoring/services/nope:9090/proxy/")
    assert (status, gone["message"]) == (404, 'services "nope" not found')


async def _eventually(probe: Callable[[], Awaitable[T | None]]) -> T:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = await probe()
        if found is not None:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError("never answered")
