"""The HPA controller: status from the pods' resource metrics, and the target scaled within bounds."""

from __future__ import annotations

from typing import Any

from kubesim.cluster import LiveCluster
from tests.kubesim.live import DEPLOY, create, deployment, live_fixture, stored, until

HPA = ("autoscaling", "horizontalpodautoscalers")


live = live_fixture(nodes=1, namespaces=("scale",))


def hpa(name: str, target: str, utilization: int, *, low: int = 1, high: int = 4) -> dict[str, Any]:
    metric = {"type": "Utilization", "averageUtilization": utilization}
    return {
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": low,
            "maxReplicas": high,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": metric}}],
        },
    }


def conditions(obj: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in obj["status"].get("conditions", [])}


async def ready(live: LiveCluster, name: str, replicas: int) -> None:
    def check() -> bool:
        d = live.objs.store.get(DEPLOY, "scale", name)
        return bool(d and (d.get("status") or {}).get("readyReplicas") == replicas)

    await until(check, what=f"{name} ready")


async def hpa_status(live: LiveCluster, name: str, field: str) -> Any:
    """Wait until the controller has written ``status.<field>`` of HPA ``name``."""

    def check() -> Any:
        return ((live.objs.store.get(HPA, "scale", name) or {}).get("status") or {}).get(field)

    return await until(check, what=f"{name} status.{field}")


async def test_busy_pods_scale_the_target_up_to_max(live: LiveCluster) -> None:
    resources = {"requests": {"cpu": "1m"}}
    create(live.objs, DEPLOY, "scale", deployment("busy", replicas=2, resources=resources))
    await ready(live, "busy", 2)
    create(live.objs, HPA, "scale", hpa("busy", "busy", 50))
    found = await hpa_status(live, "busy", "currentMetrics")
    status = stored(live.objs, HPA, "scale", "busy")["status"]
    assert found[0]["resource"]["name"] == "cpu"
    assert found[0]["resource"]["current"]["averageUtilization"] > 100
    assert found[0]["resource"]["current"]["averageValue"].endswith("m")
    assert (status["currentReplicas"], status["desiredReplicas"]) == (2, 4)
    assert "lastScaleTime" in status
    assert conditions({"status": status}) == {
        "AbleToScale": ("True", "SucceededRescale"),
        "ScalingActive": ("True", "ValidMetricFound"),
        "ScalingLimited": ("True", "TooManyReplicas"),
    }
    assert stored(live.objs, DEPLOY, "scale", "busy")["spec"]["replicas"] == 4


async def test_idle_pods_wait_out_the_downscale_window(live: LiveCluster) -> None:
    resources = {"requests": {"cpu": "500m"}}
    create(live.objs, DEPLOY, "scale", deployment("idle", replicas=3, resources=resources))
    await ready(live, "idle", 3)
    create(live.objs, HPA, "scale", hpa("idle", "idle", 80))
    await hpa_status(live, "idle", "currentMetrics")
    status = stored(live.objs, HPA, "scale", "idle")["status"]
    assert status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] < 72
    assert (status["currentReplicas"], status["desiredReplicas"]) == (3, 3)
    assert conditions({"status": status})["AbleToScale"] == ("True", "ReadyForNewScale")
    assert stored(live.objs, DEPLOY, "scale", "idle")["spec"]["replicas"] == 3


async def test_missing_target_and_missing_requests_are_reported(live: LiveCluster) -> None:
    create(live.objs, HPA, "scale", hpa("ghost", "nowhere", 50))
    status = await hpa_status(live, "ghost", "conditions")
    assert status[0]["reason"] == "FailedGetScale"
    assert status[0]["message"] == (
        "the HPA controller was unable to get the target's current scale: "
        'deployments/scale.apps "nowhere" not found'
    )
    create(live.objs, DEPLOY, "scale", deployment("bare", replicas=1))
    await ready(live, "bare", 1)
    create(live.objs, HPA, "scale", hpa("bare", "bare", 50))
    found = await until(
        lambda: conditions(live.objs.store.get(HPA, "scale", "bare") or {"status": {}}).get(
            "ScalingActive"
        ),
        what="ScalingActive",
    )
    assert found == ("False", "FailedGetResourceMetric")
