"""Browsing (``spec/console.browse.yaml``): the left nav, object counts, search results.

The views computed straight from Kubernetes objects (rows, details, events, overviews,
diagnostics) are built by ``console.resources`` in the API's shape already: they project the
cluster's own JSON rather than encode a value object of ours.
"""

from __future__ import annotations

from typing import TypedDict

from console.resources.catalog import Kind
from console.resources.counts import Counts, Failure
from console.resources.nav import Nav
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
