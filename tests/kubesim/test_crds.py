"""CustomResourceDefinitions: served at once, in discovery, OpenAPI and Tables, and removed again."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.crds import crd
from tests.kubesim.conftest import Kubectl, Raw

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: widgets.{group}}}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: widgets, singular: widget, kind: Widget, shortNames: [wd], categories: [all]}}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {{status: {{}}, scale: {{specReplicasPath: .spec.size,
                                          statusReplicasPath: .status.size}}}}
    additionalPrinterColumns:
    - {{name: Size, type: integer, jsonPath: .spec.size}}
    - {{name: Color, type: string, jsonPath: .spec.color}}
    - {{name: Age, type: date, jsonPath: .metadata.creationTimestamp}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {{type: integer}}
              color: {{type: string}}
          status:
            type: object
            properties:
              size: {{type: integer}}
"""
WIDGET = """
apiVersion: {group}/v1
kind: Widget
metadata: {{name: {name}, namespace: default}}
spec: {{size: {size}, color: blue}}
"""


def test_crd_lifecycle(kubectl: Kubectl) -> None:
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    kubectl.run("apply", "-f", "-", input=CRD.format(group=group))
    crd = kubectl.json("get", "crd", f"widgets.{group}")
    established = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert established["Established"] == "True"

    rows = kubectl.run("api-resources", f"--api-group={group}").stdout.splitlines()
    assert rows[1].split() == ["widgets", "wd", f"{group}/v1", "true", "Widget"]

    kubectl.run("apply", "-f", "-", input=WIDGET.format(group=group, name="w1", size=3))
    table = kubectl.run("get", f"widgets.{group}").stdout.splitlines()
    assert table[0].split() == ["NAME", "SIZE", "COLOR", "AGE"]
    assert table[1].split()[:3] == ["w1", "3", "blue"]
    kubectl.run("scale", f"widgets.{group}/w1", "--replicas=7")
    assert kubectl.json("get", f"widgets.{group}", "w1")["spec"]["size"] == 7

    unknown = WIDGET.format(group=group, name="w2", size=1).replace("color: blue", "colour: x")
    refused = kubectl.run("apply", "-f", "-", input=unknown, check=False)
    assert refused.returncode == 1
    assert 'unknown field "spec.colour"' in refused.stderr

    kubectl.run(
        "apply", "--server-side", "-f", "-", input=WIDGET.format(group=group, name="w3", size=2)
    )
    assert kubectl.json("get", f"widgets.{group}", "w3")["spec"]["size"] == 2
    explained = kubectl.run("explain", f"widgets.{group}.spec").stdout
    assert "size" in explained

    kubectl.run("delete", "crd", f"widgets.{group}")
    gone = kubectl.run("get", f"widgets.{group}", check=False)
    assert gone.returncode == 1
    assert "the server doesn't have a resource type" in gone.stderr
    groups = json.loads(kubectl.run("get", "--raw", "/apis").stdout)["groups"]
    assert group not in {g["name"] for g in groups}


async def test_custom_resources_are_validated_against_the_schema(raw: Raw) -> None:
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    spec = {
        "type": "object",
        "required": ["size"],
        "properties": {
            "size": {"type": "integer", "minimum": 1},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "port": {"x-kubernetes-int-or-string": True},
        },
    }
    definition = crd(group, "Gadget", spec)
    assert (
        await raw("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", definition)
    )[0] == 201
    path = f"/apis/{group}/v1/namespaces/default/gadgets"

    def gadget(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": f"{group}/v1",
            "kind": "Gadget",
            "metadata": {"name": name},
            "spec": spec,
        }

    assert (await raw("POST", path, gadget("ok", {"size": 2, "port": "http"})))[0] == 201
    status, body, _ = await raw("POST", path, gadget("bad", {"size": "two", "mode": "warp"}))
    assert (status, body["reason"]) == (422, "Invalid")
    causes = {c["field"]: c["message"] for c in body["details"]["causes"]}
    assert causes["spec.size"] == (
        'Invalid value: "string": spec.size in body must be of type integer: "string"'
    )
    assert causes["spec.mode"] == 'Unsupported value: "warp": supported values: "fast", "slow"'
    status, body, _ = await raw("POST", path, gadget("none", {}))
    assert body["details"]["causes"][0] == {
        "reason": "FieldValueRequired",
        "message": "Required value",
        "field": "spec.size",
    }


