"""The GA group-versions a chart may use beyond workloads: admission webhooks and policies,
PriorityClasses (resolved into pods' priority), RuntimeClasses, CSRs, APIServices, flow control
and autoscaling/v1 -- served, discoverable, installable by Helm and readable by kubectl."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import helm_python
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client import ApiClient

from tests.kubesim.conftest import Kubectl, Raw, write_chart

CHART_YAML = "apiVersion: v2\nname: guarded\nversion: 0.1.0\n"
WEBHOOK = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: {{ .Release.Name }}-{{ .Release.Namespace }}
webhooks:
- name: check.guarded.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    service: {name: guard, namespace: {{ .Release.Namespace }}, path: /validate}
  rules:
  - apiGroups: [apps]
    apiVersions: [v1]
    operations: [CREATE, UPDATE]
    resources: [deployments]
"""
PRIORITY = """apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: {{ .Release.Namespace }}-high
value: 100000
description: guarded workloads first
"""
POD = """apiVersion: v1
kind: Pod
metadata:
  name: guarded
spec:
  priorityClassName: {{ .Release.Namespace }}-high
  containers: [{name: app, image: nginx:1.27}]
"""


@pytest.fixture
def chart(tmp_path: Path) -> Path:
    templates = {"webhook": WEBHOOK, "priority": PRIORITY, "pod": POD}
    return write_chart(tmp_path / "guarded", CHART_YAML, "{}\n", templates)


async def test_helm_installs_a_chart_with_a_webhook_and_a_priority_class(
    helm: helm_python.Config, chart: Path, api: ApiClient, ns: str
) -> None:
    await asyncio.to_thread(helm.install, str(chart), "guarded", create_namespace=True)
    admission = client.AdmissionregistrationV1Api(api)
    hook = await admission.read_validating_webhook_configuration(f"guarded-{ns}")
    assert hook.webhooks[0].client_config.service.path == "/validate"
    assert hook.metadata.labels["app.kubernetes.io/managed-by"] == "Helm"
    high = await client.SchedulingV1Api(api).read_priority_class(f"{ns}-high")
    assert (high.value, high.preemption_policy) == (100000, "PreemptLowerPriority")
    pod = await client.CoreV1Api(api).read_namespaced_pod("guarded", ns)
    assert (pod.spec.priority_class_name, pod.spec.priority) == (f"{ns}-high", 100000)
    await asyncio.to_thread(helm.uninstall, "guarded")
    hooks = await admission.list_validating_webhook_configuration()
    assert f"guarded-{ns}" not in {h.metadata.name for h in hooks.items}


