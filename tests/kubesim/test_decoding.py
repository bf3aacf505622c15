"""What decoding a written body does on a real server: nulls dropped (or zeroed) and the
structural-schema defaults of custom resources filled in on writes and on reads."""

from __future__ import annotations

import uuid
from typing import Any

from tests.kubesim.conftest import Kubectl, Raw, crd_manifest, create_namespace
from tests.kubesim.live import Obj

JSON_PATCH = "application/json-patch+json"


def _deployment(**spec: Any) -> Obj:
    return {
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx:1.27",
                            "resources": {"limits": {"memory": None}},
                            "env": None,
                        }
                    ]
                },
            },
            **spec,
        },
    }


async def test_nulls_in_posted_put_and_json_patched_bodies_are_not_stored(raw: Raw) -> None:
    ns = await create_namespace(raw)
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    body = {
        "metadata": {"name": "c", "labels": {"a": None, "b": "x"}, "annotations": None},
        "data": {"k": None, "j": "v"},
        "immutable": None,
    }
    status, made, _ = await raw("POST", cms, body)
    assert status == 201
    assert made["metadata"]["labels"] == {"a": "", "b": "x"}  # a null string decodes to ""
    assert "annotations" not in made["metadata"]
    assert made["data"] == {"k": "", "j": "v"}
    assert "immutable" not in made

    deploys = f"/apis/apps/v1/namespaces/{ns}/deployments"
    status, made, _ = await raw("POST", deploys, _deployment(replicas=None))
    assert status == 201
    assert made["spec"]["replicas"] == 1  # null, then defaulted
    template = made["spec"]["template"]
    assert template["metadata"] == {"labels": {"app": "web"}}
    container = template["spec"]["containers"][0]
    assert container["resources"] == {"limits": {"memory": "0"}}  # a null quantity is zero
    assert "env" not in container

    _, live, _ = await raw("GET", deploys + "/web")
    replaced = {**live["spec"], "strategy": None, "revisionHistoryLimit": None}
    status, put, _ = await raw("PUT", deploys + "/web", {**live, "spec": replaced})
    assert status == 200
    assert put["spec"]["strategy"]["type"] == "RollingUpdate"
    assert put["spec"]["revisionHistoryLimit"] == 10

    ops = [
        {"op": "add", "path": "/spec/template/spec/nodeSelector", "value": None},
        {"op": "add", "path": "/spec/paused", "value": None},
    ]
    status, patched, _ = await raw("PATCH", deploys + "/web", ops, content_type=JSON_PATCH)
    assert status == 200
    assert "nodeSelector" not in patched["spec"]["template"]["spec"]
    assert "paused" not in patched["spec"]
    assert patched["metadata"]["generation"] == put["metadata"]["generation"]  # a no-op


async def test_a_raw_extension_keeps_its_nulls(raw: Raw) -> None:
    ns = await create_namespace(raw)
    data = {"spec": {"template": {"metadata": {"creationTimestamp": None}}}}
    status, made, _ = await raw(
        "POST",
        f"/apis/apps/v1/namespaces/{ns}/controllerrevisions",
        {"metadata": {"name": "r"}, "data": data, "revision": 1},
    )
    assert status == 201
    assert made["data"] == data


#: A Gadget's spec, with structural defaults at several depths and a nullable field.
GADGET: Obj = {
    "type": "object",
    "default": {},
    "properties": {
        "size": {"type": "integer", "default": 1},
        "color": {"type": "string"},
        "note": {"type": "string", "nullable": True},
        "ports": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "port": {"type": "integer"},
                    "protocol": {"type": "string", "default": "TCP"},
                },
            },
        },
    },
}


