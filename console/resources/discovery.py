"""Discovery: which kinds a cluster serves, read with aggregated discovery (two requests) and
falling back to the legacy per-group-version documents on servers without it.

:class:`Catalogs` keeps each cluster's catalog for a few seconds, keyed by the cluster's client
object, so a cluster re-pointed by the registry gets a fresh one and a removed one is forgotten.
This module must not decide names or categories (``catalog`` and ``nav`` do).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from console.resources.catalog import Catalog, Kind, UnknownResource
from console.resources.kubeapi import KubeApi

AGGREGATED = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)
# New CRDs show up within this many seconds; a miss on an older catalog re-discovers at once.
TTL_S = 10.0
MISS_REFRESH_S = 1.0


async def discover(api: KubeApi) -> Catalog:
    core, groups = await asyncio.gather(
        api.get("/api", accept=AGGREGATED), api.get("/apis", accept=AGGREGATED)
    )
    if _aggregated(core) and _aggregated(groups):
        kinds, stale = _from_aggregated([*core["items"], *groups["items"]])
        return Catalog.build(kinds, stale_groups=stale)
    return await _legacy(api, core, groups)


def _aggregated(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == "APIGroupDiscoveryList"


def _from_aggregated(items: Iterable[Mapping[str, Any]]) -> tuple[list[Kind], list[str]]:
    kinds: list[Kind] = []
    stale: list[str] = []
    for item in items:
        group = (item.get("metadata") or {}).get("name") or ""
        for version in item.get("versions") or []:
            if version.get("freshness") == "Stale":
                stale.append(group or "core")
            for entry in version.get("resources") or []:
                kinds.append(_kind(group, version.get("version", ""), entry))
    return kinds, stale


def _kind(group: str, version: str, entry: Mapping[str, Any]) -> Kind:
    return Kind(
        id=entry.get("resource", ""),
        group=group,
        version=version,
        resource=entry.get("resource", ""),
        kind=(entry.get("responseKind") or {}).get("kind", ""),
        namespaced=entry.get("scope") == "Namespaced",
        verbs=frozenset(entry.get("verbs") or ()),
        short_names=tuple(entry.get("shortNames") or ()),
        subresources=frozenset(s.get("subresource", "") for s in entry.get("subresources") or []),
    )


async def _legacy(api: KubeApi, core: Any, groups: Any) -> Catalog:
    wanted = [("", v) for v in (core.get("versions") or [])[:1]]
    for group in groups.get("groups") or []:
        preferred = (group.get("preferredVersion") or {}).get("version")
        if preferred:
            wanted.append((group.get("name", ""), preferred))
    docs = await asyncio.gather(
        *(api.get(f"/apis/{g}/{v}" if g else f"/api/{v}") for g, v in wanted),
        return_exceptions=True,
    )
    kinds: list[Kind] = []
    stale: list[str] = []
    for (group, version), doc in zip(wanted, docs, strict=True):
        if isinstance(doc, BaseException):
            stale.append(group or "core")
            continue
        kinds.extend(_legacy_kinds(group, version, doc.get("resources") or []))
    return Catalog.build(kinds, stale_groups=stale)


def _legacy_kinds(group: str, version: str, entries: list[Mapping[str, Any]]) -> Iterator[Kind]:
    subs: dict[str, set[str]] = {}
    for entry in entries:
        name = entry.get("name", "")
        if "/" in name:
            parent, _, sub = name.partition("/")
            subs.setdefault(parent, set()).add(sub)
    for entry in entries:
        name = entry.get("name", "")
        if "/" in name:
            continue
        yield Kind(
            id=name,
            group=group,
            version=version,
            resource=name,
            kind=entry.get("kind", ""),
            namespaced=bool(entry.get("namespaced")),
            verbs=frozenset(entry.get("verbs") or ()),
            short_names=tuple(entry.get("shortNames") or ()),
            subresources=frozenset(subs.get(name, ())),
        )


class Catalogs:
    """Each cluster's catalog, kept ``ttl_s`` seconds per client object."""

    def __init__(self, *, ttl_s: float = TTL_S) -> None:
        self.ttl_s = ttl_s
        self._entries: weakref.WeakKeyDictionary[Any, tuple[float, Catalog]] = (
            weakref.WeakKeyDictionary()
        )

    async def get(self, api: KubeApi, *, max_age_s: float | None = None) -> Catalog:
        limit = self.ttl_s if max_age_s is None else max_age_s
        entry = self._entries.get(api.client)
        now = time.monotonic()
        if entry is not None and now - entry[0] < limit:
            return entry[1]
        catalog = await discover(api)
        self._entries[api.client] = (time.monotonic(), catalog)
        return catalog

    async def kind(self, api: KubeApi, resource_id: str) -> Kind:
        """The kind ``resource_id`` names; a miss re-discovers once (a CRD just installed)."""
        catalog = await self.get(api)
        found = catalog.find(resource_id)
        if found is None:
            catalog = await self.get(api, max_age_s=MISS_REFRESH_S)
            found = catalog.find(resource_id)
        if found is None:
            raise UnknownResource(resource_id)
        return found

    async def by_kind(self, api: KubeApi, api_version: str, kind: str) -> Kind | None:
        """The kind an ``apiVersion``/``kind`` pair names, re-discovering once on a miss."""
        found = (await self.get(api)).by_kind(api_version, kind)
        if found is None:
            found = (await self.get(api, max_age_s=MISS_REFRESH_S)).by_kind(api_version, kind)
        return found
