"""A cluster's capability report: why a screen may be empty, before anyone asks.

Server version, discovery health (stale aggregated groups), the metrics API (detected through
discovery and its APIService, not by an empty answer), a Prometheus-compatible service, the Gateway
API and CRDs, and what the console's own identity may do (SelfSubjectReview, one
SelfSubjectAccessReview per thing the console does, and a SelfSubjectRulesReview). Each probe fails
on its own: a probe the cluster refuses is reported (allowed ``null``: unknown), never raised.
"""

from __future__ import annotations

import asyncio
from typing import Any

from common.errors import WharfError
from console.resources.catalog import GATEWAY_GROUP, Catalog
from console.resources.discovery import Catalogs
from console.resources.kubeapi import KubeApi, path_of

# (verb, group, resource, subresource): what the console's browse, logs and actions need.
CHECKS = (
    ("list", "", "namespaces", ""),
    ("list", "", "pods", ""),
    ("get", "", "pods", "log"),
    ("create", "", "pods", "exec"),
    ("list", "", "events", ""),
    ("patch", "apps", "deployments", ""),
    ("update", "apps", "deployments", "scale"),
    ("delete", "", "pods", ""),
    ("create", "batch", "jobs", ""),
    ("patch", "", "nodes", ""),
    ("create", "", "pods", "eviction"),
    ("list", "apiextensions.k8s.io", "customresourcedefinitions", ""),
)
_NOT_PROMETHEUS = ("operator", "alertmanager", "exporter", "pushgateway", "kube-state", "adapter")


async def diagnose(api: KubeApi, catalogs: Catalogs) -> dict[str, Any]:
    version, discovery = await asyncio.gather(_version(api), _discovery(api, catalogs))
    catalog = discovery.pop("catalog")
    capabilities, identity = await asyncio.gather(_capabilities(api, catalog), _identity(api))
    return {
        "kubernetesVersion": (version or {}).get("gitVersion"),
        "serverVersion": version,
        "discovery": discovery,
        "capabilities": capabilities,
        "identity": identity,
    }


async def _version(api: KubeApi) -> dict[str, Any] | None:
    try:
        found = await api.get("/version")
    except WharfError:
        return None
    return found if isinstance(found, dict) else None


async def _discovery(api: KubeApi, catalogs: Catalogs) -> dict[str, Any]:
    try:
        catalog = await catalogs.fresh(api)
    except WharfError as exc:
        return {"healthy": False, "groups": 0, "kinds": 0, "staleGroups": [],
                "error": exc.detail, "catalog": None}  # fmt: skip
    return {
        "healthy": not catalog.stale_groups,
        "groups": len(catalog.served_groups()),
        "kinds": len(catalog.kinds),
        "staleGroups": list(catalog.stale_groups),
        "error": None,
        "catalog": catalog,
    }


def _capability(name: str, available: bool | None, detail: str) -> dict[str, Any]:
    return {"name": name, "available": available, "detail": detail}


async def _capabilities(api: KubeApi, catalog: Catalog | None) -> list[dict[str, Any]]:
    if catalog is None:
        return [_capability("discovery", False, "discovery failed; nothing else was probed")]
    groups = catalog.served_groups()
    metrics, prometheus = await asyncio.gather(_metrics(api, groups), _prometheus(api))
    gateway = sorted(k.kind for k in catalog.kinds.values() if k.group == GATEWAY_GROUP)
    custom = sorted({k.group for k in catalog.kinds.values() if not k.builtin})
    return [
        metrics,
        prometheus,
        _capability(
            "gateway-api",
            bool(gateway),
            f"{GATEWAY_GROUP} serves {', '.join(gateway)}" if gateway else "not installed",
        ),
        _capability(
            "custom-resources",
            "apiextensions.k8s.io" in groups,
            f"{len(custom)} custom API groups" + (f": {', '.join(custom)}" if custom else ""),
        ),
    ]


