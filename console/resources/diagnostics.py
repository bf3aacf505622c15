"""A cluster's capability report: why a screen may be empty, before anyone asks.

Server version, discovery health (stale aggregated groups), the metrics API (detected through
discovery and its APIService, not by an empty answer), a Prometheus-compatible service, the Gateway
API and CRDs, and what the console's own identity may do (SelfSubjectReview, one
SelfSubjectAccessReview per thing the console does, and a SelfSubjectRulesReview). Each probe fails
on its own: a probe the cluster refuses is reported (allowed ``null``: unknown), never raised.
The report is value objects; ``console.http.encode.browse`` gives them the API's shape.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

import attrs

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


@attrs.frozen
class Capability:
    name: str
    #: None: the cluster could not say.
    available: bool | None
    detail: str


@attrs.frozen
class DiscoveryHealth:
    healthy: bool
    groups: int
    kinds: int
    stale_groups: tuple[str, ...]
    #: Why discovery failed (then nothing else was probed), else None.
    error: str | None = None


class ResourceAttributes(TypedDict):
    """A SelfSubjectAccessReview's ``spec.resourceAttributes``, as the cluster is asked."""

    verb: str
    group: str
    resource: str
    subresource: NotRequired[str]


@attrs.frozen
class AccessCheck:
    """One SelfSubjectAccessReview of :data:`CHECKS`; ``allowed`` None when the cluster refused it."""

    attributes: ResourceAttributes
    allowed: bool | None
    reason: str


@attrs.frozen
class RulesReview:
    """A SelfSubjectRulesReview of ``namespace``; when not ``available``, ``detail`` says why."""

    namespace: str
    available: bool
    detail: str
    incomplete: bool = False
    resource_rules: tuple[Mapping[str, Any], ...] = ()


@attrs.frozen
class ConsoleIdentity:
    """Who the cluster takes the console for, and what it may do there."""

    username: str | None
    groups: tuple[str, ...]
    #: Why the SelfSubjectReview failed, else None.
    username_detail: str | None
    checks: tuple[AccessCheck, ...]
    rules: RulesReview


@attrs.frozen
class Diagnostics:
    server_version: Mapping[str, Any] | None
    discovery: DiscoveryHealth
    capabilities: tuple[Capability, ...]
    identity: ConsoleIdentity

    @property
    def kubernetes_version(self) -> str | None:
        found = (self.server_version or {}).get("gitVersion")
        return found if isinstance(found, str) else None


async def diagnose(api: KubeApi, catalogs: Catalogs) -> Diagnostics:
    version, (discovery, catalog) = await asyncio.gather(_version(api), _discovery(api, catalogs))
    capabilities, identity = await asyncio.gather(_capabilities(api, catalog), _identity(api))
    return Diagnostics(version, discovery, capabilities, identity)


async def _version(api: KubeApi) -> dict[str, Any] | None:
    try:
        found = await api.get("/version")
    except WharfError:
        return None
    return found if isinstance(found, dict) else None


async def _discovery(api: KubeApi, catalogs: Catalogs) -> tuple[DiscoveryHealth, Catalog | None]:
    try:
        catalog = await catalogs.fresh(api)
    except WharfError as exc:
        return DiscoveryHealth(False, 0, 0, (), exc.detail), None
    stale = tuple(catalog.stale_groups)
    groups = len(catalog.served_groups())
    return DiscoveryHealth(not stale, groups, len(catalog.kinds), stale), catalog


