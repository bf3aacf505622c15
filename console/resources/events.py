"""Events, newest first, for a namespace or the whole cluster, optionally for one object.

The object is selected server-side (``involvedObject.kind``/``name`` field selectors); ``kind`` may
be a kind (``Pod``) or a resource id (``pods``). Time is the newest of ``series.lastObservedTime``,
``lastTimestamp``, ``eventTime``, ``firstTimestamp`` and the creation time, as kubectl sorts them.
"""

from __future__ import annotations

from typing import Any

from console.resources import rows
from console.resources.catalog import Catalog
from console.resources.kubeapi import KubeApi, path_of, selector_query


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
) -> list[dict[str, Any]]:
    fields = []
    if kind:
        fields.append(f"involvedObject.kind={kind_name(catalog, kind)}")
    if name:
        fields.append(f"involvedObject.name={name}")
    path = path_of("", "v1", "events", namespace=namespace)
    items = await api.list_all(path, query=selector_query(fields=",".join(fields) or None))
    items.sort(key=event_time, reverse=True)
    return [encode(e) for e in items]


def encode(event: dict[str, Any]) -> dict[str, Any]:
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
