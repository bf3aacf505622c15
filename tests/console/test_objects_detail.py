"""The detail view resolves relations server-side: owner chain, owned pods, selecting Services,
Ingress → Service, PVC → PV → StorageClass, mounted ConfigMaps and Secrets, HPA target, events."""

from __future__ import annotations

from typing import Any

import pytest

from kubesim import Simulator
from tests.console.live_cluster import sim
from tests.console.resources_support import (
    create,
    create_all,
    deployment,
    eventually,
    kube,
    namespace,
    unique,
)
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

BASE = "/api/v1/clusters/alpha"


@pytest.fixture(scope="module")
def world(sim: Simulator) -> dict[str, str]:
    """A small application run by the simulator's controllers: Deployment → ReplicaSet → Pod,
    with a Service, an Ingress (one backend gone), a claim on a volume of a class, a ConfigMap and
    a Secret it uses (and a ConfigMap it names that does not exist), and an autoscaler."""
    ns = unique("detail")
    names = {"ns": ns, "sc": unique("fast"), "pv": unique("pv")}
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "containers": [{
                "name": "app", "image": "nginx:1.27",
                "envFrom": [{"secretRef": {"name": "creds"}}],
                "env": [{"name": "GONE", "valueFrom": {
                    "configMapKeyRef": {"name": "deleted-map", "key": "k", "optional": True}}}],
            }],
            "volumes": [{"name": "cfg", "configMap": {"name": "settings"}},
                        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
        },
    }  # fmt: skip

    async def build() -> None:
        async with kube(sim) as api:
            await create(api, namespace(ns))
            await create_all(api, [
                {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                 "metadata": {"name": names["sc"]}, "provisioner": "example.com/disk"},
                {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": names["pv"]},
                 "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                          "storageClassName": names["sc"], "hostPath": {"path": "/data"},
                          "claimRef": {"namespace": ns, "name": "data"}}},
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": "data", "namespace": ns},
                 "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": names["sc"],
                          "volumeName": names["pv"],
                          "resources": {"requests": {"storage": "1Gi"}}}},
                {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "settings", "namespace": ns}, "data": {"a": "1"}},
                {"apiVersion": "v1", "kind": "Secret",
                 "metadata": {"name": "creds", "namespace": ns}, "data": {"p": "eA=="}},
                {**deployment(ns, "web"), "spec": {**deployment(ns, "web")["spec"],
                                                   "template": template}},
                {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": ns},
                 "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}},
                {"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": "other", "namespace": ns},
                 "spec": {"selector": {"app": "other"}, "ports": [{"port": 80}]}},
                {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                 "metadata": {"name": "front", "namespace": ns},
                 "spec": {"rules": [{"http": {"paths": [
                     {"path": "/", "pathType": "Prefix",
                      "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                     {"path": "/old", "pathType": "Prefix",
                      "backend": {"service": {"name": "retired", "port": {"number": 80}}}}]}}]}},
                {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                 "metadata": {"name": "web", "namespace": ns},
                 "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                             "name": "web"},
                          "minReplicas": 1, "maxReplicas": 3}},
            ])  # fmt: skip

            async def running_pod() -> Any:
                pods = await api.list_all(f"/api/v1/namespaces/{ns}/pods")
                # Scheduled once its claim is bound, as kube-scheduler's VolumeBinding waits.
                scheduled = len(pods) == 1 and pods[0]["spec"].get("nodeName")
                return pods[0] if scheduled else None

            found = await eventually(running_pod, what="the deployment's pod")
            names["pod"] = found["metadata"]["name"]
            names["rs"] = found["metadata"]["ownerReferences"][0]["name"]

    sim.run(build())
    return names


def refs(entries: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    return sorted((e["name"], e["missing"]) for e in entries)


async def test_a_pod_knows_its_owners_and_what_it_uses(
    client: Client, world: dict[str, str]
) -> None:
    ns = world["ns"]
    resp = await client.get(f"{BASE}/detail/pods/{ns}/{world['pod']}")
    body = await resp.json()
    assert resp.status == 200
    assert body["row"]["kind"] == "Pod"
    assert [(o["kind"], o["name"], o["missing"]) for o in body["owners"]] == [
        ("ReplicaSet", world["rs"], False),
        ("Deployment", "web", False),
    ]
    rel = body["relations"]
    assert refs(rel["services"]) == [("web", False)]
    assert refs(rel["configMaps"]) == [  # the token volume projects kube-root-ca.crt
        ("deleted-map", True),
        ("kube-root-ca.crt", False),
        ("settings", False),
    ]
    assert refs(rel["secrets"]) == [("creds", False)]
    assert refs(rel["persistentVolumeClaims"]) == [("data", False)]
    assert refs(rel["persistentVolumes"]) == [(world["pv"], False)]
    assert refs(rel["storageClasses"]) == [(world["sc"], False)]
    assert "Scheduled" in [e["reason"] for e in body["events"]]
    assert "managedFields" not in body["object"]["metadata"]


async def test_a_deployment_finds_its_pods_services_and_autoscaler(
    client: Client, world: dict[str, str]
) -> None:
    body = await (await client.get(f"{BASE}/detail/deployments/{world['ns']}/web")).json()
    rel = body["relations"]
    assert refs(rel["replicaSets"]) == [(world["rs"], False)]
    assert refs(rel["pods"]) == [(world["pod"], False)]
    assert refs(rel["services"]) == [("web", False)]
    assert refs(rel["horizontalPodAutoscalers"]) == [("web", False)]
    assert refs(rel["secrets"]) == [("creds", False)]
    assert body["owners"] == []


async def test_service_ingress_claim_map_and_autoscaler_relations(
    client: Client, world: dict[str, str]
) -> None:
    ns = world["ns"]

    async def relations(rid: str, name: str, where: str = ns) -> dict[str, Any]:
        resp = await client.get(f"{BASE}/detail/{rid}/{where}/{name}")
        assert resp.status == 200, await resp.text()
        body = await resp.json()
        relations: dict[str, Any] = body["relations"]
        return relations

    service = await relations("services", "web")
    assert refs(service["pods"]) == [(world["pod"], False)]
    assert refs(service["ingresses"]) == [("front", False)]
    ingress = await relations("ingresses", "front")
    assert refs(ingress["services"]) == [("retired", True), ("web", False)]
    claim = await relations("persistentvolumeclaims", "data")
    assert refs(claim["persistentVolumes"]) == [(world["pv"], False)]
    assert refs(claim["pods"]) == [(world["pod"], False)]
    volume = await relations("persistentvolumes", world["pv"], "_")
    assert refs(volume["persistentVolumeClaims"]) == [("data", False)]
    assert refs(volume["storageClasses"]) == [(world["sc"], False)]
    config = await relations("configmaps", "settings")
    assert refs(config["pods"]) == [(world["pod"], False)]
    hpa = await relations("horizontalpodautoscalers", "web")
    assert [(e["kind"], e["name"]) for e in hpa["scaleTarget"]] == [("Deployment", "web")]


async def test_detail_of_something_missing(client: Client, world: dict[str, str]) -> None:
    resp = await client.get(f"{BASE}/detail/pods/{world['ns']}/nothing")
    await assert_problem(resp, 404, code="cluster-refused")
    resp = await client.get(f"{BASE}/detail/gizmos/{world['ns']}/nothing")
    await assert_problem(resp, 404, code="unknown-resource")