async def _capabilities(api: KubeApi, catalog: Catalog | None) -> tuple[Capability, ...]:
    if catalog is None:
        return (Capability("discovery", False, "discovery failed; nothing else was probed"),)
    groups = catalog.served_groups()
    metrics, prometheus = await asyncio.gather(_metrics(api, groups), _prometheus(api))
    gateway = sorted(k.kind for k in catalog.kinds.values() if k.group == GATEWAY_GROUP)
    custom = sorted({k.group for k in catalog.kinds.values() if not k.builtin})
    return (
        metrics,
        prometheus,
        Capability(
            "gateway-api",
            bool(gateway),
            f"{GATEWAY_GROUP} serves {', '.join(gateway)}" if gateway else "not installed",
        ),
        Capability(
            "custom-resources",
            "apiextensions.k8s.io" in groups,
            f"{len(custom)} custom API groups" + (f": {', '.join(custom)}" if custom else ""),
        ),
    )


async def _metrics(api: KubeApi, groups: set[str]) -> Capability:
    if "metrics.k8s.io" not in groups:
        return Capability("metrics-api", False, "metrics.k8s.io is not served (no metrics-server)")
    if "apiregistration.k8s.io" not in groups:
        return Capability("metrics-api", True, "metrics.k8s.io is served")
    path = path_of("apiregistration.k8s.io", "v1", "apiservices", name="v1beta1.metrics.k8s.io")
    try:
        service = await api.get(path)
    except WharfError as exc:
        return Capability("metrics-api", None, f"served; APIService not readable: {exc.detail}")
    for cond in (service.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Available":
            ok = cond.get("status") == "True"
            why = cond.get("message") or cond.get("reason") or ""
            return Capability("metrics-api", ok, "available" if ok else f"unavailable: {why}")
    return Capability("metrics-api", None, "served; APIService reports no Available condition")


async def _prometheus(api: KubeApi) -> Capability:
    try:
        services = await api.list_all(path_of("", "v1", "services"))
    except WharfError as exc:
        return Capability("prometheus", None, f"services not listable: {exc.detail}")
    found = [_service_ref(s) for s in services if _looks_like_prometheus(s)]
    if not found:
        return Capability("prometheus", False, "no Prometheus-compatible service found")
    state = "discovered" if len(found) == 1 else "ambiguous"
    return Capability("prometheus", True, f"{state}: {', '.join(found)}")


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


async def _identity(api: KubeApi) -> ConsoleIdentity:
    (username, groups, detail), checks, rules = await asyncio.gather(
        _whoami(api), asyncio.gather(*(_can_i(api, *c) for c in CHECKS)), _rules(api)
    )
    return ConsoleIdentity(username, groups, detail, tuple(checks), rules)


async def _whoami(api: KubeApi) -> tuple[str | None, tuple[str, ...], str | None]:
    """The console's user name and groups as the cluster sees them, or why it would not say."""
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    path = path_of("authentication.k8s.io", "v1", "selfsubjectreviews")
    try:
        review = await api.send("POST", path, body)
    except WharfError as exc:
        return None, (), exc.detail
    info = (review.get("status") or {}).get("userInfo") or {}
    return info.get("username"), tuple(info.get("groups") or ()), None


async def _can_i(api: KubeApi, verb: str, group: str, resource: str, sub: str) -> AccessCheck:
    attributes: ResourceAttributes = {"verb": verb, "group": group, "resource": resource}
    if sub:
        attributes["subresource"] = sub
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
        return AccessCheck(attributes, None, f"unknown: {exc.detail}")
    status = review.get("status") or {}
    allowed, reason = bool(status.get("allowed")), status.get("reason") or ""
    return AccessCheck(attributes, allowed, reason)


async def _rules(api: KubeApi, namespace: str = "default") -> RulesReview:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": namespace},
    }
    path = path_of("authorization.k8s.io", "v1", "selfsubjectrulesreviews")
    try:
        review = await api.send("POST", path, body)
    except WharfError as exc:
        return RulesReview(namespace, available=False, detail=exc.detail)
    status = review.get("status") or {}
    return RulesReview(
        namespace,
        available=True,
        detail=status.get("evaluationError") or "",
        incomplete=bool(status.get("incomplete")),
        resource_rules=tuple(status.get("resourceRules") or ()),
    )
