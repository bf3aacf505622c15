"""Rules a real apiserver applies to updates: a Job's completions, finalizers on an object being
deleted, and the list types of custom resources (set items unique, map keys unique)."""

from __future__ import annotations

import uuid
from typing import Any

from tests.crds import LISTS
from tests.kubesim.conftest import Kubectl, Raw, crd_manifest

MERGE = "application/merge-patch+json"


def job(name: str, **spec: Any) -> dict[str, Any]:
    template = {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
    }
    return {"metadata": {"name": name}, "spec": {"template": template, **spec}}


async def test_job_completions_are_immutable_unless_an_indexed_job_scales(
    raw: Raw, namespace: str
) -> None:
    jobs = f"/apis/batch/v1/namespaces/{namespace}/jobs"
    assert (await raw("POST", jobs, job("plain", completions=3, parallelism=1)))[0] == 201
    status, body, _ = await raw(
        "PATCH", f"{jobs}/plain", {"spec": {"completions": 5}}, content_type=MERGE
    )
    assert status == 422
    assert body["message"] == (
        'Job.batch "plain" is invalid: spec.completions: Invalid value: 5: field is immutable'
    )
    indexed = job("indexed", completions=3, parallelism=3, completionMode="Indexed")
    assert (await raw("POST", jobs, indexed))[0] == 201
    status, body, _ = await raw(
        "PATCH", f"{jobs}/indexed", {"spec": {"completions": 5}}, content_type=MERGE
    )
    assert status == 422
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec.completions",
            "message": "Invalid value: 5: can only be modified in tandem with spec.parallelism",
        }
    ]
    both = {"spec": {"completions": 5, "parallelism": 5}}
    status, body, _ = await raw("PATCH", f"{jobs}/indexed", both, content_type=MERGE)
    assert (status, body["spec"]["completions"]) == (200, 5)


async def test_no_finalizer_can_be_added_while_deleting(raw: Raw, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    held = {"metadata": {"name": "held", "finalizers": ["example.com/keep"]}}
    assert (await raw("POST", path, held))[0] == 201
    assert (await raw("DELETE", f"{path}/held"))[0] == 200
    more = {"metadata": {"finalizers": ["example.com/keep", "example.com/more"]}}
    status, body, _ = await raw("PATCH", f"{path}/held", more, content_type=MERGE)
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: no new finalizers can be added if the object is being deleted, "
            'found new finalizers []string{"example.com/more"}',
            "field": "metadata.finalizers",
        }
    ]
    done: dict[str, Any] = {"metadata": {"finalizers": []}}
    assert (await raw("PATCH", f"{path}/held", done, content_type=MERGE))[0] == 200
    assert (await raw("GET", f"{path}/held"))[0] == 404


ROUTE = """
apiVersion: {group}/v1
kind: Route
metadata: {{name: web, namespace: default}}
spec:
  tags: [blue, green, blue]
  ports: [{{name: http, port: 80}}, {{name: http, port: 8080}}]
"""


def test_custom_resource_list_types_refuse_duplicates(kubectl: Kubectl) -> None:
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    kubectl.run("apply", "-f", "-", input=crd_manifest(group, "Route", LISTS))
    proc = kubectl.run("apply", "-f", "-", input=ROUTE.format(group=group), check=False)
    assert proc.returncode == 1
    assert proc.stderr == (
        'The Route "web" is invalid: \n'
        '* spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}\n'
        '* spec.tags[2]: Duplicate value: "blue"\n'
    )
    fixed = (
        ROUTE.format(group=group)
        .replace(", blue]", "]")
        .replace("http, port: 8080", "https, port: 443")
    )
    kubectl.run("apply", "-f", "-", input=fixed)
