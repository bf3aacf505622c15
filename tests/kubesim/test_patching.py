"""PATCH bodies behave as ``kubectl patch --type json|merge|strategic`` sees them on a real server."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kubesim.patch.patching import (
    PatchError,
    json_patch,
    merge_patch,
    strategic_merge_patch,
)
from tests.kubesim.live import Obj


def deployment(*containers: Obj, **spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
        "spec": {
            "replicas": 1,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": list(containers), **spec},
            },
        },
    }


NGINX = {
    "name": "nginx",
    "image": "nginx:1.25",
    "ports": [{"containerPort": 80}, {"containerPort": 443}],
    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
}
SIDECAR = {"name": "sidecar", "image": "busybox"}


def pod_spec(obj: Obj) -> Obj:
    spec: Obj = obj["spec"]["template"]["spec"]
    return spec


def names(items: list[Obj]) -> list[str]:
    return [item["name"] for item in items]


# --- JSON Patch ----------------------------------------------------------------------------------

DOC: Obj = {"metadata": {"labels": {"a/b": "1", "c~d": "2"}}, "spec": {"items": [1, 2, 3]}}

JSON_PATCH_CASES: list[tuple[str, list[Obj], Obj]] = [
    (
        "add a key",
        [{"op": "add", "path": "/spec/replicas", "value": 3}],
        {**DOC, "spec": {"items": [1, 2, 3], "replicas": 3}},
    ),
    (
        "add at an index and at the end",
        [
            {"op": "add", "path": "/spec/items/0", "value": 0},
            {"op": "add", "path": "/spec/items/-", "value": 4},
        ],
        {**DOC, "spec": {"items": [0, 1, 2, 3, 4]}},
    ),
    (
        "escaped pointer tokens",
        [
            {"op": "replace", "path": "/metadata/labels/a~1b", "value": "x"},
            {"op": "remove", "path": "/metadata/labels/c~0d"},
        ],
        {**DOC, "metadata": {"labels": {"a/b": "x"}}},
    ),
    (
        "negative index counts from the end (evanphx v4)",
        [{"op": "remove", "path": "/spec/items/-1"}],
        {**DOC, "spec": {"items": [1, 2]}},
    ),
    (
        "replace of a missing key adds it (evanphx v4)",
        [{"op": "replace", "path": "/spec/paused", "value": True}],
        {**DOC, "spec": {"items": [1, 2, 3], "paused": True}},
    ),
    (
        "move and copy",
        [
            {"op": "copy", "from": "/spec/items", "path": "/spec/copy"},
            {"op": "move", "from": "/spec/items/0", "path": "/spec/first"},
        ],
        {**DOC, "spec": {"items": [2, 3], "copy": [1, 2, 3], "first": 1}},
    ),
    (
        "test that passes, including null against a missing key",
        [
            {"op": "test", "path": "/spec/items", "value": [1, 2, 3]},
            {"op": "test", "path": "/spec/missing", "value": None},
        ],
        DOC,
    ),
]


@pytest.mark.parametrize(
    ("ops", "expected"), [c[1:] for c in JSON_PATCH_CASES], ids=[c[0] for c in JSON_PATCH_CASES]
)
def test_json_patch(ops: list[Obj], expected: Obj) -> None:
    before = copy.deepcopy(DOC)
    assert json_patch(DOC, ops) == expected
    assert before == DOC


JSON_PATCH_ERRORS: list[tuple[str, Any, int, str]] = [
    (
        "failed test",
        [{"op": "test", "path": "/spec/items/0", "value": 9}],
        422,
        "testing value /spec/items/0 failed: test failed",
    ),
    (
        "1 is not 1.0 nor true",
        [{"op": "test", "path": "/spec/items/0", "value": True}],
        422,
        "test failed",
    ),
    (
        "missing parent",
        [{"op": "add", "path": "/spec/nope/x", "value": 1}],
        422,
        'add operation does not apply: doc is missing path: "/spec/nope/x": missing value',
    ),
    (
        "remove of a missing key",
        [{"op": "remove", "path": "/spec/nope"}],
        422,
        "Unable to remove nonexistent key: nope",
    ),
    (
        "index out of range",
        [{"op": "add", "path": "/spec/items/9", "value": 1}],
        422,
        "invalid index",
    ),
    ("unknown op", [{"op": "frobnicate", "path": "/a"}], 422, "Unexpected kind: frobnicate"),
    ("missing op", [{"path": "/a"}], 422, "Unexpected kind: unknown"),
    ("missing path", [{"op": "add", "value": 1}], 422, "failed to decode path"),
    (
        "move from a missing path",
        [{"op": "move", "from": "/nope", "path": "/x"}],
        422,
        "doc is missing from path",
    ),
    ("not a list", {"op": "add"}, 400, "cannot unmarshal"),
    ("not a list of objects", ["add"], 400, "cannot unmarshal"),
    (
        "too many operations",
        [{"op": "test", "path": ""}] * 10001,
        413,
        "in a JSON patch is 10000, got 10001",
    ),
]


@pytest.mark.parametrize(
    ("ops", "status", "message"),
    [c[1:] for c in JSON_PATCH_ERRORS],
    ids=[c[0] for c in JSON_PATCH_ERRORS],
)
def test_json_patch_errors_carry_the_apiserver_status(ops: Any, status: int, message: str) -> None:
    with pytest.raises(PatchError) as info:
        json_patch(DOC, ops)
    assert info.value.status == status
    assert message in info.value.message


def test_a_failed_operation_leaves_the_object_untouched() -> None:
    before = copy.deepcopy(DOC)
    with pytest.raises(PatchError):
        json_patch(
            DOC, [{"op": "remove", "path": "/spec"}, {"op": "test", "path": "/x", "value": 1}]
        )
    assert before == DOC


# --- JSON merge patch ----------------------------------------------------------------------------


def test_merge_patch_merges_objects_and_deletes_nulls() -> None:
    obj = deployment(NGINX)
    result = merge_patch(obj, {"metadata": {"labels": {"tier": None, "env": "prod"}}})
    assert result["metadata"]["labels"] == {"app": "web", "env": "prod"}
    assert obj["metadata"]["labels"] == {"app": "web", "tier": "front"}


def test_merge_patch_replaces_lists_whole() -> None:
    result = merge_patch(
        deployment(NGINX), {"spec": {"template": {"spec": {"containers": [SIDECAR]}}}}
    )
    assert pod_spec(result)["containers"] == [SIDECAR]


def test_merge_patch_prunes_nulls_inside_new_objects() -> None:
    result = merge_patch({"a": 1}, {"b": {"c": None, "d": 2}})
    assert result == {"a": 1, "b": {"d": 2}}


def test_merge_patch_must_be_an_object() -> None:
    with pytest.raises(PatchError) as info:
        merge_patch({"a": 1}, [1])  # type: ignore[arg-type]
    assert info.value.status == 400


# --- strategic merge patch -----------------------------------------------------------------------


def smp(obj: Obj, patch: Obj, *, group: str = "apps", kind: str = "Deployment") -> Obj:
    return strategic_merge_patch(obj, patch, group=group, version="v1", kind=kind)


def containers_patch(*containers: Obj, **directives: Any) -> Obj:
    return {"spec": {"template": {"spec": {"containers": list(containers), **directives}}}}


def test_containers_merge_by_name_and_keep_unpatched_fields() -> None:
    obj = deployment(NGINX, SIDECAR)
    result = smp(obj, containers_patch({"name": "nginx", "image": "nginx:1.26"}))
    containers = pod_spec(result)["containers"]
    assert names(containers) == ["nginx", "sidecar"]
    assert containers[0] == {**NGINX, "image": "nginx:1.26"}
    assert pod_spec(obj)["containers"][0]["image"] == "nginx:1.25"


def test_a_new_container_goes_first_as_in_the_kubernetes_docs() -> None:
    # kubernetes.io "Update API Objects in Place Using kubectl patch": patch-demo-ctr-2 lands first.
    result = smp(deployment(NGINX), containers_patch({"name": "redis", "image": "redis"}))
    assert names(pod_spec(result)["containers"]) == ["redis", "nginx"]


def test_new_items_go_before_live_only_items_that_keep_their_order() -> None:
    live = deployment({"name": "a"}, {"name": "b"}, {"name": "c"})
    result = smp(live, containers_patch({"name": "new"}, {"name": "b", "image": "x"}))
    # Upstream's mergeSortedSlice puts an item the live list lacks before the live-only ones.
    assert names(pod_spec(result)["containers"]) == ["new", "a", "b", "c"]


SMP_CASES: list[tuple[str, Obj, Obj, str, str, Any]] = [
    (
        "$patch: delete removes a container by name",
        deployment(NGINX, SIDECAR),
        containers_patch({"name": "sidecar", "$patch": "delete"}),
        "spec.template.spec.containers",
        "names",
        ["nginx"],
    ),
    (
        "$patch: replace in a list replaces it",
        deployment(NGINX, SIDECAR),
        containers_patch({"name": "only"}, {"$patch": "replace"}),
        "spec.template.spec.containers",
        "",
        [{"name": "only"}],
    ),
    (
        "$patch: replace in a map replaces it",
        deployment(NGINX),
        {"metadata": {"labels": {"$patch": "replace", "new": "1"}}},
        "metadata.labels",
        "",
        {"new": "1"},
    ),
    (
        "$patch: delete in a map empties it",
        deployment(NGINX),
        {"metadata": {"labels": {"$patch": "delete"}}},
        "metadata.labels",
        "",
        {},
    ),
    (
        "null deletes a key",
        deployment(NGINX),
        {"metadata": {"labels": {"tier": None}}},
        "metadata.labels",
        "",
        {"app": "web"},
    ),
    (
        "env merges by name",
        deployment(NGINX),
        containers_patch({"name": "nginx", "env": [{"name": "B", "value": "9"}, {"name": "C"}]}),
        "spec.template.spec.containers.0.env",
        "",
        [{"name": "A", "value": "1"}, {"name": "B", "value": "9"}, {"name": "C"}],
    ),
    (
        "ports merge by containerPort",
        deployment(NGINX),
        containers_patch({"name": "nginx", "ports": [{"containerPort": 443, "name": "https"}]}),
        "spec.template.spec.containers.0.ports",
        "",
        [{"containerPort": 80}, {"containerPort": 443, "name": "https"}],
    ),
    (
        "volumeMounts merge by mountPath",
        deployment(NGINX),
        containers_patch({"name": "nginx", "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}]}),
        "spec.template.spec.containers.0.volumeMounts",
        "",
        [{"name": "tmp", "mountPath": "/tmp"}, {"name": "data", "mountPath": "/data"}],
    ),
    (
        "volumes merge by name",
        deployment(NGINX, volumes=[{"name": "data", "emptyDir": {}}]),
        containers_patch(volumes=[{"name": "cfg", "configMap": {"name": "c"}}]),
        "spec.template.spec.volumes",
        "names",
        ["cfg", "data"],
    ),
    (
        "tolerations have no merge key: replaced",
        deployment(NGINX, tolerations=[{"key": "a", "operator": "Exists"}]),
        containers_patch(tolerations=[{"key": "b", "operator": "Exists"}]),
        "spec.template.spec.tolerations",
        "",
        [{"key": "b", "operator": "Exists"}],
    ),
    (
        "command is an atomic list: replaced",
        deployment({**SIDECAR, "command": ["sh", "-c"]}),
        containers_patch({"name": "sidecar", "command": ["true"]}),
        "spec.template.spec.containers.0.command",
        "",
        ["true"],
    ),
    (
        "$retainKeys clears the keys it does not list",
        deployment(NGINX),
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
        "spec.strategy",
        "",
        {"type": "Recreate"},
    ),
    (
        "$setElementOrder reorders a merged list",
        deployment(NGINX, SIDECAR),
        containers_patch(
            {"name": "nginx", "image": "nginx:2"},
            **{"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "nginx"}]},
        ),
        "spec.template.spec.containers",
        "names",
        ["sidecar", "nginx"],
    ),
    (
        "imagePullSecrets merge by name",
        deployment(NGINX, imagePullSecrets=[{"name": "a"}]),
        containers_patch(imagePullSecrets=[{"name": "b"}]),
        "spec.template.spec.imagePullSecrets",
        "names",
        ["b", "a"],
    ),
]


def at(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


@pytest.mark.parametrize(
    ("live", "patch", "where", "view", "expected"),
    [c[1:] for c in SMP_CASES],
    ids=[c[0] for c in SMP_CASES],
)
def test_strategic_merge_patch(live: Obj, patch: Obj, where: str, view: str, expected: Any) -> None:
    value = at(smp(live, patch), where)
    assert (names(value) if view == "names" else value) == expected


def test_finalizers_merge_as_a_set_and_delete_with_the_parallel_list() -> None:
    live = {**deployment(NGINX), "metadata": {"name": "web", "finalizers": ["a", "b"]}}
    merged = smp(live, {"metadata": {"finalizers": ["b", "c"]}})
    assert merged["metadata"]["finalizers"] == ["a", "b", "c"]
    deleted = smp(live, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert deleted["metadata"]["finalizers"] == ["b"]


def test_pod_conditions_merge_by_type() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "Init"}]},
    }
    patch = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    result = smp(pod, patch, group="", kind="Pod")
    assert result["status"]["conditions"] == [{"type": "Ready", "status": "True"}, {"type": "Init"}]


def test_service_ports_merge_by_port() -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    svc["spec"] = {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}
    patch = {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}
    result = smp(svc, patch, group="", kind="Service")
    assert result["spec"]["ports"] == [{"port": 80, "targetPort": 9090}, {"port": 443}]


def test_kubectl_client_side_apply_patch() -> None:
    # The patch kubectl 1.32 sends when `kubectl apply` changes an image.
    last = json.dumps(deployment({"name": "nginx", "image": "nginx:1.26"}))
    patch = {
        "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": last}},
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "nginx"}],
                    "containers": [{"image": "nginx:1.26", "name": "nginx"}],
                }
            }
        },
    }
    result = smp(deployment(NGINX), patch)
    assert pod_spec(result)["containers"] == [{**NGINX, "image": "nginx:1.26"}]
    assert "$setElementOrder/containers" not in pod_spec(result)


def test_configmaps_accept_strategic_merge_patch() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    result = smp(cm, {"data": {"b": "2"}}, group="", kind="ConfigMap")
    assert result["data"] == {"a": "1", "b": "2"}


SMP_ERRORS: list[tuple[str, Obj, int, str]] = [
    (
        "a key not in $retainKeys",
        {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}},
        400,
        "retainKeys",
    ),
    (
        "malformed parallel list directive",
        {"metadata": {"$deleteFromPrimitiveListX/finalizers": ["a"]}},
        400,
        "primitive list",
    ),
    ("lists of lists", {"metadata": {"finalizers": [["a"]]}}, 422, "lists of lists"),
    # Upstream returns these as untyped errors, which kube-apiserver answers with 500.
    (
        "a merge list item without its merge key",
        containers_patch({"image": "x"}),
        500,
        "does not contain declared merge key: name",
    ),
    (
        "$patch: merge in a list",
        containers_patch({"name": "nginx", "$patch": "merge"}),
        500,
        "merging lists cannot yet be specified",
    ),
    (
        "an unknown $patch in a map",
        {"metadata": {"labels": {"$patch": "merge"}}},
        500,
        "unknown patch type: merge",
    ),
]


@pytest.mark.parametrize(
    ("patch", "status", "message"), [c[1:] for c in SMP_ERRORS], ids=[c[0] for c in SMP_ERRORS]
)
def test_strategic_merge_patch_errors(patch: Obj, status: int, message: str) -> None:
    live = deployment(NGINX)
    live["metadata"]["finalizers"] = ["a"]
    with pytest.raises(PatchError) as info:
        smp(live, patch)
    assert info.value.status == status
    assert message in info.value.message


def test_custom_resources_refuse_strategic_merge_patch_with_415() -> None:
    with pytest.raises(PatchError) as info:
        smp({"spec": {}}, {"spec": {"a": 1}}, group="example.com", kind="Widget")
    assert info.value.status == 415
    assert "application/merge-patch+json" in info.value.message


def test_strategic_merge_patch_does_not_mutate_its_inputs() -> None:
    live = deployment(NGINX, SIDECAR)
    patch = containers_patch({"name": "sidecar", "$patch": "delete"}, {"name": "nginx", "env": []})
    before = copy.deepcopy((live, patch))
    smp(live, patch)
    assert (live, patch) == before