async def test_custom_resource_defaults_and_nulls(kubectl: Kubectl, raw: Raw) -> None:
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    kubectl.run("apply", "-f", "-", input=crd_manifest(group, "Gadget", GADGET))
    ns = await create_namespace(raw)
    base = f"/apis/{group}/v1/namespaces/{ns}/gadgets"
    status, bare, _ = await raw("POST", base, {"metadata": {"name": "bare"}})
    assert status == 201
    assert bare["spec"] == {"size": 1}  # spec defaults to {}, then its own defaults apply
    body = {
        "metadata": {"name": "g"},
        "spec": {"size": None, "color": None, "note": None, "ports": [{"port": 80}]},
    }
    status, made, _ = await raw("POST", base, body)
    assert status == 201
    assert made["spec"] == {"size": 1, "note": None, "ports": [{"port": 80, "protocol": "TCP"}]}
    ops = [{"op": "replace", "path": "/spec/ports", "value": [{"port": 81, "protocol": None}]}]
    _, patched, _ = await raw("PATCH", base + "/g", ops, content_type=JSON_PATCH)
    assert patched["spec"]["ports"] == [{"port": 81, "protocol": "TCP"}]

    # A default added to the CRD later shows on objects written before it, when they are read.
    mode = {"type": "string", "default": "fast"}
    later = {**GADGET, "properties": {**GADGET["properties"], "mode": mode}}
    kubectl.run("apply", "-f", "-", input=crd_manifest(group, "Gadget", later))
    _, got, _ = await raw("GET", base + "/g")
    assert got["spec"]["mode"] == "fast"
    listed = kubectl.json("-n", ns, "get", f"gadgets.{group}")["items"]
    assert [i["spec"]["mode"] for i in listed] == ["fast", "fast"]
    kubectl.run("delete", "crd", f"gadgets.{group}")


# --- bodies are decoded into the kind's Go types first (apimachinery's json decoding) --------------


async def test_a_body_that_does_not_fit_the_go_types_is_a_400_in_gos_words(raw: Raw) -> None:
    """encoding/json's UnmarshalTypeError, wrapped by apimachinery's serializer
    (``runtime.serializer.json``'s ``Decode``: "<Kind> in version "<v>" cannot be handled as a
    <Kind>: ..."): the innermost Go struct, the JSON path from the root, and the Go type."""
    ns = await create_namespace(raw)
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    cases = [
        (
            {"metadata": {"name": "a"}, "data": {"port": 8080}},
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
        ),
        (
            {"metadata": {"name": "b", "labels": {"a": 1}}},
            "json: cannot unmarshal number into Go struct field "
            "ObjectMeta.metadata.labels of type string",
        ),
        (
            {"metadata": {"name": "c"}, "data": "notamap"},
            "json: cannot unmarshal string into Go struct field "
            "ConfigMap.data of type map[string]string",
        ),
    ]
    for body, words in cases:
        status, answer, _ = await raw("POST", cms, body)
        assert status == 400, answer
        assert answer["kind"] == "Status"
        assert answer["reason"] == "BadRequest"
        assert answer["message"] == (
            f'ConfigMap in version "v1" cannot be handled as a ConfigMap: {words}'
        )
    status, answer, _ = await raw("GET", cms)
    assert answer["items"] == []  # nothing was stored


async def test_workload_fields_are_typed_too_and_quantities_take_numbers(raw: Raw) -> None:
    ns = await create_namespace(raw)
    deployments = f"/apis/apps/v1/namespaces/{ns}/deployments"
    wrong = _deployment(replicas="2")
    status, answer, _ = await raw("POST", deployments, wrong)
    assert status == 400
    assert answer["message"].endswith(
        "json: cannot unmarshal string into Go struct field "
        "DeploymentSpec.spec.replicas of type int32"
    )
    args = _deployment()
    args["spec"]["template"]["spec"]["containers"][0]["args"] = "notalist"
    status, answer, _ = await raw("POST", deployments, args)
    assert status == 400
    assert answer["message"].endswith(
        "json: cannot unmarshal string into Go struct field "
        "Container.spec.template.spec.containers.args of type []string"
    )
    fine = _deployment(replicas=2)
    fine["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": 1}}
    status, answer, _ = await raw("POST", deployments, fine)
    assert status == 201, answer  # a Quantity decodes from a JSON number
    assert answer["spec"]["replicas"] == 2


async def test_a_merge_patch_and_an_apply_are_decoded_as_well(raw: Raw) -> None:
    ns = await create_namespace(raw)
    cm = f"/api/v1/namespaces/{ns}/configmaps/settings"
    status, _, _ = await raw(
        "POST", f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "settings"}}
    )
    assert status == 201
    status, answer, _ = await raw(
        "PATCH", cm, {"data": {"n": 3}}, content_type="application/merge-patch+json"
    )
    assert status == 400
    assert "Go struct field ConfigMap.data of type string" in answer["message"]
    apply = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {n: 3}\n"
    status, answer, _ = await raw(
        "PATCH", cm, apply, content_type="application/apply-patch+yaml", fieldManager="me"
    )
    assert status == 400
    assert answer["message"] == (
        "failed to create typed patch object (/v1, Kind=ConfigMap): "
        ".data.n: expected string, got number"
    )
