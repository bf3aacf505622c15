"""PodSecurity admission (k8s.io/pod-security-admission): a namespace's ``enforce`` label refuses
violating pods in the policy's own words, ``warn`` answers a Warning, and workloads' templates are
warned about. Messages as ``policy/check_*.go`` and ``admission/admission.go`` word them."""

from __future__ import annotations

import uuid
from typing import Any

from tests.kubesim.conftest import Kubectl, Raw

RESTRICTED_OK: dict[str, Any] = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [
        {
            "name": "web",
            "image": "nginx:1.27",
            "securityContext": {
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"]},
            },
        }
    ],
}


async def _namespace(raw: Raw, **labels: str) -> str:
    name = f"psa-{uuid.uuid4().hex[:8]}"
    wanted = {f"pod-security.kubernetes.io/{k}": v for k, v in labels.items()}
    status, _, _ = await raw(
        "POST", "/api/v1/namespaces", {"metadata": {"name": name, "labels": wanted}}
    )
    assert status == 201
    return name


def _pod(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": spec}


async def test_enforce_restricted_refuses_a_plain_pod_in_the_policys_words(raw: Raw) -> None:
    ns = await _namespace(raw, enforce="restricted")
    plain = {"containers": [{"name": "web", "image": "nginx:1.27"}]}
    status, answer, _ = await raw("POST", f"/api/v1/namespaces/{ns}/pods", _pod("plain", plain))
    assert status == 403
    assert answer["reason"] == "Forbidden"
    assert answer["message"] == (
        'pods "plain" is forbidden: violates PodSecurity "restricted:latest": '
        'allowPrivilegeEscalation != false (container "web" must set '
        "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "
        '"web" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or '
        'container "web" must set securityContext.runAsNonRoot=true), seccompProfile (pod or '
        'container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
        '"Localhost")'
    )
    status, _, _ = await raw("POST", f"/api/v1/namespaces/{ns}/pods", _pod("fine", RESTRICTED_OK))
    assert status == 201


async def test_enforce_baseline_refuses_host_access_and_warn_only_warns(raw: Raw) -> None:
    ns = await _namespace(raw, enforce="baseline", warn="restricted")
    host = {
        "hostNetwork": True,
        "containers": [
            {
                "name": "agent",
                "image": "busybox:1.36",
                "securityContext": {"privileged": True},
                "ports": [{"containerPort": 80, "hostPort": 80}],
            }
        ],
        "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
    }
    status, answer, _ = await raw("POST", f"/api/v1/namespaces/{ns}/pods", _pod("agent", host))
    assert status == 403
    assert answer["message"] == (
        'pods "agent" is forbidden: violates PodSecurity "baseline:latest": host namespaces '
        '(hostNetwork=true), hostPath volumes (volume "root"), hostPort (container "agent" uses '
        'hostPort 80), privileged (container "agent" must not set securityContext.privileged=true)'
    )
    plain = {"containers": [{"name": "web", "image": "nginx:1.27"}]}
    status, _, headers = await raw("POST", f"/api/v1/namespaces/{ns}/pods", _pod("web", plain))
    assert status == 201  # baseline allows it; restricted, the warn level, would not
    assert headers["Warning"].startswith(
        '299 - "would violate PodSecurity \\"restricted:latest\\": allowPrivilegeEscalation'
    )


async def test_a_workload_is_admitted_with_a_warning_about_its_template(
    raw: Raw, kubectl: Kubectl
) -> None:
    ns = await _namespace(raw, enforce="restricted")
    manifest = f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: "nginx:1.27"}}]
"""
    done = kubectl.run("apply", "-f", "-", input=manifest)
    assert 'Warning: would violate PodSecurity "restricted:latest"' in done.stderr
    status, _, _ = await raw("GET", f"/apis/apps/v1/namespaces/{ns}/deployments/web")
    assert status == 200  # the workload itself is admitted


async def test_namespaces_without_the_labels_are_not_checked(raw: Raw) -> None:
    ns = await _namespace(raw)
    privileged = {"containers": [{"name": "c", "image": "busybox:1.36",
                                  "securityContext": {"privileged": True}}]}  # fmt: skip
    status, _, headers = await raw("POST", f"/api/v1/namespaces/{ns}/pods", _pod("p", privileged))
    assert status == 201
    assert "Warning" not in headers
