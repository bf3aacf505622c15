"""Cordon, uncordon and drain compared with kubectl on a three-node simulated cluster: twin nodes
carry the same pods (DaemonSet, Deployment, bare, emptyDir, mirror); the console drains one and
``kubectl drain --ignore-daemonsets --delete-emptydir-data --force`` the other."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from console.resources.kubeapi import KubeApi
from kubesim import Simulator
from tests.console.resources_support import (
    Kubectl,
    create,
    create_all,
    eventually,
    kube,
    kube_in_new_namespace,
    live_alpha,
)
from tests.console.support import ADMIN
from tests.guards import assert_problem
from tests.typing_support import Client

BASE = "/api/v1/clusters/alpha"


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    """This module's ``alpha`` cluster has three nodes."""
    yield from live_alpha(tmp_path_factory, nodes=3)


def node_name(i: int) -> str:
    return f"kubesim-node-{i}"


async def node(api: KubeApi, name: str) -> dict[str, Any]:
    found: dict[str, Any] = await api.get(f"/api/v1/nodes/{name}")
    return found


async def pods_on(api: KubeApi, name: str) -> dict[str, str]:
    pods = await api.list_all("/api/v1/pods", query=[("fieldSelector", f"spec.nodeName={name}")])
    return {p["metadata"]["name"]: p["metadata"]["namespace"] for p in pods
            if not p["metadata"].get("deletionTimestamp")}  # fmt: skip


def role(pod_name: str) -> str:
    """A pod's name without the suffixes its controllers generated."""
    if pod_name.startswith("agent-"):
        return "agent"
    if pod_name.startswith("web-"):
        return "-".join(pod_name.split("-")[:2])
    return pod_name


def pinned(ns: str, name: str, host: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"nodeName": host, "containers": [{"name": "c", "image": "nginx"}], **spec}}  # fmt: skip


def app(ns: str, name: str, host: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "nodeSelector": {"kubernetes.io/hostname": host},
                         "containers": [{"name": "c", "image": "nginx"}]}}}}  # fmt: skip


async def populate(api: KubeApi, ns: str, host: str, tag: str) -> None:
    await create_all(api, [
        app(ns, f"web-{tag}", host),
        pinned(ns, f"bare-{tag}", host),
        pinned(ns, f"scratch-{tag}", host, volumes=[{"name": "tmp", "emptyDir": {}}]),
        {**pinned(ns, f"static-{tag}", host),
         "metadata": {"name": f"static-{tag}", "namespace": ns,
                      "annotations": {"kubernetes.io/config.mirror": "abc"}}},
    ])  # fmt: skip


async def test_cordon_and_uncordon_as_kubectl(
    client: Client, sim: Simulator, kubectl: Kubectl
) -> None:
    resp = await client.post(f"{BASE}/nodes/{node_name(1)}/cordon", headers=ADMIN)
    body = await resp.json()
    assert resp.status == 200, body
    assert body["message"] == f"node/{node_name(1)} cordoned"
    assert body["row"]["status"] == "Ready,SchedulingDisabled"
    again = await (await client.post(f"{BASE}/nodes/{node_name(1)}/cordon", headers=ADMIN)).json()
    assert again["message"] == f"node/{node_name(1)} already cordoned"
    kubectl.run("cordon", node_name(2))
    async with kube(sim) as api:
        ours, theirs = await node(api, node_name(1)), await node(api, node_name(2))
        assert ours["spec"]["unschedulable"] is theirs["spec"]["unschedulable"] is True
        resp = await client.post(f"{BASE}/nodes/{node_name(1)}/uncordon", headers=ADMIN)
        assert (await resp.json())["message"] == f"node/{node_name(1)} uncordoned"
        kubectl.run("uncordon", node_name(2))
        ours, theirs = await node(api, node_name(1)), await node(api, node_name(2))
    assert "unschedulable" not in ours["spec"]
    assert "unschedulable" not in theirs["spec"]
    entry = (await (await client.get("/api/v1/audit", headers=ADMIN)).json())[0]
    assert (entry["action"], entry["target"]) == ("uncordon", f"nodes/{node_name(1)}")


