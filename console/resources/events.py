"""Events, newest first, for a namespace or the whole cluster, optionally for one object.

The object is selected server-side (``involvedObject.kind``/``name`` field selectors); ``kind`` may
be a kind (``Pod``) or a resource id (``pods``). Time is the newest of ``series.lastObservedTime``,
``lastTimestamp``, ``eventTime``, ``firstTimestamp`` and the creation time, as kubectl sorts them.
A busy cluster holds tens of thousands of events: they are read in chunks and only the newest
``limit`` are kept, so memory does not grow with the cluster's event count. The events are the
cluster's own objects; ``console.http.encode.browse.encode_event`` shapes them for the API.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
from typing import Any

from console.resources.catalog import Catalog
from console.resources.kubeapi import KubeApi, path_of, selector_query

DEFAULT_LIMIT = 500


def event_time(event: dict[str, Any]) -> str:
    series = event.get("series") or {}
    return str(
        series.get("lastObservedTime")
        or event.get("lastTimestamp")
        or event.get("eventTime")
        or event.get("firstTimestamp")
        or (event.get("metadata") or {}).get("creationTimestamp")
        or ""
    )


def kind_name(catalog: Catalog, kind: str) -> str:
    found = catalog.find(kind)
    return found.kind if found is not None else kind


async def list_events(
    api: KubeApi,
    catalog: Catalog,
    *,
    namespace: str | None = None,
    kind: str | None = None,
    name: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[dict[str, Any]]:
    fields = []
    if kind:
        fields.append(f"involvedObject.kind={kind_name(catalog, kind)}")
    if name:
        fields.append(f"involvedObject.name={name}")
    path = path_of("", "v1", "events", namespace=namespace)
    newest: list[tuple[str, int, dict[str, Any]]] = []  # a min-heap: the oldest kept on top
    order = itertools.count()
    pages = api.chunks(path, query=selector_query(fields=",".join(fields) or None))
    async with contextlib.aclosing(pages):
        async for page in pages:
            for event in page.get("items") or []:
                entry = (event_time(event), next(order), event)
                if len(newest) < limit:
                    heapq.heappush(newest, entry)
                elif entry[:2] > newest[0][:2]:
                    heapq.heapreplace(newest, entry)
    return [e for _, _, e in sorted(newest, key=lambda n: n[:2], reverse=True)]