async def test_an_unknown_priority_class_is_forbidden(raw: Raw, namespace: str) -> None:
    pod = {
        "metadata": {"name": "p"},
        "spec": {"priorityClassName": "nope", "containers": [{"name": "c", "image": "nginx"}]},
    }
    status, body, _ = await raw("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
    assert (status, body["reason"]) == (403, "Forbidden")
    assert body["message"] == 'pods "p" is forbidden: no PriorityClass with name nope was found'
    assert body["details"] == {"name": "p", "kind": "pods"}


async def test_system_priority_classes_exist_and_resolve(raw: Raw, namespace: str) -> None:
    classes = (await raw("GET", "/apis/scheduling.k8s.io/v1/priorityclasses"))[1]["items"]
    by_name = {c["metadata"]["name"]: c["value"] for c in classes}
    assert by_name["system-node-critical"] == 2000001000
    assert by_name["system-cluster-critical"] == 2000000000
    pod: dict[str, Any] = {
        "metadata": {"name": "critical"},
        "spec": {
            "priorityClassName": "system-cluster-critical",
            "priority": 5,
            "containers": [{"name": "c", "image": "nginx"}],
        },
    }
    status, body, _ = await raw("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
    assert status == 403
    assert "the integer value of priority (5) must not be provided in pod spec" in body["message"]
    del pod["spec"]["priority"]
    status, body, _ = await raw("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
    assert (status, body["spec"]["priority"]) == (201, 2000000000)


async def test_autoscaling_v1_is_a_view_of_the_v2_objects(raw: Raw, namespace: str) -> None:
    v1 = f"/apis/autoscaling/v1/namespaces/{namespace}/horizontalpodautoscalers"
    v2 = f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers"
    hpa: dict[str, Any] = {
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5,
            "targetCPUUtilizationPercentage": 60,
        },
    }
    status, body, _ = await raw("POST", v1, hpa)
    assert status == 201, body
    assert body["apiVersion"] == "autoscaling/v1"
    assert body["spec"] == {**hpa["spec"], "minReplicas": 1}
    stored = (await raw("GET", f"{v2}/web"))[1]
    assert stored["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 60},
            },
        }
    ]
    patch = {"spec": {"targetCPUUtilizationPercentage": 75}}
    status, body, _ = await raw(
        "PATCH", f"{v1}/web", patch, content_type="application/merge-patch+json"
    )
    assert (status, body["spec"]["targetCPUUtilizationPercentage"]) == (200, 75)
    stored = (await raw("GET", f"{v2}/web"))[1]
    assert stored["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 75


GA_OBJECTS = """
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {{name: gvisor-{id}}}
handler: runsc
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {{name: batch-{id}}}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 10
    limitResponse: {{type: Reject}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {{name: batch-{id}}}
spec:
  priorityLevelConfiguration: {{name: batch-{id}}}
  matchingPrecedence: 1000
  rules:
  - subjects: [{{kind: Group, group: {{name: batch}}}}]
    resourceRules: [{{verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"]}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: replicas-{id}}}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}}]
  validations: [{{expression: "object.spec.replicas <= 5"}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: replicas-{id}}}
spec: {{policyName: replicas-{id}, validationActions: [Deny]}}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {{name: v1beta1.{id}.example.com}}
spec:
  group: {id}.example.com
  version: v1beta1
  groupPriorityMinimum: 1000
  versionPriority: 15
  service: {{name: api, namespace: default}}
---
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {{name: jane-{id}}}
spec:
  request: {csr}
  signerName: kubernetes.io/kube-apiserver-client
  usages: [client auth]
"""
# A base64 PEM-shaped request: the simulator stores it without signing anything.
CSR = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg=="


def test_kubectl_applies_and_lists_the_ga_kinds(kubectl: Kubectl) -> None:
    ident = uuid.uuid4().hex[:8]
    kubectl.run("apply", "-f", "-", input=GA_OBJECTS.format(id=ident, csr=CSR))
    for kind, name in [
        ("runtimeclass", f"gvisor-{ident}"),
        ("prioritylevelconfiguration", f"batch-{ident}"),
        ("flowschema", f"batch-{ident}"),
        ("validatingadmissionpolicy", f"replicas-{ident}"),
        ("validatingadmissionpolicybinding", f"replicas-{ident}"),
        ("apiservice", f"v1beta1.{ident}.example.com"),
        ("csr", f"jane-{ident}"),
        ("hpa.v1.autoscaling", None),
    ]:
        args = ["get", kind] + ([name] if name else ["-A"]) + ["-o", "name"]
        out = kubectl.run(*args).stdout
        if name:
            assert out.strip().endswith(f"/{name}"), out
    resources = kubectl.run("api-resources", "-o", "name").stdout.split()
    for plural in (
        "mutatingwebhookconfigurations.admissionregistration.k8s.io",
        "validatingwebhookconfigurations.admissionregistration.k8s.io",
        "priorityclasses.scheduling.k8s.io",
        "runtimeclasses.node.k8s.io",
        "certificatesigningrequests.certificates.k8s.io",
        "apiservices.apiregistration.k8s.io",
        "flowschemas.flowcontrol.apiserver.k8s.io",
        "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io",
    ):
        assert plural in resources
    versions = kubectl.run("api-versions").stdout.split()
    assert {"autoscaling/v1", "autoscaling/v2", "scheduling.k8s.io/v1"} <= set(versions)
    explained = kubectl.run("explain", "priorityclass.value").stdout
    assert "value represents the integer value of this priority class" in explained


async def test_priority_class_rules(raw: Raw) -> None:
    classes = "/apis/scheduling.k8s.io/v1/priorityclasses"
    name = f"pc-{uuid.uuid4().hex[:8]}"
    status, body, _ = await raw("POST", classes, {"metadata": {"name": name}, "value": 2000000000})
    assert status == 422
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: maximum allowed value of a user defined priority is 1000000000",
            "field": "value",
        }
    ]
    status, body, _ = await raw("POST", classes, {"metadata": {"name": "system-mine"}, "value": 1})
    assert status == 422
    assert body["details"]["causes"][0]["message"] == (
        "Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
        "error: system-mine is not a known system priority class"
    )
    assert (await raw("POST", classes, {"metadata": {"name": name}, "value": 10}))[0] == 201
    patch = {"value": 11}
    status, body, _ = await raw(
        "PATCH", f"{classes}/{name}", patch, content_type="application/merge-patch+json"
    )
    assert (status, body["details"]["causes"][0]["field"]) == (422, "value")
