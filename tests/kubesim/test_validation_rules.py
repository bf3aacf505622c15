"""Object validation a real apiserver performs: required fields, selectors, immutable fields."""

from __future__ import annotations

import base64
import uuid
from typing import Any

from tests.kubesim.conftest import Kubectl, Raw, create_namespace


def deployment(labels: dict[str, str], selector: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }


async def test_selector_must_match_template(raw: Raw) -> None:
    ns = await create_namespace(raw)
    status, body, _ = await raw(
        "POST", f"/apis/apps/v1/namespaces/{ns}/deployments", deployment({"app": "a"}, {"app": "b"})
    )
    assert (status, body["reason"]) == (422, "Invalid")
    cause = body["details"]["causes"][0]
    assert cause["field"] == "spec.template.metadata.labels"
    assert "`selector` does not match template `labels`" in cause["message"]


async def test_selector_is_immutable(raw: Raw) -> None:
    ns = await create_namespace(raw)
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    assert (await raw("POST", path, deployment({"app": "a"}, {"app": "a"})))[0] == 201
    changed = {
        "spec": {
            "selector": {"matchLabels": {"app": "b"}},
            "template": {"metadata": {"labels": {"app": "b"}}},
        }
    }
    status, body, _ = await raw(
        "PATCH", path + "/web", changed, content_type="application/merge-patch+json"
    )
    assert status == 422
    assert body["details"]["causes"][0]["field"] == "spec.selector"
    assert "field is immutable" in body["message"]


async def test_containers_need_images_and_pods_are_mostly_immutable(raw: Raw) -> None:
    ns = await create_namespace(raw)
    pods = f"/api/v1/namespaces/{ns}/pods"
    status, body, _ = await raw(
        "POST", pods, {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    )
    assert status == 422
    assert body["details"]["causes"][0]["field"] == "spec.containers[0].image"
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "a"}]}}
    assert (await raw("POST", pods, pod))[0] == 201
    image = [{"op": "replace", "path": "/spec/containers/0/image", "value": "b"}]
    assert (await raw("PATCH", pods + "/p", image, content_type="application/json-patch+json"))[
        0
    ] == 200
    env = [{"op": "add", "path": "/spec/containers/0/env", "value": [{"name": "X", "value": "1"}]}]
    status, body, _ = await raw(
        "PATCH", pods + "/p", env, content_type="application/json-patch+json"
    )
    assert (status, body["details"]["causes"][0]["field"]) == (422, "spec")


async def test_labels_are_checked(raw: Raw) -> None:
    ns = await create_namespace(raw)
    status, body, _ = await raw(
        "POST",
        f"/api/v1/namespaces/{ns}/configmaps",
        {"metadata": {"name": "c", "labels": {"app": "has/slash"}}},
    )
    assert status == 422
    assert body["details"]["causes"][0]["field"] == "metadata.labels"


async def test_secrets_fold_string_data_and_reject_bad_base64(raw: Raw) -> None:
    ns = await create_namespace(raw)
    secrets = f"/api/v1/namespaces/{ns}/secrets"
    status, body, _ = await raw(
        "POST", secrets, {"metadata": {"name": "s"}, "stringData": {"user": "admin"}}
    )
    assert status == 201
    assert "stringData" not in body
    assert base64.b64decode(body["data"]["user"]) == b"admin"
    status, body, _ = await raw(
        "POST", secrets, {"metadata": {"name": "t"}, "data": {"x": "not base64!"}}
    )
    assert (status, body["reason"]) == (400, "BadRequest")
    status, body, _ = await raw(
        "POST", secrets, {"metadata": {"name": "i"}, "immutable": True, "data": {"x": "eA=="}}
    )
    assert status == 201
    status, body, _ = await raw(
        "PATCH",
        secrets + "/i",
        {"data": {"x": "eQ=="}},
        content_type="application/merge-patch+json",
    )
    assert status == 422
    assert "field is immutable when `immutable` is set" in body["message"]


async def test_jobs_get_a_generated_selector(raw: Raw) -> None:
    ns = await create_namespace(raw)
    status, job, _ = await raw(
        "POST",
        f"/apis/batch/v1/namespaces/{ns}/jobs",
        {
            "metadata": {"name": "once"},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox"}],
                    }
                }
            },
        },
    )
    assert status == 201, job
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["template"]["metadata"]["labels"]["job-name"] == "once"


