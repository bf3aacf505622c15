"""metrics.k8s.io/v1beta1: NodeMetrics and PodMetrics as kubectl top and dashboards read them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from common.kubesim import Simulator
from common.kubesim.machinery import quantity
from tests.kubesim.conftest import Raw
from tests.kubesim.livesim import demo_simulator, pods, wait_for

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