async def test_drain_as_kubectl_drain(client: Client, sim: Simulator, kubectl: Kubectl) -> None:
    async with kube_in_new_namespace(sim, "drain") as (api, ns):
        labels = {"app": "agent"}
        await create(api, {
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": ns},
            "spec": {"selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        })  # fmt: skip
        await populate(api, ns, node_name(2), "ours")
        await populate(api, ns, node_name(3), "theirs")

        async def ready() -> bool:
            pods = [await pods_on(api, node_name(i)) for i in (2, 3)]
            return all(len(p) == 5 for p in pods)

        await eventually(ready, what="five pods on each node")
        resp = await client.post(f"{BASE}/nodes/{node_name(2)}/drain", headers=ADMIN)
        body = await resp.json()
        assert resp.status == 200, body
        kubectl.run("drain", node_name(3), "--ignore-daemonsets", "--delete-emptydir-data",
                    "--force", "--timeout=30s")  # fmt: skip
        left_ours = await pods_on(api, node_name(2))
        left_theirs = await pods_on(api, node_name(3))
        assert sorted(role(n) for n in left_ours) == ["agent", "static-ours"]
        assert {n.replace("ours", "theirs") for n in left_ours if not n.startswith("agent")} == {
            n for n in left_theirs if not n.startswith("agent")
        }
        ours_node, theirs_node = await node(api, node_name(2)), await node(api, node_name(3))
    assert ours_node["spec"]["unschedulable"] is theirs_node["spec"]["unschedulable"] is True
    outcomes = {role(p["name"]): (p["outcome"], p["reason"]) for p in body["pods"]}
    assert outcomes["static-ours"] == ("skipped", "mirror pod")
    assert outcomes["agent"] == ("skipped", "managed by DaemonSet agent")
    assert outcomes["bare-ours"] == ("evicted", "not managed by a controller")
    assert outcomes["scratch-ours"] == (
        "evicted",
        "emptyDir data deleted; not managed by a controller",
    )
    assert outcomes["web-ours"][0] == "evicted"
    assert body["message"] == f"node/{node_name(2)} drained (3 evicted)"


async def test_drain_fails_clearly_when_a_budget_never_allows(
    client: Client, sim: Simulator
) -> None:
    async with kube_in_new_namespace(sim, "pdb") as (api, ns):
        await create_all(api, [
            app(ns, "guarded", node_name(1)),
            {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
             "metadata": {"name": "guarded", "namespace": ns},
             "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}},
        ])  # fmt: skip

        async def running() -> bool:
            pods = await api.list_all(f"/api/v1/namespaces/{ns}/pods")
            return any(c.get("type") == "Ready" and c.get("status") == "True"
                       for p in pods for c in p.get("status", {}).get("conditions", []))  # fmt: skip

        await eventually(running, what="the guarded pod to be ready")
        resp = await client.post(
            f"{BASE}/nodes/{node_name(1)}/drain", params={"timeoutSeconds": "1"}, headers=ADMIN
        )
        body = await assert_problem(resp, 409, code="drain-failed")
        assert body["node"] == node_name(1)
        failed = [p for p in body["pods"] if p["outcome"] == "failed"]
        assert [p["name"].startswith("guarded") for p in failed] == [True]
        assert "disruption budget" in failed[0]["reason"]
        assert "could not be evicted" in body["detail"]
        assert (await node(api, node_name(1)))["spec"]["unschedulable"] is True
        entry = (await (await client.get("/api/v1/audit", headers=ADMIN)).json())[0]
        assert (entry["action"], entry["outcome"]) == ("drain", "failure")
        await client.post(f"{BASE}/nodes/{node_name(1)}/uncordon", headers=ADMIN)


async def test_node_actions_need_the_admin_and_a_node(client: Client) -> None:
    await assert_problem(await client.post(f"{BASE}/nodes/{node_name(1)}/cordon"), 401)
    resp = await client.post(f"{BASE}/nodes/nowhere/cordon", headers=ADMIN)
    await assert_problem(resp, 404, code="cluster-refused")
    resp = await client.post(
        f"{BASE}/nodes/{node_name(1)}/drain", params={"timeoutSeconds": "0"}, headers=ADMIN
    )
    await assert_problem(resp, 400, code="invalid-request")
