"""Browsing (``spec/console.browse.yaml``): the left nav, object counts, health overviews, search
results, an object's detail and events, and a cluster's diagnostics. (Rows, projected objects and
relations are reshaped from the cluster's own JSON by ``console.resources``, already in the API's
shape.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from console.resources import rows
from console.resources.catalog import Kind
from console.resources.counts import Counts, Failure
from console.resources.detail import Detail
from console.resources.diagnostics import (
    AccessCheck,
    Diagnostics,
    ResourceAttributes,
    RulesReview,
)
from console.resources.events import event_time
from console.resources.nav import Nav
from console.resources.overview import ATTENTION, IDLE, OK, SUSPENDED, KindHealth, Overview
from console.resources.search import Hit, Results


class NavKind(TypedDict):
    resourceId: str
    kind: str
    group: str
    version: str
    apiVersion: str
    resource: str
    namespaced: bool
    builtin: bool
    verbs: list[str]
    shortNames: list[str]


class NavCategory(TypedDict):
    id: str
    label: str
    kinds: list[NavKind]


class NavBody(TypedDict):
    categories: list[NavCategory]
    gateway: bool


class KindFailure(TypedDict):
    resourceId: str
    status: int
    reason: str


class KindCount(TypedDict):
    resourceId: str
    count: int
    exact: bool
    source: str


class CountsBody(TypedDict):
    namespace: str | None
    counts: list[KindCount]
    failed: list[KindFailure]


class FlaggedObject(TypedDict):
    namespace: str | None
    name: str
    state: str
    reason: str


class KindOverview(TypedDict):
    resourceId: str
    kind: str
    total: int
    ok: int
    attention: int
    suspended: int
    idle: int
    objects: list[FlaggedObject]


class OverviewBody(TypedDict):
    category: str
    namespace: str | None
    summaries: list[KindOverview]
    failed: list[KindFailure]


class InvolvedObject(TypedDict):
    kind: str | None
    namespace: str | None
    name: str | None
    fieldPath: str | None


class Event(TypedDict):
    namespace: str | None
    name: str | None
    type: str
    reason: str
    message: str
    count: int
    firstTimestamp: str | None
    lastTimestamp: str | None
    age: str | None
    source: str
    involvedObject: InvolvedObject


class DetailBody(TypedDict):
    resourceId: str
    row: dict[str, Any]
    object: Mapping[str, Any]
    owners: list[dict[str, Any]]
    relations: dict[str, list[dict[str, Any]]]
    events: list[Event]


class SearchHit(TypedDict):
    resourceId: str
    kind: str
    namespace: str | None
    name: str
    score: int
    matched: str
    age: str | None


class SearchResults(TypedDict):
    query: str
    total: int
    truncated: bool
    hits: list[SearchHit]
    searched: list[str]
    notSearched: list[str]
    failed: list[KindFailure]


def encode_kind(kind: Kind) -> NavKind:
    return {
        "resourceId": kind.id,
        "kind": kind.kind,
        "group": kind.group,
        "version": kind.version,
        "apiVersion": kind.api_version,
        "resource": kind.resource,
        "namespaced": kind.namespaced,
        "builtin": kind.builtin,
        "verbs": sorted(kind.verbs),
        "shortNames": list(kind.short_names),
    }


def encode_nav(nav: Nav) -> NavBody:
    return {
        "categories": [
            {"id": cid, "label": label, "kinds": [encode_kind(k) for k in kinds]}
            for cid, label, kinds in nav.categories
        ],
        "gateway": any(cid == "gateway" for cid, _, _ in nav.categories),
    }


def encode_failure(failure: Failure) -> KindFailure:
    return {"resourceId": failure.resource_id, "status": failure.status, "reason": failure.reason}


def encode_counts(result: Counts) -> CountsBody:
    return {
        "namespace": result.namespace,
        "counts": [
            {"resourceId": c.resource_id, "count": c.count, "exact": c.exact, "source": c.source}
            for c in result.counts
        ],
        "failed": [encode_failure(f) for f in result.failed],
    }


def encode_hit(hit: Hit) -> SearchHit:
    return {
        "resourceId": hit.resource_id,
        "kind": hit.kind,
        "namespace": hit.namespace,
        "name": hit.name,
        "score": hit.score,
        "matched": hit.matched,
        "age": hit.age,
    }


def encode_search(results: Results) -> SearchResults:
    return {
        "query": results.query,
        "total": results.total,
        "truncated": results.total > len(results.hits),
        "hits": [encode_hit(h) for h in results.hits],
        "searched": list(results.searched),
        "notSearched": list(results.not_searched),
        "failed": [encode_failure(f) for f in results.failed],
    }


def encode_kind_health(health: KindHealth) -> KindOverview:
    return {
        "resourceId": health.kind.id,
        "kind": health.kind.kind,
        "total": health.total,
        "ok": health.states[OK],
        "attention": health.states[ATTENTION],
        "suspended": health.states[SUSPENDED],
        "idle": health.states[IDLE],
        "objects": [
            {"namespace": f.namespace, "name": f.name, "state": f.state, "reason": f.reason}
            for f in health.flagged
        ],
    }


def encode_overview(found: Overview) -> OverviewBody:
    return {
        "category": found.category,
        "namespace": found.namespace,
        "summaries": [encode_kind_health(k) for k in found.kinds],
        "failed": [encode_failure(f) for f in found.failed],
    }


def encode_event(event: dict[str, Any]) -> Event:
    """A core/v1 Event as kubectl shows it: ``count`` from its series, time its newest stamp."""
    meta = event.get("metadata") or {}
    involved = event.get("involvedObject") or {}
    source = event.get("source") or {}
    last = event_time(event)
    series = event.get("series") or {}
    return {
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
        "type": event.get("type") or "Normal",
        "reason": event.get("reason") or "",
        "message": event.get("message") or "",
        "count": int(series.get("count") or event.get("count") or 1),
        "firstTimestamp": event.get("firstTimestamp") or event.get("eventTime"),
        "lastTimestamp": last or None,
        "age": rows.age(last),
        "source": source.get("component") or event.get("reportingComponent") or "",
        "involvedObject": {
            "kind": involved.get("kind"),
            "namespace": involved.get("namespace"),
            "name": involved.get("name"),
            "fieldPath": involved.get("fieldPath"),
        },
    }


def encode_detail(found: Detail) -> DetailBody:
    return {
        "resourceId": found.kind.id,
        "row": found.row,
        "object": found.object,
        "owners": found.owners,
        "relations": found.relations,
        "events": [encode_event(e) for e in found.events],
    }


class CapabilityBody(TypedDict):
    name: str
    available: bool | None
    detail: str


class DiscoveryBody(TypedDict):
    healthy: bool
    groups: int
    kinds: int
    staleGroups: list[str]
    error: str | None


class AccessCheckBody(ResourceAttributes):
    allowed: bool | None
    reason: str


class RulesBody(TypedDict):
    namespace: str
    available: bool
    detail: str
    incomplete: NotRequired[bool]
    resourceRules: NotRequired[list[dict[str, Any]]]


class IdentityBody(TypedDict):
    username: str | None
    groups: list[str]
    usernameDetail: NotRequired[str]
    checks: list[AccessCheckBody]
    rules: RulesBody


class DiagnosticsBody(TypedDict):
    kubernetesVersion: str | None
    serverVersion: dict[str, Any] | None
    discovery: DiscoveryBody
    capabilities: list[CapabilityBody]
    identity: IdentityBody


def encode_diagnostics(found: Diagnostics) -> DiagnosticsBody:
    who, health = found.identity, found.discovery
    identity: IdentityBody = {
        "username": who.username,
        "groups": list(who.groups),
        "checks": [_access_check(c) for c in who.checks],
        "rules": _rules(who.rules),
    }
    if who.username_detail is not None:
        identity["usernameDetail"] = who.username_detail
    version = found.server_version
    return {
        "kubernetesVersion": found.kubernetes_version,
        "serverVersion": dict(version) if version is not None else None,
        "discovery": {
            "healthy": health.healthy,
            "groups": health.groups,
            "kinds": health.kinds,
            "staleGroups": list(health.stale_groups),
            "error": health.error,
        },
        "capabilities": [
            {"name": c.name, "available": c.available, "detail": c.detail}
            for c in found.capabilities
        ],
        "identity": identity,
    }


def _access_check(check: AccessCheck) -> AccessCheckBody:
    return {**check.attributes, "allowed": check.allowed, "reason": check.reason}


def _rules(rules: RulesReview) -> RulesBody:
    body: RulesBody = {
        "namespace": rules.namespace,
        "available": rules.available,
        "detail": rules.detail,
    }
    if rules.available:
        body["incomplete"] = rules.incomplete
        body["resourceRules"] = [dict(rule) for rule in rules.resource_rules]
    return body
