"""The OpenAPI documents carry the list markers of the built-in kinds, so kubectl's client-side
apply can delete list items, and ``/openapi/v2`` is served as JSON and as protobuf."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from tests.kubesim.conftest import Kubectl, Raw

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80, name: http}, {containerPort: 9090, name: metrics}]
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
"""


def test_client_side_apply_removes_list_items_dropped_from_the_file(kubectl: Kubectl) -> None:
    ns = f"o-{uuid.uuid4().hex[:8]}"
    kubectl.run("create", "namespace", ns)
    kubectl.run("-n", ns, "apply", "-f", "-", input=DEPLOYMENT)
    trimmed = DEPLOYMENT.replace(", {containerPort: 9090, name: metrics}", "").replace(
        ', {name: B, value: "2"}', ""
    )
    kubectl.run("-n", ns, "apply", "-f", "-", input=trimmed)
    container = kubectl.json("-n", ns, "get", "deploy", "web")["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert container["ports"] == [{"containerPort": 80, "name": "http", "protocol": "TCP"}]
    assert container["env"] == [{"name": "A", "value": "1"}]


async def test_openapi_v3_and_v2_carry_patch_and_list_markers(raw: Raw) -> None:
    _, v3, _ = await raw("GET", "/openapi/v3/api/v1")
    containers = v3["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"][
        "containers"
    ]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    status, v2, _ = await raw("GET", "/openapi/v2")
    assert (status, v2["swagger"]) == (200, "2.0")
    ports = v2["definitions"]["io.k8s.api.core.v1.Container"]["properties"]["ports"]
    assert ports["x-kubernetes-patch-merge-key"] == "containerPort"
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    spec = v2["definitions"]["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]
    assert spec["template"]["$ref"] == "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"
    assert spec["strategy"]["x-kubernetes-patch-strategy"] == "retainKeys"
    assert v2["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"][
        "x-kubernetes-group-version-kind"
    ] == {"group": "", "kind": "Pod", "version": "v1"}


def test_kubectl_reads_the_protobuf_openapi_v2(kubectl: Kubectl) -> None:
    explained = kubectl.run(
        "explain", "deployment.spec.strategy", "--output=plaintext-openapiv2"
    ).stdout
    assert "RESOURCE: strategy <Object>" in explained
    assert "rollingUpdate\t<Object>" in explained
    assert 'Type of deployment. Can be "Recreate" or "RollingUpdate".' in explained


HASHES = """
from kubesim.http.openapi import OpenAPI
from kubesim.machinery.registry import Registry, load_builtin

api = OpenAPI(Registry(load_builtin()))
print(api.document("apis/policy/v1")[1], api.document("api/v1")[1], api.v2()[2])
"""


def test_the_documents_and_their_hashes_do_not_change_from_run_to_run() -> None:
    """A restarted API server must serve the same documents under the same hashes, or every
    client's OpenAPI cache misses; Python's string hashing differs per process."""
    seen = {
        subprocess.run(
            [sys.executable, "-c", HASHES],
            env={**os.environ, "PYTHONHASHSEED": seed},
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(seen) == 1, seen
