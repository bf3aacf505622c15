"""Reads for one detail view: each list or object fetched once, missing objects reported as such.

A relation names what it points to even when that is gone (``missing: true``): a dead reference is
exactly what a detail view should show. Kinds the cluster does not serve resolve to nothing.
"""

from __future__ import annotations

from typing import Any

from common.errors import UpstreamStatus
from console.resources import rows
from console.resources.catalog import Catalog, Kind
from console.resources.kubeapi import KubeApi, selector_query
from console.resources.listing import collection, object_path

Obj = dict[str, Any]


class Lookup:
    def __init__(self, api: KubeApi, catalog: Catalog) -> None:
        self.api = api
        self.catalog = catalog
        self._lists: dict[tuple[str, str | None, str | None, str | None], list[Obj]] = {}

    async def list(
        self,
        resource_id: str,
        namespace: str | None,
        *,
        labels: str | None = None,
        fields: str | None = None,
    ) -> list[Obj]:
        kind = self.catalog.find(resource_id)
        if kind is None:
            return []
        key = (kind.id, namespace, labels, fields)
        if key not in self._lists:
            query = selector_query(labels=labels, fields=fields)
            self._lists[key] = await self.api.list_all(collection(kind, namespace), query=query)
        return self._lists[key]

    async def get(self, kind: Kind, namespace: str | None, name: str) -> Obj | None:
        try:
            found = await self.api.get(object_path(kind, namespace, name))
        except UpstreamStatus as exc:
            if exc.status in (403, 404):
                return None
            raise
        return found if isinstance(found, dict) else None

    def ref(self, kind: Kind | str, obj: Obj) -> Obj:
        """A relation entry for an object we hold."""
        found = self.catalog.find(kind) if isinstance(kind, str) else kind
        meta = obj.get("metadata") or {}
        kind_name = found.kind if found is not None else str(obj.get("kind", ""))
        return {
            "resourceId": found.id if found is not None else None,
            "kind": kind_name,
            "namespace": meta.get("namespace") or None,
            "name": meta.get("name", ""),
            "status": rows.status_of(kind_name, obj),
            "missing": False,
        }

    async def resolve(self, resource_id: str, namespace: str | None, name: str) -> Obj | None:
        """A relation entry for an object we know only by name; None if the kind is not served."""
        kind = self.catalog.find(resource_id)
        if kind is None:
            return None
        obj = await self.get(kind, namespace, name)
        if obj is None:
            return {
                "resourceId": kind.id,
                "kind": kind.kind,
                "namespace": namespace if kind.namespaced else None,
                "name": name,
                "status": None,
                "missing": True,
            }
        return self.ref(kind, obj)
