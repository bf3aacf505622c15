"""The real kubectl (v1.32) against the simulator: what the issue's checklist names."""

from __future__ import annotations

import json
import subprocess
import time
import uuid

import pytest

from tests.kubesim.conftest import KUBECTL, Kubectl

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}, labels: {{app: web}}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: "nginx:1.27", ports: [{{containerPort: 80}}]}}]
"""
CONFIGMAP = """
apiVersion: v1
kind: ConfigMap
metadata: {{name: {name}, namespace: {ns}, labels: {{tier: {tier}}}}}
data: {{key: "{value}"}}
"""


@pytest.fixture
def ns(kubectl: Kubectl) -> str:
    name = f"k-{uuid.uuid4().hex[:8]}"
    kubectl.run(
        "apply", "-f", "-", input=f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n"
    )
    return name


def test_get_tables_and_output_formats(kubectl: Kubectl, ns: str) -> None:
    kubectl.run("apply", "-f", "-", input=DEPLOYMENT.format(ns=ns))
    for i, tier in enumerate(("front", "back", "front")):
        kubectl.run(
            "apply", "-f", "-", input=CONFIGMAP.format(name=f"cm{i}", ns=ns, tier=tier, value=i)
        )
    table = kubectl.run("-n", ns, "get", "deployments").stdout.splitlines()
    assert table[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert table[1].split()[:4] == ["web", "2/2", "2", "2"]
    wide = kubectl.run("-n", ns, "get", "deploy", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert "nginx:1.27" in wide[1]
    data = kubectl.json("-n", ns, "get", "deployment", "web")
    assert data["spec"]["replicas"] == 2
    assert data["metadata"]["generation"] == 1
    yaml_out = kubectl.run("-n", ns, "get", "deploy", "web", "-o", "yaml").stdout
    assert "kind: Deployment" in yaml_out
    names = kubectl.run("-n", ns, "get", "cm", "-l", "tier=front", "-o", "name").stdout.split()
    assert names == ["configmap/cm0", "configmap/cm2"]
    value = kubectl.run("-n", ns, "get", "cm", "cm1", "-o", "jsonpath={.data.key}").stdout
    assert value == "1"
    cms = kubectl.run("-n", ns, "get", "cm", "-l", "tier,tier!=front").stdout.splitlines()
    assert cms[0].split() == ["NAME", "DATA", "AGE"]
    assert [line.split()[0] for line in cms[1:]] == ["cm1"]
    missing = kubectl.run("-n", ns, "get", "cm", "nope", check=False)
    assert missing.returncode == 1
    assert 'configmaps "nope" not found' in missing.stderr


def test_get_watch(kubectl: Kubectl, ns: str) -> None:
    kubectl.run("apply", "-f", "-", input=CONFIGMAP.format(name="w0", ns=ns, tier="a", value=0))
    cmd = [
        KUBECTL,
        f"--kubeconfig={kubectl.sim.kubeconfig_path}",
        f"--cache-dir={kubectl.cache}",
        "-n",
        ns,
        "get",
        "cm",
        "-l",
        "tier=a",
        "-w",
    ]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        header = proc.stdout.readline()
        assert header.split() == ["NAME", "DATA", "AGE"]
        assert proc.stdout.readline().split()[0] == "w0"
        kubectl.run("apply", "-f", "-", input=CONFIGMAP.format(name="w1", ns=ns, tier="a", value=1))
        assert proc.stdout.readline().split()[0] == "w1"
        kubectl.run("-n", ns, "delete", "cm", "w0")
        assert proc.stdout.readline().split()[0] == "w0"
        proc.terminate()


def test_describe(kubectl: Kubectl, ns: str) -> None:
    kubectl.run("apply", "-f", "-", input=DEPLOYMENT.format(ns=ns))
    out = kubectl.run("-n", ns, "describe", "deployment", "web").stdout
    assert "Replicas:               2 desired" in out
    assert "RollingUpdateStrategy:  25% max unavailable, 25% max surge" in out
    assert "Image:         nginx:1.27" in out
    out = kubectl.run("describe", "namespace", ns).stdout
    assert "Status:       Active" in out


def test_client_side_apply_cycle(kubectl: Kubectl, ns: str) -> None:
    manifest = CONFIGMAP.format(name="c", ns=ns, tier="a", value="1")
    assert "created" in kubectl.run("apply", "-f", "-", input=manifest).stdout
    assert "unchanged" in kubectl.run("apply", "-f", "-", input=manifest).stdout
    changed = CONFIGMAP.format(name="c", ns=ns, tier="b", value="2")
    assert "configured" in kubectl.run("apply", "-f", "-", input=changed).stdout
    obj = kubectl.json("-n", ns, "get", "cm", "c")
    assert obj["data"] == {"key": "2"}
    assert obj["metadata"]["labels"] == {"tier": "b"}
    assert "kubectl.kubernetes.io/last-applied-configuration" in obj["metadata"]["annotations"]


def test_server_side_apply_conflict_and_force(kubectl: Kubectl, ns: str) -> None:
    manifest = CONFIGMAP.format(name="s", ns=ns, tier="a", value="1")
    out = kubectl.run("apply", "--server-side", "-f", "-", input=manifest).stdout
    assert "serverside-applied" in out
    other = CONFIGMAP.format(name="s", ns=ns, tier="a", value="2")
    refused = kubectl.run(
        "apply", "--server-side", "--field-manager=other", "-f", "-", input=other, check=False
    )
    assert refused.returncode == 1
    assert 'conflict with "kubectl"' in refused.stderr
    assert ".data.key" in refused.stderr
    kubectl.run(
        "apply",
        "--server-side",
        "--field-manager=other",
        "--force-conflicts",
        "-f",
        "-",
        input=other,
    )
    obj = kubectl.json("-n", ns, "get", "cm", "s", "--show-managed-fields")
    assert obj["data"] == {"key": "2"}
    managers = {e["manager"]: e for e in obj["metadata"]["managedFields"]}
    assert "f:key" in json.dumps(managers["other"]["fieldsV1"])
    assert "f:key" not in json.dumps(managers["kubectl"]["fieldsV1"])


def _owned_configmap(ns: str, owner: dict[str, str], name: str) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": name,
                "namespace": ns,
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": owner["name"],
                        "uid": owner["uid"],
                        "blockOwnerDeletion": True,
                    }
                ],
            },
        }
    )


@pytest.mark.parametrize(
    ("cascade", "survives"), [("background", False), ("foreground", False), ("orphan", True)]
)
def test_delete_cascade(kubectl: Kubectl, ns: str, cascade: str, survives: bool) -> None:
    kubectl.run("apply", "-f", "-", input=DEPLOYMENT.format(ns=ns))
    meta = kubectl.json("-n", ns, "get", "deploy", "web")["metadata"]
    kubectl.run("create", "-f", "-", input=_owned_configmap(ns, meta, "dep"))
    out = kubectl.run("-n", ns, "delete", "deployment", "web", f"--cascade={cascade}").stdout
    assert 'deployment.apps "web" deleted' in out
    assert kubectl.run("-n", ns, "get", "deploy", "web", check=False).returncode == 1
    left = kubectl.run("-n", ns, "get", "cm", "dep", "-o", "json", check=False)
    assert (left.returncode == 0) == survives
    if survives:
        assert "ownerReferences" not in json.loads(left.stdout)["metadata"]


def test_delete_namespace_deletes_contents(kubectl: Kubectl, ns: str) -> None:
    kubectl.run("apply", "-f", "-", input=CONFIGMAP.format(name="c", ns=ns, tier="a", value=1))
    kubectl.run("delete", "namespace", ns)
    assert kubectl.run("get", "namespace", ns, check=False).returncode == 1
    gone = kubectl.run("-n", ns, "get", "cm", "c", check=False)
    assert gone.returncode == 1
    refused = kubectl.run(
        "apply", "-f", "-", check=False, input=CONFIGMAP.format(name="c", ns=ns, tier="a", value=1)
    )
    assert f'namespaces "{ns}" not found' in refused.stderr


def test_api_resources_and_explain(kubectl: Kubectl) -> None:
    rows = kubectl.run("api-resources").stdout.splitlines()
    deploy = next(r.split() for r in rows if r.startswith("deployments "))
    assert deploy == ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    out = kubectl.run("explain", "deployment.spec.replicas").stdout
    assert "FIELD: replicas <integer>" in out
    assert "Number of desired pods" in out
    out = kubectl.run("explain", "pods.spec.containers").stdout
    assert "image\t<string>" in out or "image <string>" in " ".join(out.split())


def test_create_namespace(kubectl: Kubectl) -> None:
    name = f"created-{uuid.uuid4().hex[:6]}"
    assert f"namespace/{name} created" in kubectl.run("create", "namespace", name).stdout
    assert kubectl.json("get", "namespace", name)["status"]["phase"] == "Active"


def test_scale(kubectl: Kubectl, ns: str) -> None:
    kubectl.run("apply", "-f", "-", input=DEPLOYMENT.format(ns=ns))
    assert "scaled" in kubectl.run("-n", ns, "scale", "deployment", "web", "--replicas=5").stdout
    dep = kubectl.json("-n", ns, "get", "deploy", "web")
    assert dep["spec"]["replicas"] == 5
    assert dep["metadata"]["generation"] == 2
    stale = kubectl.run(
        "-n", ns, "scale", "deployment", "web", "--replicas=1", "--resource-version=1", check=False
    )
    assert stale.returncode == 1
    assert "Expected resource version to be 1" in stale.stderr


def test_dry_run_server(kubectl: Kubectl, ns: str) -> None:
    manifest = CONFIGMAP.format(name="dry", ns=ns, tier="a", value=1)
    kubectl.run("apply", "--dry-run=server", "-f", "-", input=manifest)
    assert kubectl.run("-n", ns, "get", "cm", "dry", check=False).returncode == 1
    kubectl.run("apply", "-f", "-", input=manifest)
    kubectl.run("-n", ns, "delete", "cm", "dry", "--dry-run=server")
    assert kubectl.run("-n", ns, "get", "cm", "dry").returncode == 0
    _ = time


def test_delete_manifest_with_its_namespace(kubectl: Kubectl) -> None:
    name = f"m-{uuid.uuid4().hex[:6]}"
    manifest = f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n---\n" + (
        DEPLOYMENT.format(ns=name)
    )
    kubectl.run("apply", "-f", "-", input=manifest)
    out = kubectl.run("delete", "-f", "-", input=manifest).stdout
    assert f'namespace "{name}" deleted' in out
    assert 'deployment.apps "web" deleted' in out


def test_auth_can_i_and_whoami(kubectl: Kubectl) -> None:
    assert kubectl.run("auth", "can-i", "delete", "deployments", "-A").stdout.strip() == "yes"
    assert "kubesim-admin" in kubectl.run("auth", "whoami").stdout


def test_create_subcommands_send_protobuf(kubectl: Kubectl, ns: str) -> None:
    """kubectl's typed clients post protobuf bodies; each kind decodes to the JSON equivalent."""
    run = kubectl.run
    run("-n", ns, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=0", "--port=80")
    run("-n", ns, "create", "job", "once", "--image=busybox", "--", "true")
    run("-n", ns, "create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *")
    run("-n", ns, "create", "service", "clusterip", "svc", "--tcp=80:8080")
    run("-n", ns, "create", "serviceaccount", "robot")
    run("-n", ns, "create", "role", "reader", "--verb=get,list", "--resource=pods")
    run("-n", ns, "create", "ingress", "ing", "--rule=foo.com/bar=svc:80")
    deploy = kubectl.json("-n", ns, "get", "deployment", "web")
    assert deploy["spec"]["replicas"] == 0  # an explicit zero survives decoding
    assert deploy["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 80, "protocol": "TCP"}
    ]
    assert deploy["spec"]["strategy"]["type"] == "RollingUpdate"
    assert kubectl.json("-n", ns, "get", "cronjob", "tick")["spec"]["schedule"] == "*/5 * * * *"
    ports = kubectl.json("-n", ns, "get", "service", "svc")["spec"]["ports"][0]
    assert (ports["port"], ports["targetPort"]) == (80, 8080)
    rule = kubectl.json("-n", ns, "get", "ingress", "ing")["spec"]["rules"][0]
    assert rule["http"]["paths"][0]["backend"]["service"]["port"]["number"] == 80
    assert kubectl.json("-n", ns, "get", "role", "reader")["rules"][0]["verbs"] == ["get", "list"]


def test_service_account_tokens(kubectl: Kubectl, ns: str) -> None:
    kubectl.run("-n", ns, "create", "serviceaccount", "robot")
    token = kubectl.run("-n", ns, "create", "token", "robot", "--duration=1h").stdout.strip()
    assert token.count(".") == 2
    as_robot = kubectl.run(f"--token={token}", "-n", ns, "auth", "whoami", "-o", "json")
    user = json.loads(as_robot.stdout)["status"]["userInfo"]["username"]
    assert user == f"system:serviceaccount:{ns}:robot"
    refused = kubectl.run(f"--token={token}", "-n", ns, "get", "sa", "robot", check=False)
    assert "Forbidden" in refused.stderr  # a new ServiceAccount may do nothing
    kubectl.run(
        "-n",
        ns,
        "create",
        "rolebinding",
        "robot-view",
        "--clusterrole=view",
        f"--serviceaccount={ns}:robot",
    )
    assert kubectl.run(f"--token={token}", "-n", ns, "get", "sa", "robot").returncode == 0
    kubectl.run("-n", ns, "delete", "serviceaccount", "robot")
    refused = kubectl.run(f"--token={token}", "-n", ns, "get", "sa", check=False)
    assert refused.returncode == 1
    assert "Unauthorized" in refused.stderr
