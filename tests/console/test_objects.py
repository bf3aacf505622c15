"""Object endpoints against a simulator: summary rows (pod STATUS as kubectl prints it), the
streamed projected list across several chunks, one raw object, pods on a node, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubesim import Simulator
from tests.console.live_cluster import sim
from tests.console.resources_support import (
    Kubectl,
    create,
    create_all,
    eventually,
    fresh_namespace,
    kube_in_new_namespace,
    seed,
    unique,
)
from tests.console.support import ADMIN
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

BASE = "/api/v1/clusters/alpha"


def pod(ns: str, name: str, *, node: str | None = None, **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, **meta},
        "spec": spec,
    }


def behaving(ns: str, name: str, image: str, **spec: Any) -> dict[str, Any]:
    """A pod whose simulated container behaves as its image says (see kubesim's kubelet)."""
    made = pod(ns, name)
    made["spec"]["containers"][0]["image"] = image
    made["spec"].update(spec)
    return made


async def test_pod_rows_say_what_kubectl_says(
    client: Client, sim: Simulator, kubectl: Kubectl
) -> None:
    async with kube_in_new_namespace(sim, "rows") as (api, ns):
        await create_all(
            api,
            [
                behaving(ns, "serving", "nginx:1.27"),
                behaving(ns, "finished", "busybox:1.36", restartPolicy="Never"),
                behaving(ns, "killed", "oom", restartPolicy="Never"),
                behaving(ns, "unpullable", "registry.invalid/app:1"),
            ],
        )
    expected = {"serving": "Running", "finished": "Completed", "killed": "OOMKilled"}

    async def settled() -> Any:
        rows = await (await client.get(f"{BASE}/pods", params={"namespace": ns})).json()
        got = {r["name"]: r["status"] for r in rows}
        pulling = got.pop("unpullable", None) in ("ErrImagePull", "ImagePullBackOff")
        return rows if pulling and got == expected else None

    rows = await eventually(settled, what="the pods to settle")
    assert all(r["kind"] == "Pod" and r["namespace"] == ns and r["age"] for r in rows)
    table = kubectl.run("get", "pods", "-n", ns, "--no-headers")
    printed = {line.split()[0]: line.split()[2] for line in table.splitlines()}
    del printed["unpullable"]  # flips between ErrImagePull and ImagePullBackOff
    assert printed == expected
    same = await (await client.get(f"{BASE}/resources/pods", params={"namespace": ns})).json()
    assert {r["name"] for r in same} == {r["name"] for r in rows}


async def test_namespace_rows(client: Client) -> None:
    rows = await (await client.get(f"{BASE}/namespaces")).json()
    default = next(r for r in rows if r["name"] == "default")
    assert default["kind"] == "Namespace"
    assert default["namespace"] is None
    assert default["status"] == "Active"


async def test_objects_stream_in_chunks_projected(client: Client, sim: Simulator) -> None:
    ns = await fresh_namespace(sim, "stream")
    seed(
        sim,
        "ConfigMap",
        ns,
        [{"metadata": {"name": f"cm-{i:04}"}, "data": {"key": "value", "empty": ""},
          "binaryData": {"blob": "AAEC"}} for i in range(1234)],
    )  # fmt: skip
    seed(sim, "Secret", ns, [{"metadata": {"name": "token"}, "data": {"password": "c2VjcmV0"}}])
    resp = await client.get(f"{BASE}/resources/configmaps/objects", params={"namespace": ns})
    assert resp.status == 200
    assert resp.content_type == "application/json"
    every = json.loads(await resp.read())
    items = [i for i in every if i["metadata"]["name"].startswith("cm-")]
    assert len(every) - len(items) <= 1  # the namespace's kube-root-ca.crt
    assert [i["metadata"]["name"] for i in items] == [f"cm-{i:04}" for i in range(1234)]
    first = items[0]
    assert first["apiVersion"] == "v1"
    assert first["kind"] == "ConfigMap"
    assert first["data"] == {"key": None, "empty": None}
    assert first["binaryData"] == {"blob": None}
    assert "managedFields" not in first["metadata"]
    assert first["metadata"]["uid"]
    secrets = await (
        await client.get(f"{BASE}/resources/secrets/objects", params={"namespace": ns})
    ).json()
    assert [s["data"] for s in secrets] == [{"password": None}]
    empty = await client.get(f"{BASE}/resources/pods/objects", params={"namespace": ns})
    assert await empty.json() == []


async def test_one_object_is_complete(client: Client, sim: Simulator) -> None:
    async with kube_in_new_namespace(sim, "raw") as (api, ns):
        await create(api, {"apiVersion": "v1", "kind": "Secret",
                           "metadata": {"name": "token", "namespace": ns},
                           "data": {"password": "c2VjcmV0"}})  # fmt: skip
    where = {"name": "token", "namespace": ns}
    # A Secret's values need the admin, open mode included; so does its YAML.
    anonymous = await client.get(f"{BASE}/resources/secrets/object", params=where)
    await assert_problem(anonymous, 401, code="unauthorized")
    for resource in ("secrets",):
        yaml = await client.get(f"{BASE}/yaml", params={**where, "resource": resource})
        await assert_problem(yaml, 401, code="unauthorized")
    yaml = await client.get(f"{BASE}/yaml", params={**where, "resource": "secrets"}, headers=ADMIN)
    assert yaml.status == 200
    assert "c2VjcmV0" in await yaml.text()
    resp = await client.get(f"{BASE}/resources/secrets/object", params=where, headers=ADMIN)
    body = await resp.json()
    assert resp.status == 200
    assert body["data"] == {"password": "c2VjcmV0"}
    assert body["metadata"]["managedFields"]
    assert (body["apiVersion"], body["kind"]) == ("v1", "Secret")
    missing = await client.get(
        f"{BASE}/resources/secrets/object", params={"name": "nope", "namespace": ns}, headers=ADMIN
    )
    body = await assert_problem(missing, 404, code="cluster-refused")
    assert body["detail"] == 'secrets "nope" not found'
    no_ns = await client.get(
        f"{BASE}/resources/secrets/object", params={"name": "token"}, headers=ADMIN
    )
    await assert_problem(no_ns, 400, code="invalid-request")
    no_name = await client.get(f"{BASE}/resources/secrets/object", headers=ADMIN)
    await assert_problem(no_name, 400, code="invalid-request")


async def test_pods_on_a_node_are_selected_by_the_server(client: Client, sim: Simulator) -> None:
    node_a, node_b = unique("node-a"), unique("node-b")
    async with kube_in_new_namespace(sim, "nodes") as (api, ns):
        await create_all(
            api,
            [
                {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node_a}},
                {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node_b}},
                pod(ns, "here-1", node=node_a),
                pod(ns, "here-2", node=node_a),
                pod(ns, "there", node=node_b),
            ],
        )
    rows = await (await client.get(f"{BASE}/nodes/{node_a}/pods")).json()
    assert sorted(r["name"] for r in rows) == ["here-1", "here-2"]
    assert await (await client.get(f"{BASE}/nodes/no-such-node/pods")).json() == []


async def test_the_objects_stream_on_a_broken_cluster_is_a_problem(
    client: Client, tmp_path: Path
) -> None:
    resp = await client.get("/api/v1/clusters/nope/resources/pods/objects")
    await assert_problem(resp, 404, code="unknown-cluster")
    resp = await client.get(f"{BASE}/resources/gizmos/objects")
    await assert_problem(resp, 404, code="unknown-resource")