def _two_versions(group: str, **v1beta1: Any) -> dict[str, Any]:
    definition = crd(group, "Gadget")
    stored = definition["spec"]["versions"][0]
    old = {**stored, "name": "v1beta1", "storage": False, "deprecated": True, **v1beta1}
    definition["spec"]["versions"] = [stored, old]
    return definition


async def test_a_deprecated_crd_version_warns_on_every_request(raw: Raw, kubectl: Kubectl) -> None:
    """apiextensions-apiserver's ``crdHandler`` adds the version's warning to every request
    (``defaultDeprecationWarning`` when it gives none: "<group>/<v> <Kind> is deprecated; use
    <group>/<newest served> <Kind>"), and kubectl prints it."""
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    status, answer, _ = await raw(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", _two_versions(group)
    )
    assert status == 201, answer
    ns = f"d-{uuid.uuid4().hex[:8]}"
    await raw("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    old = f"/apis/{group}/v1beta1/namespaces/{ns}/gadgets"
    status, _, headers = await raw("GET", old)
    assert status == 200
    words = f"{group}/v1beta1 Gadget is deprecated; use {group}/v1 Gadget"
    assert headers["Warning"] == f'299 - "{words}"'
    status, _, headers = await raw("POST", old, {"metadata": {"name": "x"}})
    assert status == 201
    assert words in headers["Warning"]
    status, _, headers = await raw("GET", f"/apis/{group}/v1/namespaces/{ns}/gadgets")
    assert "Warning" not in headers
    shown = kubectl.run("-n", ns, "get", f"gadgets.v1beta1.{group}", check=False)
    assert f"Warning: {words}" in shown.stderr

    own = f"o{uuid.uuid4().hex[:6]}.example.com"
    told = _two_versions(own, deprecationWarning="gadgets v1beta1 goes away in 2027")
    await raw("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", told)
    _, _, headers = await raw("GET", f"/apis/{own}/v1beta1/gadgets")
    assert headers["Warning"] == '299 - "gadgets v1beta1 goes away in 2027"'


async def test_componentstatus_is_deprecated(raw: Raw) -> None:
    status, _, headers = await raw("GET", "/api/v1/componentstatuses")
    assert status == 200
    assert headers["Warning"] == '299 - "v1 ComponentStatus is deprecated in v1.19+"'


async def test_a_webhook_conversion_is_refused_clearly_not_skipped(raw: Raw) -> None:
    """A CRD with ``conversion.strategy: Webhook`` is accepted, and its objects are served in the
    version they were written in; reading one in another version needs the webhook, which the
    simulator does not call: a 500 naming the conversion webhook, as a real server answers when
    the webhook cannot be reached (never an object relabelled as if ``strategy: None``)."""
    group = f"w{uuid.uuid4().hex[:6]}.example.com"
    definition = _two_versions(group, deprecated=False)
    definition["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"url": "https://127.0.0.1:9/convert"},
        },
    }
    status, answer, _ = await raw(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", definition
    )
    assert status == 201, answer
    ns = f"w-{uuid.uuid4().hex[:8]}"
    await raw("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    status, _, _ = await raw(
        "POST", f"/apis/{group}/v1/namespaces/{ns}/gadgets", {"metadata": {"name": "g"}}
    )
    assert status == 201
    status, _, _ = await raw("GET", f"/apis/{group}/v1/namespaces/{ns}/gadgets/g")
    assert status == 200
    status, answer, _ = await raw("GET", f"/apis/{group}/v1beta1/namespaces/{ns}/gadgets/g")
    assert status == 500
    assert answer["message"].startswith(f"conversion webhook for {group}/v1, Kind=Gadget failed")
