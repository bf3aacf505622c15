"""The fidelity suite: scripted client flows whose results must equal what kube-apiserver 1.32
documents and returns. Each expectation here was taken from a real server's behaviour (its
source or its documented responses), not from the simulator; where the simulator knowingly
differs, the difference is listed in ``kubesim/README.md`` instead of being tested away."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from tests.kubesim.conftest import Kubectl, Raw, create_namespace
from tests.kubesim.live import Obj


def cm(name: str, **extra: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **extra.pop("meta", {})},
        **extra,
    }


# --- apply -----------------------------------------------------------------------------------------

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {app: shop, tier: web}
data:
  mode: blue
  size: "2"
"""


def test_kubectl_client_side_apply_then_server_side_apply(kubectl: Kubectl, ns: str) -> None:
    kubectl.run("create", "namespace", ns)
    kubectl.run("-n", ns, "apply", "-f", "-", input=CONFIGMAP)
    changed = CONFIGMAP.replace("mode: blue", "mode: green")
    kubectl.run("-n", ns, "apply", "--server-side", "-f", "-", input=changed)
    live = kubectl.json("-n", ns, "get", "configmap", "settings", "--show-managed-fields")
    assert live["data"] == {"mode": "green", "size": "2"}
    assert live["metadata"]["labels"] == {"app": "shop", "tier": "web"}
    managers = {(e["manager"], e["operation"]): e for e in live["metadata"]["managedFields"]}
    assert set(managers) == {("kubectl", "Apply"), ("kubectl-last-applied", "Apply")}
    entry = managers["kubectl", "Apply"]
    assert entry["fieldsV1"]["f:data"] == {"f:mode": {}, "f:size": {}}
    assert entry["fieldsV1"]["f:metadata"]["f:labels"] == {"f:app": {}, "f:tier": {}}
    dropped = changed.replace('  size: "2"\n', "").replace(", tier: web", "")
    kubectl.run("-n", ns, "apply", "--server-side", "-f", "-", input=dropped)
    live = kubectl.json("-n", ns, "get", "configmap", "settings")
    assert live["data"] == {"mode": "green"}
    assert live["metadata"]["labels"] == {"app": "shop"}


# --- Status bodies ---------------------------------------------------------------------------------


async def test_conflict_and_invalid_status_bodies(raw: Raw) -> None:
    ns = await create_namespace(raw)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    apply = "application/apply-patch+yaml"
    status, _, _ = await raw(
        "PATCH", base + "/a", cm("a", data={"k": "1"}), content_type=apply, fieldManager="one"
    )
    assert status == 201
    status, body, _ = await raw(
        "PATCH", base + "/a", cm("a", data={"k": "2"}), content_type=apply, fieldManager="two"
    )
    assert (status, body) == (
        409,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'Apply failed with 1 conflict: conflict with "one": .data.k',
            "reason": "Conflict",
            "details": {
                "causes": [
                    {
                        "reason": "FieldManagerConflict",
                        "message": 'conflict with "one"',
                        "field": ".data.k",
                    }
                ]
            },
            "code": 409,
        },
    )
    status, body, _ = await raw("POST", base, cm("a"))
    assert (status, body["message"], body["details"]) == (
        409,
        'configmaps "a" already exists',
        {"name": "a", "kind": "configmaps"},
    )
    status, body, _ = await raw("POST", base, cm("a", data={"bad key": "x"}, meta={"name": "b"}))
    assert status == 422
    assert body["reason"] == "Invalid"
    assert body["details"]["name"] == "b"
    assert body["details"]["kind"] == "ConfigMap"
    assert body["details"]["causes"][0]["field"] == "data[bad key]"
    assert body["message"].startswith(
        'ConfigMap "b" is invalid: data[bad key]: Invalid value: "bad key": '
    )