def test_helm_style_upgrade_changing_selector_fails(kubectl: Kubectl) -> None:
    ns = f"v-{uuid.uuid4().hex[:8]}"
    manifest = """
apiVersion: v1
kind: Namespace
metadata: {{name: {ns}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  selector: {{matchLabels: {{app: {app}}}}}
  template:
    metadata: {{labels: {{app: {app}}}}}
    spec: {{containers: [{{name: web, image: nginx}}]}}
"""
    kubectl.run("apply", "--server-side", "-f", "-", input=manifest.format(ns=ns, app="a"))
    failed = kubectl.run(
        "apply", "--server-side", "-f", "-", check=False, input=manifest.format(ns=ns, app="b")
    )
    assert failed.returncode == 1
    assert "field is immutable" in failed.stderr


async def test_node_ports_are_allocated(raw: Raw) -> None:
    ns = await create_namespace(raw)
    status, svc, _ = await raw(
        "POST",
        f"/api/v1/namespaces/{ns}/services",
        {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}},
    )
    assert status == 201
    assert 30000 <= svc["spec"]["ports"][0]["nodePort"] <= 32767
    assert svc["spec"]["externalTrafficPolicy"] == "Cluster"


async def test_payload_limits(raw: Raw) -> None:
    ns = await create_namespace(raw)
    big = "x" * (1024 * 1024)
    status, body, _ = await raw(
        "POST",
        f"/api/v1/namespaces/{ns}/configmaps",
        {"metadata": {"name": "big"}, "data": {"k": big}},
    )
    assert (status, body["details"]["causes"][0]["field"]) == (422, "data")
    status, body, _ = await raw(
        "POST",
        f"/api/v1/namespaces/{ns}/configmaps",
        {"metadata": {"name": "huge"}, "data": {"k": big * 4}},
    )
    assert (status, body["reason"]) == (413, "RequestEntityTooLarge")


async def test_resource_quota_is_enforced(raw: Raw) -> None:
    ns = await create_namespace(raw)
    quotas = f"/api/v1/namespaces/{ns}/resourcequotas"
    await raw(
        "POST",
        quotas,
        {"metadata": {"name": "q"}, "spec": {"hard": {"configmaps": "1", "requests.cpu": "1"}}},
    )
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    assert (await raw("POST", cms, {"metadata": {"name": "one"}}))[0] == 201
    status, body, _ = await raw("POST", cms, {"metadata": {"name": "two"}})
    assert (status, body["reason"]) == (403, "Forbidden")
    assert body["message"] == (
        'configmaps "two" is forbidden: exceeded quota: q, requested: configmaps=1, '
        "used: configmaps=1, limited: configmaps=1"
    )
    pods = f"/api/v1/namespaces/{ns}/pods"
    bare = {"metadata": {"name": "bare"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    status, body, _ = await raw("POST", pods, bare)
    assert status == 403
    assert "must specify requests.cpu" in body["message"]
    sized: dict[str, Any] = {
        "metadata": {"name": "sized"},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "600m"}}}]
        },
    }
    assert (await raw("POST", pods, sized))[0] == 201
    sized["metadata"]["name"] = "more"
    assert (await raw("POST", pods, sized))[0] == 403
    _, q, _ = await raw("GET", quotas + "/q")
    assert q["status"]["used"] == {"configmaps": "1", "requests.cpu": "600m"}
    await raw("DELETE", cms + "/one")
    _, q, _ = await raw("GET", quotas + "/q")
    assert q["status"]["used"]["configmaps"] == "0"


async def test_container_resources(raw: Raw) -> None:
    ns = await create_namespace(raw)
    pods = f"/api/v1/namespaces/{ns}/pods"

    def pod(resources: dict[str, Any]) -> dict[str, Any]:
        return {
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": resources}]},
        }

    status, body, _ = await raw(
        "POST", pods, pod({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})
    )
    assert status == 422
    assert body["details"]["causes"][0]["field"] == "spec.containers[0].resources.requests"
    status, body, _ = await raw("POST", pods, pod({"limits": {"memory": "lots"}}))
    assert (status, body["reason"]) == (400, "BadRequest")


def test_last_applied_annotation_too_long(kubectl: Kubectl) -> None:
    ns = f"v-{uuid.uuid4().hex[:8]}"
    kubectl.run("create", "namespace", ns)
    big = "x" * (300 * 1024)
    manifest = (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big, namespace: {ns}}}\n"
        f"data: {{blob: {big}}}\n"
    )
    failed = kubectl.run("apply", "-f", "-", input=manifest, check=False)
    assert failed.returncode == 1
    assert "metadata.annotations: Too long: must have at most 262144 bytes" in failed.stderr
    assert kubectl.run("apply", "--server-side", "-f", "-", input=manifest).returncode == 0
