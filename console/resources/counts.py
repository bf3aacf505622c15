"""Object counts per kind, one ``limit=1`` request each, a bounded number at a time.

The count is ``len(items) + remainingItemCount`` when the server sends the remaining count, the
page's length when there is no continue token (the list was complete), and otherwise the result of
paging through metadata-only chunks (a server that ignores ``limit`` or omits the count still counts
right). The API documents ``remainingItemCount`` as not guaranteed exact, so counts built on it are
reported as such; a kind whose list failed is reported with the cluster's status and reason.
Counted for a person across namespaces (``reviews`` given), a kind sums the namespaces that person
may list it in (``AccessReviews.scopes``).
"""

from __future__ import annotations

import asyncio
import contextlib

import attrs

from common.errors import WharfError
from console.resources.access import AccessReviews
from console.resources.catalog import Catalog, Kind
from console.resources.kubeapi import METADATA_LIST, KubeApi
from console.resources.listing import collection

CONCURRENCY = 8


@attrs.frozen
class Count:
    resource_id: str
    count: int
    source: str  # complete | remainingItemCount | paged

    @property
    def exact(self) -> bool:
        return self.source != "remainingItemCount"


@attrs.frozen
class Failure:
    resource_id: str
    status: int
    reason: str


@attrs.frozen
class Counts:
    namespace: str | None
    counts: tuple[Count, ...]
    failed: tuple[Failure, ...]


async def count_all(
    api: KubeApi,
    catalog: Catalog,
    namespace: str | None,
    *,
    concurrency: int = CONCURRENCY,
    reviews: AccessReviews | None = None,
) -> Counts:
    gate = asyncio.Semaphore(concurrency)
    kinds = catalog.listable()

    async def one(kind: Kind) -> Count | Failure:
        async with gate:
            try:
                if reviews is None:
                    return await count_kind(api, kind, namespace)
                return await _count_scopes(api, kind, await reviews.scopes(api, kind, namespace))
            except WharfError as exc:
                return failure(kind.id, exc)

    results = await asyncio.gather(*(one(k) for k in kinds))
    return Counts(
        namespace=namespace,
        counts=tuple(r for r in results if isinstance(r, Count)),
        failed=tuple(r for r in results if isinstance(r, Failure)),
    )


async def _count_scopes(api: KubeApi, kind: Kind, scopes: list[str | None]) -> Count | Failure:
    if not scopes:
        return Failure(kind.id, 403, f"{kind.resource} may be listed in no namespace")
    parts = [await count_kind(api, kind, scope) for scope in scopes]
    if len(parts) == 1:
        return parts[0]
    exact = all(p.exact for p in parts)
    return Count(kind.id, sum(p.count for p in parts), "paged" if exact else "remainingItemCount")


def failure(resource_id: str, exc: WharfError) -> Failure:
    return Failure(resource_id=resource_id, status=exc.status, reason=exc.detail)


async def count_kind(api: KubeApi, kind: Kind, namespace: str | None) -> Count:
    path = collection(kind, namespace)
    page = await api.get(path, query=[("limit", "1")], accept=METADATA_LIST)
    items = len(page.get("items") or [])
    meta = page.get("metadata") or {}
    remaining = meta.get("remainingItemCount")
    if isinstance(remaining, int):
        return Count(kind.id, items + remaining, "remainingItemCount")
    if not meta.get("continue"):
        return Count(kind.id, items, "complete")
    total = 0
    pages = api.chunks(path, accept=METADATA_LIST)
    async with contextlib.aclosing(pages):
        async for chunk in pages:
            total += len(chunk.get("items") or [])
    return Count(kind.id, total, "paged")