async def test_immutable_fields(raw: Raw) -> None:
    ns = await create_namespace(raw)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    await raw("POST", base, cm("frozen", data={"a": "1"}, immutable=True))
    status, body, _ = await raw(
        "PATCH", base + "/frozen", {"data": {"a": "2"}}, content_type="application/merge-patch+json"
    )
    assert status == 422
    assert body["message"] == (
        'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set'
    )
    svc = {
        "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80}], "clusterIP": "10.96.77.7"},
    }
    await raw("POST", f"/api/v1/namespaces/{ns}/services", svc)
    status, body, _ = await raw(
        "PATCH",
        f"/api/v1/namespaces/{ns}/services/web",
        {"spec": {"clusterIP": "10.96.77.8"}},
        content_type="application/merge-patch+json",
    )
    assert status == 422
    assert (
        'spec.clusterIPs[0]: Invalid value: []string{"10.96.77.8"}: may not change once set'
        in body["message"]
        or "field is immutable" in body["message"]
    )


# --- watches ---------------------------------------------------------------------------------------


async def _events(raw: Raw, path: str, count: int, **params: str) -> list[tuple[str, Obj]]:
    out: list[tuple[str, Obj]] = []
    async with raw.stream(path, watch="1", **params) as resp:
        assert resp.status == 200
        while len(out) < count:
            line = await asyncio.wait_for(resp.content.readline(), 5)
            event = json.loads(line)
            out.append((event["type"], event["object"]))
    return out


async def test_an_object_leaving_a_label_selector_is_deleted_with_its_last_matching_state(
    raw: Raw,
) -> None:
    ns = await create_namespace(raw)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    _, made, _ = await raw("POST", base, cm("a", data={"v": "1"}, meta={"labels": {"team": "x"}}))
    watching = asyncio.ensure_future(
        _events(
            raw,
            base,
            3,
            labelSelector="team=x",
            resourceVersion=made["metadata"]["resourceVersion"],
        )
    )
    await asyncio.sleep(0.2)
    merge = "application/merge-patch+json"
    await raw("PATCH", base + "/a", {"data": {"v": "2"}}, content_type=merge)
    _, left, _ = await raw(
        "PATCH",
        base + "/a",
        {"metadata": {"labels": {"team": "y"}}, "data": {"v": "3"}},
        content_type=merge,
    )
    await raw("PATCH", base + "/a", {"metadata": {"labels": {"team": "x"}}}, content_type=merge)
    events = await watching
    assert [t for t, _ in events] == ["MODIFIED", "DELETED", "ADDED"]
    _, gone = events[1]
    assert gone["metadata"]["labels"] == {"team": "x"}  # the last state that matched
    assert gone["data"] == {"v": "2"}
    assert gone["metadata"]["resourceVersion"] == left["metadata"]["resourceVersion"]


# --- garbage collection ----------------------------------------------------------------------------


async def _owned_pair(raw: Raw, ns: str, name: str) -> tuple[str, str]:
    base = f"/api/v1/namespaces/{ns}/configmaps"
    _, owner, _ = await raw("POST", base, cm(name))
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": owner["metadata"]["uid"]}
    if name.endswith("fg"):
        ref["blockOwnerDeletion"] = True
    await raw("POST", base, cm(name + "-child", meta={"ownerReferences": [ref]}))
    return base + "/" + name, base + "/" + name + "-child"


async def _gone(raw: Raw, path: str) -> bool:
    for _ in range(100):
        if (await raw("GET", path))[0] == 404:
            return True
        await asyncio.sleep(0.02)
    return False


