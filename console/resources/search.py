"""Cross-kind search by name, namespace and labels, ranked, over a fixed set of kinds.

Each searched kind is listed as metadata only, in chunks, so a search over thousands of pods holds
one chunk plus the best ``limit`` hits; ``total`` counts every match. The answer says which kinds
were searched, which the cluster serves but were not (not in the searched set, or cluster-scoped
when a namespace was given), and which failed, with the cluster's reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
from collections.abc import Mapping
from typing import Any

import attrs

from common.errors import WharfError
from console.resources import rows
from console.resources.access import AccessReviews
from console.resources.catalog import Catalog, Kind
from console.resources.counts import Failure, failure
from console.resources.kubeapi import METADATA_LIST, KubeApi
from console.resources.listing import collection

SEARCHED = (
    "deployments",
    "statefulsets",
    "daemonsets",
    "cronjobs",
    "jobs",
    "pods",
    "services",
    "ingresses",
    "configmaps",
    "secrets",
    "persistentvolumeclaims",
    "namespaces",
    "nodes",
)
DEFAULT_LIMIT = 50
CONCURRENCY = 8


@attrs.frozen
class Hit:
    score: int
    resource_id: str
    kind: str
    namespace: str | None
    name: str
    matched: str
    age: str | None


@attrs.frozen
class _Kept:
    """A heap entry ordered worst first, so the heap's top is the hit to drop."""

    rank: tuple[int, int, str, str]
    hit: Hit = attrs.field(eq=False)

    def __lt__(self, other: _Kept) -> bool:
        return self.rank > other.rank


@attrs.frozen
class Results:
    query: str
    total: int
    hits: tuple[Hit, ...]
    searched: tuple[str, ...]
    not_searched: tuple[str, ...]
    failed: tuple[Failure, ...]


def score(meta: Mapping[str, Any], q: str) -> tuple[int, str]:
    """How well an object's metadata matches ``q`` (lower-cased): 0 when it does not."""
    name = str(meta.get("name", "")).lower()
    if name == q:
        return 100, "name"
    if name.startswith(q):
        return 80, "name"
    if q in name:
        return 60, "name"
    labels = meta.get("labels") or {}
    pairs = [(str(k).lower(), str(v).lower()) for k, v in labels.items()]
    if any(f"{k}={v}" == q for k, v in pairs):
        return 50, "label"
    if any(q in (k, v) for k, v in pairs):
        return 40, "label"
    if any(q in v for _, v in pairs):
        return 30, "label"
    if str(meta.get("namespace", "")).lower() == q:
        return 20, "namespace"
    return 0, ""


@attrs.define
class _Collector:
    """Counts every match and keeps the best ``limit`` (a heap, worst on top)."""

    needle: str
    limit: int
    total: int = 0
    best: list[_Kept] = attrs.field(factory=list)

    def add(self, kind: Kind, items: list[Any]) -> None:
        for item in items:
            hit = _hit(kind, item, self.needle)
            if hit is None:
                continue
            self.total += 1
            entry = _Kept(_rank(hit), hit)
            if len(self.best) < self.limit:
                heapq.heappush(self.best, entry)
            elif entry.rank < self.best[0].rank:
                heapq.heapreplace(self.best, entry)

    def hits(self) -> tuple[Hit, ...]:
        return tuple(sorted((e.hit for e in self.best), key=_rank))


async def search(
    api: KubeApi,
    catalog: Catalog,
    q: str,
    *,
    namespace: str | None = None,
    limit: int = DEFAULT_LIMIT,
    reviews: AccessReviews | None = None,
) -> Results:
    """Search ``q``; for a person across namespaces (``reviews`` given), each kind only where
    that person may list it (``AccessReviews.scopes``)."""
    kinds = [k for rid in SEARCHED if (k := catalog.find(rid)) is not None]
    if namespace:
        kinds = [k for k in kinds if k.namespaced]
    chosen = {k.id for k in kinds}
    found = _Collector(q.strip().lower(), limit)
    gate = asyncio.Semaphore(CONCURRENCY)
    results = await asyncio.gather(*(_scan(api, k, namespace, found, gate, reviews) for k in kinds))
    failed = tuple(r for r in results if r is not None)
    broken = {f.resource_id for f in failed}
    return Results(
        query=q,
        total=found.total,
        hits=found.hits(),
        searched=tuple(k.id for k in kinds if k.id not in broken),
        not_searched=tuple(k.id for k in catalog.listable() if k.id not in chosen),
        failed=failed,
    )


async def _scan(
    api: KubeApi,
    kind: Kind,
    namespace: str | None,
    found: _Collector,
    gate: asyncio.Semaphore,
    reviews: AccessReviews | None,
) -> Failure | None:
    async with gate:
        try:
            scopes = [namespace] if reviews is None else await reviews.scopes(api, kind, namespace)
            for scope in scopes:
                pages = api.chunks(collection(kind, scope), accept=METADATA_LIST)
                async with contextlib.aclosing(pages):
                    async for page in pages:
                        found.add(kind, page.get("items") or [])
        except WharfError as exc:
            return failure(kind.id, exc)
    return None


def _hit(kind: Kind, item: Any, needle: str) -> Hit | None:
    meta = item.get("metadata") if isinstance(item, dict) else None
    if not isinstance(meta, dict):
        return None
    points, matched = score(meta, needle)
    if not points:
        return None
    return Hit(
        score=points,
        resource_id=kind.id,
        kind=kind.kind,
        namespace=meta.get("namespace") or None,
        name=str(meta.get("name", "")),
        matched=matched,
        age=rows.age(meta.get("creationTimestamp")),
    )


def _rank(hit: Hit) -> tuple[int, int, str, str]:
    kind_rank = SEARCHED.index(hit.resource_id) if hit.resource_id in SEARCHED else 99
    return (-hit.score, kind_rank, hit.namespace or "", hit.name)
