"""The demo's custom resources: ``Widget`` (a CRD with printer columns) and a Gateway-API-like set
(GatewayClass, Gateway, HTTPRoute in ``gateway.networking.k8s.io``) with instances and statuses."""

from __future__ import annotations

from kubesim.controllers.client import Client
from kubesim.store import Obj

CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _crd(
    group: str,
    plural: str,
    kind: str,
    scope: str,
    columns: list[Obj],
    schema: Obj,
    short: list[str],
) -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {
                "plural": plural,
                "singular": kind.lower(),
                "kind": kind,
                "listKind": f"{kind}List",
                "shortNames": short,
            },
            "scope": scope,
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": columns,
                }
            ],
        },
    }


def _col(name: str, path: str, kind: str = "string") -> Obj:
    return {"name": name, "type": kind, "jsonPath": path}


AGE = _col("Age", ".metadata.creationTimestamp", "date")
WIDGET_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "string", "enum": ["small", "medium", "large"]},
                "color": {"type": "string"},
                "replicas": {"type": "integer", "minimum": 0},
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}
GATEWAY_SCHEMA = {"type": "object", "properties": {"spec": OPEN, "status": OPEN}}


def load(client: Client) -> None:
    gw = "gateway.networking.k8s.io"
    accepted = _col("Accepted", '.status.conditions[?(@.type=="Accepted")].status')
    programmed = _col("Programmed", '.status.conditions[?(@.type=="Programmed")].status')
    for crd in (
        _crd(
            "demo.wharf.dev",
            "widgets",
            "Widget",
            "Namespaced",
            [
                _col("Size", ".spec.size"),
                _col("Color", ".spec.color"),
                _col("Phase", ".status.phase"),
                AGE,
            ],
            WIDGET_SCHEMA,
            ["wdg"],
        ),
        _crd(
            gw,
            "gatewayclasses",
            "GatewayClass",
            "Cluster",
            [_col("Controller", ".spec.controllerName"), accepted, AGE],
            GATEWAY_SCHEMA,
            ["gc"],
        ),
        _crd(
            gw,
            "gateways",
            "Gateway",
            "Namespaced",
            [
                _col("Class", ".spec.gatewayClassName"),
                _col("Address", ".status.addresses[*].value"),
                programmed,
                AGE,
            ],
            GATEWAY_SCHEMA,
            ["gtw"],
        ),
        _crd(
            gw,
            "httproutes",
            "HTTPRoute",
            "Namespaced",
            [_col("Hostnames", ".spec.hostnames"), AGE],
            GATEWAY_SCHEMA,
            [],
        ),
    ):
        client.create(CRDS, "", crd)
    widgets = ("demo.wharf.dev", "widgets")
    for name, size, color, phase in (
        ("sprocket", "small", "blue", "Ready"),
        ("flange", "medium", "green", "Ready"),
        ("gizmo", "large", "red", "Degraded"),
    ):
        spec = {"size": size, "color": color, "replicas": 1}
        _with_status(client, widgets, "Widget", "shop", name, spec=spec, status={"phase": phase})
    now = "2026-01-01T00:00:00Z"

    def ok(kind: str, reason: str) -> Obj:
        return {
            "type": kind,
            "status": "True",
            "reason": reason,
            "message": "",
            "lastTransitionTime": now,
            "observedGeneration": 1,
        }

    _with_status(
        client,
        (gw, "gatewayclasses"),
        "GatewayClass",
        "",
        "wharf",
        spec={"controllerName": "wharf.dev/gateway-controller"},
        status={"conditions": [ok("Accepted", "Accepted")]},
    )
    _with_status(
        client,
        (gw, "gateways"),
        "Gateway",
        "shop",
        "shop-gateway",
        spec={
            "gatewayClassName": "wharf",
            "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
        },
        status={
            "addresses": [{"type": "IPAddress", "value": "172.18.0.100"}],
            "conditions": [ok("Accepted", "Accepted"), ok("Programmed", "Programmed")],
            "listeners": [
                {
                    "name": "http",
                    "attachedRoutes": 1,
                    "supportedKinds": [{"group": gw, "kind": "HTTPRoute"}],
                    "conditions": [ok("Accepted", "Accepted"), ok("Programmed", "Programmed")],
                }
            ],
        },
    )
    _with_status(
        client,
        (gw, "httproutes"),
        "HTTPRoute",
        "shop",
        "shop",
        spec={
            "parentRefs": [{"name": "shop-gateway"}],
            "hostnames": ["shop.demo.local"],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                    "backendRefs": [{"name": "frontend", "port": 80}],
                }
            ],
        },
        status={
            "parents": [
                {
                    "parentRef": {"group": gw, "kind": "Gateway", "name": "shop-gateway"},
                    "controllerName": "wharf.dev/gateway-controller",
                    "conditions": [ok("Accepted", "Accepted"), ok("ResolvedRefs", "ResolvedRefs")],
                }
            ]
        },
    )


def _with_status(
    client: Client,
    gr: tuple[str, str],
    kind: str,
    namespace: str,
    name: str,
    *,
    spec: Obj,
    status: Obj,
) -> None:
    """A custom resource as its controller (which the demo does not run) would leave it."""
    body = {"apiVersion": f"{gr[0]}/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}
    client.update_status(gr, client.create(gr, namespace, body), status)