async def test_garbage_collection_with_each_propagation_policy(raw: Raw) -> None:
    ns = await create_namespace(raw)
    owner, child = await _owned_pair(raw, ns, "orphan")
    options = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"}
    status, _, _ = await raw("DELETE", owner, options)
    assert status == 200
    assert await _gone(raw, owner)
    status, kept, _ = await raw("GET", child)
    assert status == 200
    assert "ownerReferences" not in kept["metadata"]

    owner, child = await _owned_pair(raw, ns, "background")
    options["propagationPolicy"] = "Background"
    assert (await raw("DELETE", owner, options))[0] == 200
    assert await _gone(raw, owner)
    assert await _gone(raw, child)

    owner, child = await _owned_pair(raw, ns, "fg")
    options["propagationPolicy"] = "Foreground"
    status, body, _ = await raw("DELETE", owner, options)
    assert status == 200
    assert body["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert body["metadata"]["deletionTimestamp"]
    assert await _gone(raw, child)
    assert await _gone(raw, owner)


async def test_dangling_owner_references_are_collected(raw: Raw) -> None:
    ns = await create_namespace(raw)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": str(uuid.uuid4())}
    assert (await raw("POST", base, cm("orphaned", meta={"ownerReferences": [ref]})))[0] == 201
    assert await _gone(raw, base + "/orphaned")


# --- lists -----------------------------------------------------------------------------------------


async def test_pagination_with_continue_and_remaining_item_count(raw: Raw) -> None:
    ns = await create_namespace(raw)
    base = f"/api/v1/namespaces/{ns}/secrets"
    for i in range(5):
        await raw("POST", base, {"metadata": {"name": f"s{i}"}, "type": "Opaque"})
    status, page, _ = await raw("GET", base, limit="2")
    assert status == 200
    assert [i["metadata"]["name"] for i in page["items"]] == ["s0", "s1"]
    assert page["metadata"]["remainingItemCount"] == 3
    token = page["metadata"]["continue"]
    _, page, _ = await raw("GET", base, limit="2", **{"continue": token})
    assert page["metadata"]["remainingItemCount"] == 1
    _, page, _ = await raw("GET", base, limit="2", **{"continue": page["metadata"]["continue"]})
    assert [i["metadata"]["name"] for i in page["items"]] == ["s4"]
    assert "continue" not in page["metadata"]
    assert "remainingItemCount" not in page["metadata"]
    # resourceVersion=0 is served from the watch cache, which ignores limit
    _, whole, _ = await raw("GET", base, limit="2", resourceVersion="0")
    assert len(whole["items"]) == 5
    assert "continue" not in whole["metadata"]
    status, body, _ = await raw("GET", base, limit="2", **{"continue": "not-a-token"})
    assert (status, body["reason"]) == (400, "BadRequest")


async def test_list_items_carry_no_kind_for_built_in_types(raw: Raw) -> None:
    ns = await create_namespace(raw)
    await raw("POST", f"/api/v1/namespaces/{ns}/configmaps", cm("a"))
    _, body, _ = await raw("GET", f"/api/v1/namespaces/{ns}/configmaps")
    assert (body["kind"], body["apiVersion"]) == ("ConfigMapList", "v1")
    assert all("kind" not in i and "apiVersion" not in i for i in body["items"])


async def test_field_selectors_a_real_server_supports(raw: Raw) -> None:
    ns = await create_namespace(raw)
    base = f"/api/v1/namespaces/{ns}/secrets"
    await raw("POST", base, {"metadata": {"name": "rel"}, "type": "helm.sh/release.v1"})
    await raw("POST", base, {"metadata": {"name": "plain"}, "type": "Opaque"})
    status, body, _ = await raw("GET", base, fieldSelector="type=helm.sh/release.v1")
    assert status == 200
    assert [i["metadata"]["name"] for i in body["items"]] == ["rel"]
    _, body, _ = await raw(
        "GET", base, fieldSelector="type!=helm.sh/release.v1,metadata.name=plain"
    )
    assert [i["metadata"]["name"] for i in body["items"]] == ["plain"]
    _, nodes, _ = await raw("GET", "/api/v1/nodes", fieldSelector="spec.unschedulable=false")
    _, every, _ = await raw("GET", "/api/v1/nodes")
    assert len(nodes["items"]) == len(every["items"])
    status, body, _ = await raw("GET", base, fieldSelector="data.x=y")
    assert (status, body["message"]) == (400, "field label not supported: data.x")


# --- smaller REST differences (issue 40 item 15) -----------------------------------------------


async def test_put_checks_the_name_before_looking_the_object_up(raw: Raw) -> None:
    """``handlers/update.go`` runs ``checkName`` before the storage's Update: a body naming
    another object is a 400 even when the URL's name does not exist."""
    ns = await create_namespace(raw)
    status, answer, _ = await raw("PUT", f"/api/v1/namespaces/{ns}/configmaps/b", cm("a"))
    assert status == 400, answer
    assert answer["message"] == "the name of the object (a) does not match the name on the URL (b)"


async def test_a_dry_run_delete_answers_what_the_delete_would(raw: Raw) -> None:
    """A dry-run DELETE of an object that would go at once answers the Status Success a real one
    answers (the generic registry's ``finalizeDelete``), and leaves the object there."""
    ns = await create_namespace(raw)
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    status, created, _ = await raw("POST", cms, cm("a", data={"x": "1"}))
    assert status == 201
    status, answer, _ = await raw("DELETE", f"{cms}/a", dryRun="All")
    assert status == 200
    assert answer["kind"] == "Status"
    assert answer["status"] == "Success"
    assert answer["details"]["uid"] == created["metadata"]["uid"]
    status, _, _ = await raw("GET", f"{cms}/a")
    assert status == 200
    finalized = cm("b", meta={"finalizers": ["example.com/hold"]})
    await raw("POST", cms, finalized)
    status, answer, _ = await raw("DELETE", f"{cms}/b", dryRun="All")
    assert status == 200
    assert answer["kind"] == "ConfigMap"  # it would linger on its finalizer: the object


async def test_empty_maps_are_not_kept(raw: Raw) -> None:
    """Every map of the API types is ``omitempty``: an empty one is decoded and not encoded again."""
    ns = await create_namespace(raw)
    body = cm("e", meta={"labels": {}, "annotations": {}}, data={})
    status, answer, _ = await raw("POST", f"/api/v1/namespaces/{ns}/configmaps", body)
    assert status == 201
    assert "data" not in answer
    assert "labels" not in answer["metadata"]
    assert "annotations" not in answer["metadata"]


async def test_an_accept_header_asking_a_transformation_the_server_lacks_is_a_406(raw: Raw) -> None:
    ns = await create_namespace(raw)
    url = raw.sim.url + f"/api/v1/namespaces/{ns}/configmaps"
    headers = {
        "Authorization": f"Bearer {raw.sim.token}",
        "Accept": "application/json;as=Foo;g=meta.k8s.io;v=v1",
    }
    async with raw.session.get(url, headers=headers, ssl=raw.ssl) as resp:
        answer = await resp.json()
    assert resp.status == 406
    assert answer["reason"] == "NotAcceptable"
    headers["Accept"] += ", application/json"
    async with raw.session.get(url, headers=headers, ssl=raw.ssl) as resp:
        assert resp.status == 200


async def test_a_service_put_without_its_cluster_ip_keeps_the_allocated_one(raw: Raw) -> None:
    """The service storage's ``patchAllocatedValues``: a PUT of the manifest as written (no
    clusterIP, no nodePort, as ``kubectl replace`` or ``helm upgrade --force`` sends) keeps what
    the server allocated instead of failing on an immutable field."""
    ns = await create_namespace(raw)
    services = f"/api/v1/namespaces/{ns}/services"
    manifest: dict[str, Any] = {
        "metadata": {"name": "web"},
        "spec": {"type": "NodePort", "selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    status, created, _ = await raw("POST", services, manifest)
    assert status == 201
    manifest["metadata"]["labels"] = {"tier": "front"}
    status, replaced, _ = await raw("PUT", f"{services}/web", manifest)
    assert status == 200, replaced
    assert replaced["spec"]["clusterIP"] == created["spec"]["clusterIP"]
    assert replaced["spec"]["clusterIPs"] == created["spec"]["clusterIPs"]
    assert replaced["spec"]["ports"][0]["nodePort"] == created["spec"]["ports"][0]["nodePort"]
    assert replaced["metadata"]["labels"] == {"tier": "front"}