async def _metrics(api: KubeApi, groups: set[str]) -> dict[str, Any]:
    if "metrics.k8s.io" not in groups:
        return _capability("metrics-api", False, "metrics.k8s.io is not served (no metrics-server)")
    if "apiregistration.k8s.io" not in groups:
        return _capability("metrics-api", True, "metrics.k8s.io is served")
    path = path_of("apiregistration.k8s.io", "v1", "apiservices", name="v1beta1.metrics.k8s.io")
    try:
        service = await api.get(path)
    except WharfError as exc:
        return _capability("metrics-api", None, f"served; APIService not readable: {exc.detail}")
    for cond in (service.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Available":
            ok = cond.get("status") == "True"
            why = cond.get("message") or cond.get("reason") or ""
            return _capability("metrics-api", ok, "available" if ok else f"unavailable: {why}")
    return _capability("metrics-api", None, "served; APIService reports no Available condition")


async def _prometheus(api: KubeApi) -> dict[str, Any]:
    try:
        services = await api.list_all(path_of("", "v1", "services"))
    except WharfError as exc:
        return _capability("prometheus", None, f"services not listable: {exc.detail}")
    found = [_service_ref(s) for s in services if _looks_like_prometheus(s)]
    if not found:
        return _capability("prometheus", False, "no Prometheus-compatible service found")
    state = "discovered" if len(found) == 1 else "ambiguous"
    return _capability("prometheus", True, f"{state}: {', '.join(found)}")


def _looks_like_prometheus(service: dict[str, Any]) -> bool:
    meta = service.get("metadata") or {}
    name = str(meta.get("name", "")).lower()
    labelled = (meta.get("labels") or {}).get("app.kubernetes.io/name") == "prometheus"
    named = "prometheus" in name or "thanos-query" in name or "victoria-metrics" in name
    return (labelled or named) and not any(word in name for word in _NOT_PROMETHEUS)


def _service_ref(service: dict[str, Any]) -> str:
    meta = service.get("metadata") or {}
    ports = (service.get("spec") or {}).get("ports") or [{}]
    return f"{meta.get('namespace')}/{meta.get('name')}:{ports[0].get('port', '')}"


async def _identity(api: KubeApi) -> dict[str, Any]:
    who, checks, rules = await asyncio.gather(
        _whoami(api), asyncio.gather(*(_can_i(api, *c) for c in CHECKS)), _rules(api)
    )
    return {**who, "checks": list(checks), "rules": rules}


async def _whoami(api: KubeApi) -> dict[str, Any]:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    path = path_of("authentication.k8s.io", "v1", "selfsubjectreviews")
    try:
        review = await api.send("POST", path, body)
    except WharfError as exc:
        return {"username": None, "groups": [], "usernameDetail": exc.detail}
    info = (review.get("status") or {}).get("userInfo") or {}
    return {"username": info.get("username"), "groups": info.get("groups") or []}


async def _can_i(api: KubeApi, verb: str, group: str, resource: str, sub: str) -> dict[str, Any]:
    attributes = {"verb": verb, "group": group, "resource": resource}
    if sub:
        attributes["subresource"] = sub
    out: dict[str, Any] = {**attributes}
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }
    try:
        review = await api.send(
            "POST", path_of("authorization.k8s.io", "v1", "selfsubjectaccessreviews"), body
        )
    except WharfError as exc:
        return {**out, "allowed": None, "reason": f"unknown: {exc.detail}"}
    status = review.get("status") or {}
    return {**out, "allowed": bool(status.get("allowed")), "reason": status.get("reason") or ""}


async def _rules(api: KubeApi, namespace: str = "default") -> dict[str, Any]:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": namespace},
    }
    path = path_of("authorization.k8s.io", "v1", "selfsubjectrulesreviews")
    try:
        review = await api.send("POST", path, body)
    except WharfError as exc:
        return {"namespace": namespace, "available": False, "detail": exc.detail}
    status = review.get("status") or {}
    return {
        "namespace": namespace,
        "available": True,
        "incomplete": bool(status.get("incomplete")),
        "resourceRules": status.get("resourceRules") or [],
        "detail": status.get("evaluationError") or "",
    }
