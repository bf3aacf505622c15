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
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Any

from console.resources.catalog import Catalog, Kind, UnknownResource
from console.resources.flights import Flights
from console.resources.kubeapi import KubeApi

AGGREGATED = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)
# Removed kinds leave the catalog within this many seconds; a kind not in it re-discovers at once.
TTL_S = 10.0


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
    """Each cluster's catalog, kept ``ttl_s`` seconds (from the start of its discovery) per client
    object. A kind missing from the catalog re-discovers, as kubectl does: a CRD just installed is
    found at once. Discoveries go through :class:`Flights`: a cache fill joins a discovery under
    way (a burst of first requests, or the start-up warm-up and a request, costs one), and a
    caller that needs one begun after it asked shares the next."""

    def __init__(self, *, ttl_s: float = TTL_S) -> None:
        self.ttl_s = ttl_s
        # client -> (monotonic start of its last discovery, the catalog it found)
        self._entries: weakref.WeakKeyDictionary[Any, tuple[float, Catalog]] = (
            weakref.WeakKeyDictionary()
        )
        self._flights = Flights()

    async def get(self, api: KubeApi) -> Catalog:
        """A catalog whose discovery started within ``ttl_s``."""
        entry = self._entries.get(api.client)
        if entry is not None and entry[0] >= time.monotonic() - self.ttl_s:
            return entry[1]
        return await self._flights.run(api.client, self._discovery(api), join_running=True)

    async def fresh(self, api: KubeApi) -> Catalog:
        """A catalog from a discovery that started no earlier than this call."""
        return await self._flights.run(api.client, self._discovery(api))

    async def close(self) -> None:
        """Stop the discoveries under way (at shutdown, before the clients close)."""
        await self._flights.close()

    def _discovery(self, api: KubeApi) -> Callable[[], Awaitable[Catalog]]:
        async def discovery() -> Catalog:
            started = time.monotonic()
            # One catalog per cluster, shared by everyone: read with the console's own identity
            # (which kinds exist is what every authenticated user of a cluster may read anyway).
            catalog = await discover(api.own())
            kept = self._entries.get(api.client)
            if kept is None or kept[0] < started:
                self._entries[api.client] = (started, catalog)
            return catalog

        return discovery

    async def kind(self, api: KubeApi, resource_id: str) -> Kind:
        """The kind ``resource_id`` names; a miss re-discovers once (a CRD just installed)."""
        found = await self._look(api, lambda catalog: catalog.find(resource_id))
        if found is None:
            raise UnknownResource(resource_id)
        return found

    async def by_kind(self, api: KubeApi, api_version: str, kind: str) -> Kind | None:
        """The kind an ``apiVersion``/``kind`` pair names, re-discovering once on a miss."""
        return await self._look(api, lambda catalog: catalog.by_kind(api_version, kind))

    async def _look(self, api: KubeApi, lookup: Callable[[Catalog], Kind | None]) -> Kind | None:
        """``lookup`` in the catalog, then, on a miss, in one discovered after this call began."""
        found = lookup(await self.get(api))
        if found is None:
            found = lookup(await self.fresh(api))
        return found
