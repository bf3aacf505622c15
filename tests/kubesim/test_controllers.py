"""Deployments, ReplicaSets, the scheduler and the kubelet, in process with fast timings."""

from __future__ import annotations

import copy

from kubesim.cluster import LiveCluster
from tests.kubesim.live import (
    DEPLOY,
    NODES,
    PODS,
    RS,
    cond,
    create,
    deployment,
    events_for,
    live_fixture,
    phase,
    pods_of,
    ready,
    stored,
    until,
    update,
)

live = live_fixture(nodes=2, namespaces=("app",))


def _complete(live: LiveCluster, name: str) -> bool:
    """What ``kubectl rollout status`` waits for."""
    d = live.objs.store.get(DEPLOY, "app", name)
    if d is None or cond(d, "Progressing").get("reason") != "NewReplicaSetAvailable":
        return False
    status, want = d.get("status") or {}, d["spec"]["replicas"]
    counts = (status.get(k, 0) for k in ("replicas", "updatedReplicas", "availableReplicas"))
    return status.get("observedGeneration") == d["metadata"]["generation"] and all(
        n == want for n in counts
    )


async def test_nodes_and_namespace_defaults(live: LiveCluster) -> None:
    nodes = live.objs.store.list(NODES)
    assert [n["metadata"]["name"] for n in nodes] == ["kubesim-node-1", "kubesim-node-2"]
    assert cond(nodes[0], "Ready")["status"] == "True"
    assert nodes[0]["status"]["capacity"]["cpu"] == "4"
    await until(lambda: live.objs.store.get(("", "serviceaccounts"), "app", "default"))
    cm = await until(lambda: live.objs.store.get(("", "configmaps"), "app", "kube-root-ca.crt"))
    assert cm["data"]["ca.crt"] == "CA"


async def test_deployment_rolls_out_and_reports_status(live: LiveCluster) -> None:
    objs = live.objs
    create(objs, DEPLOY, "app", deployment("web", replicas=3))
    await until(lambda: _complete(live, "web"), what="rollout")
    d = stored(objs, DEPLOY, "app", "web")
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert d["status"]["observedGeneration"] == d["metadata"]["generation"]
    assert d["status"]["updatedReplicas"] == d["status"]["readyReplicas"] == 3
    assert cond(d, "Available")["status"] == "True"
    (rs,) = objs.store.list(RS, "app")
    h = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"]
    pods = pods_of(objs, "app", "web")
    assert len(pods) == 3
    assert all(ready(p) and phase(p) == "Running" for p in pods)
    assert {p["spec"]["nodeName"] for p in pods} == {"kubesim-node-1", "kubesim-node-2"}
    assert all(p["status"]["podIP"].startswith("10.244.") for p in pods)
    reasons = [e["reason"] for e in events_for(objs, pods[0]["metadata"]["name"])]
    assert reasons[:1] == ["Scheduled"]
    assert "Started" in reasons


async def test_rollout_then_undo_reuses_the_old_replicaset(live: LiveCluster) -> None:
    objs = live.objs
    create(objs, DEPLOY, "app", deployment("api", replicas=2))
    await until(lambda: _complete(live, "api"))
    d = copy.deepcopy(stored(objs, DEPLOY, "app", "api"))
    first_template = copy.deepcopy(d["spec"]["template"])
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    update(objs, DEPLOY, d)
    await until(
        lambda: _complete(live, "api") and len(objs.store.list(RS, "app")) == 2, what="rollout 2"
    )
    by_rev = {
        r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: r
        for r in objs.store.list(RS, "app")
    }
    assert set(by_rev) == {"1", "2"}
    assert by_rev["1"]["spec"]["replicas"] == 0
    assert by_rev["2"]["spec"]["replicas"] == 2
    old_name = by_rev["1"]["metadata"]["name"]
    d = copy.deepcopy(stored(objs, DEPLOY, "app", "api"))
    d["spec"]["template"] = first_template
    update(objs, DEPLOY, d)
    await until(
        lambda: (objs.store.get(RS, "app", old_name) or {}).get("spec", {}).get("replicas") == 2
    )
    await until(lambda: _complete(live, "api"))
    rs = stored(objs, RS, "app", old_name)
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    d = stored(objs, DEPLOY, "app", "api")
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    await until(
        lambda: (
            {p["spec"]["containers"][0]["image"] for p in pods_of(objs, "app", "api")}
            == {"nginx:1.27"}
        )
    )


async def test_scale_down_and_recreate_strategy(live: LiveCluster) -> None:
    objs = live.objs
    body = deployment("db", replicas=3)
    body["spec"]["strategy"] = {"type": "Recreate"}
    create(objs, DEPLOY, "app", body)
    await until(lambda: _complete(live, "db"))
    d = copy.deepcopy(stored(objs, DEPLOY, "app", "db"))
    d["spec"]["replicas"] = 1
    update(objs, DEPLOY, d)
    await until(lambda: len(pods_of(objs, "app", "db")) == 1 and _complete(live, "db"))
    scaled = [e["message"] for e in events_for(objs, "db") if e["reason"] == "ScalingReplicaSet"]
    assert any("from 3 to 1" in m for m in scaled)


async def test_unschedulable_pod_and_cordoned_node(live: LiveCluster) -> None:
    objs = live.objs
    big = deployment("huge", replicas=1, resources={"requests": {"cpu": "64", "memory": "1Gi"}})
    create(objs, DEPLOY, "app", big)
    pod = await until(lambda: next(iter(pods_of(objs, "app", "huge")), None))
    name = pod["metadata"]["name"]
    scheduled = await until(
        lambda: cond(objs.store.get(PODS, "app", name), "PodScheduled").get("reason")
    )
    assert scheduled == "Unschedulable"
    message = cond(objs.store.get(PODS, "app", name), "PodScheduled")["message"]
    assert message.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert phase(objs.store.get(PODS, "app", name)) == "Pending"
    assert any(
        e["reason"] == "FailedScheduling" and e["type"] == "Warning" for e in events_for(objs, name)
    )
    node = copy.deepcopy(stored(objs, NODES, "", "kubesim-node-1"))
    node["spec"]["unschedulable"] = True
    update(objs, NODES, node)
    tainted = await until(
        lambda: (objs.store.get(NODES, "", "kubesim-node-1") or {}).get("spec", {}).get("taints")
    )
    assert tainted[0]["key"] == "node.kubernetes.io/unschedulable"
    create(objs, DEPLOY, "app", deployment("small", replicas=3))
    await until(lambda: _complete(live, "small"))
    assert {p["spec"]["nodeName"] for p in pods_of(objs, "app", "small")} == {"kubesim-node-2"}


async def test_deleting_a_node_collects_its_pods(live: LiveCluster) -> None:
    objs = live.objs
    create(objs, DEPLOY, "app", deployment("move", replicas=2))
    await until(lambda: _complete(live, "move"))
    node = pods_of(objs, "app", "move")[0]["spec"]["nodeName"]
    objs.store.remove(NODES, "", node)  # as if the node object were deleted
    await until(
        lambda: all(p["spec"].get("nodeName") != node for p in pods_of(objs, "app", "move"))
    )
    await until(lambda: _complete(live, "move"))
