"""YAML export, server-side apply, dry run and merge patch: what the cluster stores, what is
audited, and how refusals (422, 403, 409 stale) keep the cluster's status and message."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubesim import Simulator
from tests.console.resources_support import (
    Kubectl,
    create,
    fresh_namespace,
    kube,
    kube_in_new_namespace,
    read,
    unique,
    widget_crd,
)
from tests.console.support import ADMIN
from tests.guards import assert_problem
from tests.typing_support import Client

BASE = "/api/v1/clusters/alpha"
YAML = {**ADMIN, "Content-Type": "application/yaml"}


@pytest.fixture
async def ns(sim: Simulator) -> str:
    return await fresh_namespace(sim, "apply")


def config_map(ns: str | None, name: str, **data: str) -> str:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})


async def audit(client: Client) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    return entries


async def test_apply_creates_and_updates_with_forced_ownership(
    client: Client, sim: Simulator, ns: str, kubectl: Kubectl
) -> None:
    resp = await client.post(f"{BASE}/apply", data=config_map(ns, "app", a="1"), headers=YAML)
    assert resp.status == 200, await resp.text()
    assert await resp.json() == {"kind": "ConfigMap", "namespace": ns, "name": "app",
                                 "status": None, "age": "0s"}  # fmt: skip
    # Someone else takes over field a; a forced apply takes it back, as kubectl's would.
    kubectl.run("apply", "--server-side", "--force-conflicts", "--field-manager=other", "-f", "-",
                input=config_map(ns, "app", a="2"))  # fmt: skip
    resp = await client.post(f"{BASE}/apply", data=config_map(ns, "app", a="3"), headers=YAML)
    assert resp.status == 200
    async with kube(sim) as api:
        stored = await read(api, {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "app", "namespace": ns}})  # fmt: skip
    assert stored["data"] == {"a": "3"}
    managers = {m["manager"]: m["operation"] for m in stored["metadata"]["managedFields"]}
    assert managers["wharf-console"] == "Apply"
    entry = (await audit(client))[0]
    assert (entry["action"], entry["target"], entry["outcome"], entry["user"]) == (
        "apply",
        f"configmaps/{ns}/app",
        "success",
        "admin",
    )


async def test_yaml_round_trips_through_apply(client: Client, ns: str) -> None:
    await client.post(f"{BASE}/apply", data=config_map(ns, "round", a="1"), headers=YAML)
    resp = await client.get(
        f"{BASE}/yaml", params={"resource": "configmaps", "name": "round", "namespace": ns}
    )
    assert resp.status == 200
    assert resp.content_type == "application/yaml"
    doc = yaml.safe_load(await resp.text())
    assert list(doc)[:3] == ["apiVersion", "kind", "metadata"]
    assert "managedFields" not in doc["metadata"]
    doc["data"]["a"] = "edited"
    resp = await client.post(f"{BASE}/apply", data=yaml.safe_dump(doc), headers=YAML)
    assert resp.status == 200, await resp.text()
    again = await client.get(
        f"{BASE}/yaml", params={"resource": "configmaps", "name": "round", "namespace": ns}
    )
    assert yaml.safe_load(await again.text())["data"] == {"a": "edited"}


async def test_a_namespaced_object_without_namespace_goes_to_default(client: Client) -> None:
    name = unique("nons")
    resp = await client.post(f"{BASE}/apply", data=config_map(None, name, a="1"), headers=YAML)
    assert (await resp.json())["namespace"] == "default"


async def test_dry_run_stores_nothing_and_is_not_audited(client: Client, ns: str) -> None:
    before = len(await audit(client))
    resp = await client.post(
        f"{BASE}/apply/dry-run", data=config_map(ns, "dry", a="1"), headers=YAML
    )
    body = await resp.json()
    assert resp.status == 200
    assert body["data"] == {"a": "1"}
    assert body["metadata"]["namespace"] == ns
    missing = await client.get(
        f"{BASE}/resources/configmaps/object", params={"name": "dry", "namespace": ns}
    )
    await assert_problem(missing, 404, code="cluster-refused")
    assert len(await audit(client)) == before


async def test_the_clusters_refusals_keep_their_status(client: Client, sim: Simulator) -> None:
    bad_name = config_map("default", "Not_A_Name", a="1")
    for path in ("apply/dry-run", "apply"):
        resp = await client.post(f"{BASE}/{path}", data=bad_name, headers=YAML)
        body = await assert_problem(resp, 422, code="cluster-refused")
        assert "Not_A_Name" in body["detail"]
    failed = (await audit(client))[0]
    assert (failed["action"], failed["outcome"]) == ("apply", "failure")
    assert failed["detail"].startswith("422 cluster-refused")
    # A namespace being deleted refuses new content with 403.
    async with kube_in_new_namespace(sim, "doomed") as (api, doomed):
        await create(api, {"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "keep", "namespace": doomed,
                                        "finalizers": ["example.com/hold"]}})  # fmt: skip
        await api.send("DELETE", f"/api/v1/namespaces/{doomed}", None)
    resp = await client.post(f"{BASE}/apply", data=config_map(doomed, "late"), headers=YAML)
    body = await assert_problem(resp, 403, code="cluster-refused")
    assert "being terminated" in body["detail"]


async def test_a_stale_resource_version_is_the_clusters_conflict(client: Client, ns: str) -> None:
    await client.post(f"{BASE}/apply", data=config_map(ns, "cas", a="1"), headers=YAML)
    doc = yaml.safe_load(config_map(ns, "cas", a="2"))
    doc["metadata"]["resourceVersion"] = "1"
    resp = await client.post(f"{BASE}/apply", data=yaml.safe_dump(doc), headers=YAML)
    await assert_problem(resp, 409, code="cluster-refused")


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ("a: [unclosed", "not valid YAML"),
        ("- just\n- a list\n", "must be a mapping"),
        ("kind: ConfigMap\nmetadata: {name: x}\n", "needs apiVersion"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "needs metadata.name"),
        ("apiVersion: v1\nkind: Gizmo\nmetadata: {name: x}\n", "serves no Gizmo"),
        ("", "the manifest holds 0"),  # an empty YAML body is a manifest of nothing
        ("# nothing\n", "exactly one object"),
        (config_map("default", "a") + "---\n" + config_map("default", "b"), "exactly one object"),
    ],
)
async def test_bad_manifests_are_refused_before_the_cluster(
    client: Client, manifest: str, message: str
) -> None:
    for path in ("apply", "apply/dry-run"):
        resp = await client.post(f"{BASE}/{path}", data=manifest, headers=YAML)
        body = await assert_problem(resp, 400, code="invalid-request")
        assert message in body["detail"]


async def test_alias_bombs_are_refused(client: Client) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in "bcdefgh":
        previous = chr(ord(level) - 1)
        bomb += f"{level}: &{level} [*{previous}, *{previous}, *{previous}, *{previous}, " \
                f"*{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}]\n"  # fmt: skip
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: boom}\n" + bomb
    resp = await client.post(f"{BASE}/apply/dry-run", data=manifest, headers=YAML)
    body = await assert_problem(resp, 400, code="invalid-request")
    assert "expands to more than" in body["detail"]


async def test_apply_and_patch_need_the_admin(client: Client, ns: str) -> None:
    resp = await client.post(
        f"{BASE}/apply", data=config_map(ns, "anon"), headers={"Content-Type": "application/yaml"}
    )
    await assert_problem(resp, 401)
    resp = await client.patch(
        f"{BASE}/patch", params={"resource": "configmaps", "name": "anon", "namespace": ns},
        json={"data": {"a": "1"}},
    )  # fmt: skip
    await assert_problem(resp, 401)


async def test_documents_nested_too_deep_are_400(client: Client, ns: str) -> None:
    deep = "[" * 1_000 + "]" * 1_000
    headers = {**ADMIN, "Content-Type": "application/merge-patch+json"}
    params = {"resource": "configmaps", "name": "deep", "namespace": ns}
    resp = await client.patch(f"{BASE}/patch", params=params, data=deep, headers=headers)
    assert "nested deeper than the limit" in str(await assert_problem(resp, 400))
    manifest = "".join("  " * i + "k:\n" for i in range(200)) + "  " * 200 + "k: 1\n"
    resp = await client.post(f"{BASE}/apply", data=manifest, headers=YAML)
    assert (await assert_problem(resp, 400))["detail"] == "the manifest is not valid YAML"


async def test_merge_patch(client: Client, ns: str) -> None:
    await client.post(f"{BASE}/apply", data=config_map(ns, "patched", a="1", b="2"), headers=YAML)
    params = {"resource": "configmaps", "name": "patched", "namespace": ns}
    headers = {**ADMIN, "Content-Type": "application/merge-patch+json"}
    resp = await client.patch(
        f"{BASE}/patch", params=params, data='{"data": {"a": null, "c": "3"}}', headers=headers
    )
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["name"] == "patched"
    stored = await (await client.get(f"{BASE}/resources/configmaps/object", params=params)).json()
    assert stored["data"] == {"b": "2", "c": "3"}
    entry = (await audit(client))[0]
    assert (entry["action"], entry["target"]) == ("patch", f"configmaps/{ns}/patched")
    resp = await client.patch(
        f"{BASE}/patch", params={**params, "name": "absent"}, json={"data": {}}, headers=ADMIN
    )
    await assert_problem(resp, 404, code="cluster-refused")
    resp = await client.patch(f"{BASE}/patch", params=params, json=[1, 2], headers=ADMIN)
    await assert_problem(resp, 400, code="invalid-request")


async def test_custom_kinds_apply_and_patch(client: Client, sim: Simulator, ns: str) -> None:
    group = unique("apply").replace("-", "") + ".example.com"
    async with kube(sim) as api:
        await create(api, widget_crd(group))
    widget = {"apiVersion": f"{group}/v1", "kind": "Widget",
              "metadata": {"name": "w1", "namespace": ns}, "spec": {"size": 3}}  # fmt: skip
    resp = await client.post(f"{BASE}/apply", data=yaml.safe_dump(widget), headers=YAML)
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["kind"] == "Widget"
    params = {"resource": f"widgets.{group}", "name": "w1", "namespace": ns}
    resp = await client.patch(f"{BASE}/patch", params=params, json={"spec": {"size": 4}},
                              headers=ADMIN)  # fmt: skip
    assert resp.status == 200, await resp.text()
    stored = await (
        await client.get(f"{BASE}/resources/widgets.{group}/object", params=params)
    ).json()
    assert stored["spec"] == {"size": 4}
