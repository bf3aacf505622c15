"""Drift: is what runs still what Helm applied? Each object of a release's current manifest, its live
copy, and the verdict (``in-sync``, ``modified``, ``missing``), plus the ``orphaned`` objects that
carry the release's marks but that its manifest no longer names.

Live objects come from one labelled list per kind and namespace (Helm marks every object it applies
with ``app.kubernetes.io/managed-by: Helm`` and the ``meta.helm.sh/release-*`` annotations), which
also finds the orphans; an object missing from those lists (its label removed, or gone) is fetched by
name. The server's defaults come from a ``dryRun=All`` create of each manifest object under a
generated name (creating under its own name would conflict with the live object), kept per cluster
for a while: they depend on the object and the cluster's version, not on the live copy
(:class:`ServerDefaults`). Requests run concurrently, a bounded number at a time. The comparison is
``chartsvc.releases.compare``. Nothing here writes to the cluster or knows HTTP.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Iterable, Mapping
from typing import Any, Literal, TypeVar

import attrs

from chartsvc.clusters import ClusterTarget
from chartsvc.releases.compare import PatchOp, compare, overlay
from chartsvc.releases.model import Release
from chartsvc.releases.reads import ApiResource, ClusterReads, collection_path, object_path
from chartsvc.releases.resources import manifest_objects

logger = logging.getLogger(__name__)

State = Literal["in-sync", "modified", "missing", "orphaned"]
STATES: tuple[State, ...] = ("in-sync", "modified", "missing", "orphaned")
MANAGED_BY = "app.kubernetes.io/managed-by"
RELEASE_NAME = "meta.helm.sh/release-name"
RELEASE_NAMESPACE = "meta.helm.sh/release-namespace"
CONCURRENCY = 16  # requests in flight per drift call, as for the resource statuses
DEFAULTS_TTL_S = 600.0  # defaults change with the cluster's version or admission, rarely
DEFAULTS_CACHED = 4096  # dry-run answers kept, across clusters
_GENERATED = "wharf-drift-"  # the dry run's generateName; no object is ever stored under it
T = TypeVar("T")
_Key = tuple[str, str, str | None, str]  # apiVersion, kind, namespace, name


@attrs.frozen
class DriftedObject:
    api_version: str
    kind: str
    name: str
    namespace: str | None
    state: State
    message: str = ""
    patch: tuple[PatchOp, ...] = ()
    diff: str = ""


@attrs.frozen
class ReleaseDrift:
    name: str
    namespace: str
    revision: int
    objects: tuple[DriftedObject, ...]

    @property
    def summary(self) -> Mapping[State, int]:
        counts = Counter(o.state for o in self.objects)
        return {state: counts.get(state, 0) for state in STATES}


@attrs.define
class ServerDefaults:
    """The server's dry-run create of manifest objects, kept per cluster and object."""

    _kept: dict[tuple[str, str], tuple[float, dict[str, Any] | None]] = attrs.field(factory=dict)

    async def expected(
        self, reads: ClusterReads, target: ClusterTarget, collection: str, declared: dict[str, Any]
    ) -> dict[str, Any] | None:
        """``declared`` as the server would store it; None when the server refuses the dry run."""
        key = (target.key, _digest(collection, declared))
        kept = self._kept.get(key)
        if kept is not None and time.monotonic() - kept[0] < DEFAULTS_TTL_S:
            return kept[1]
        meta = {k: v for k, v in declared["metadata"].items() if k != "name"}
        probe = {**declared, "metadata": {**meta, "generateName": _GENERATED}}
        created = await reads.dry_run_create(target, collection, probe)
        if created is None:
            logger.info("the dry run of %s %s was refused", declared["kind"], collection)
        else:
            created["metadata"]["name"] = declared["metadata"]["name"]
            created["metadata"].pop("generateName", None)
        if len(self._kept) >= DEFAULTS_CACHED:
            self._kept.clear()  # a crude bound: refilling costs one dry run per object
        self._kept[key] = (time.monotonic(), created)
        return created


@attrs.frozen
class _Wanted:
    """One manifest object: as Helm applied it, and where it lives (path None: kind not served)."""

    declared: dict[str, Any]
    resource: ApiResource | None
    namespace: str | None

    @property
    def name(self) -> str:
        return str(self.declared["metadata"].get("name", ""))

    @property
    def api_version(self) -> str:
        return str(self.declared["apiVersion"])

    @property
    def kind(self) -> str:
        return str(self.declared["kind"])

    def collection(self) -> str:
        assert self.resource is not None
        return collection_path(self.api_version, self.resource, self.namespace or "")


async def release_drift(
    reads: ClusterReads,
    defaults: ServerDefaults,
    target: ClusterTarget,
    release: Release,
    earlier: Iterable[Release] = (),
) -> ReleaseDrift:
    """The drift of ``release`` (its latest revision); ``earlier`` revisions name the kinds where
    orphans are looked for, beside the current manifest's."""
    gate = asyncio.Semaphore(CONCURRENCY)
    wanted = [
        await _wanted(reads, target, release, obj) for obj in manifest_objects(release.manifest)
    ]
    kinds = {(w.api_version, w.kind, w.namespace) for w in wanted if w.resource is not None}
    for old in earlier:
        for obj in manifest_objects(old.manifest):
            w = await _wanted(reads, target, release, obj)
            if w.resource is not None:
                kinds.add((w.api_version, w.kind, w.namespace))
    marked = await _marked(reads, target, release, sorted(kinds, key=str), gate)
    objects = await asyncio.gather(
        *(_judge(reads, defaults, target, w, marked, gate) for w in wanted)
    )
    named = {(w.api_version, w.kind, w.namespace, w.name) for w in wanted}
    orphans = [
        DriftedObject(api_version, kind, name, namespace, "orphaned")
        for api_version, kind, namespace, name in sorted(marked, key=str)
        if (api_version, kind, namespace, name) not in named
    ]
    return ReleaseDrift(release.name, release.namespace, release.version, (*objects, *orphans))


async def _wanted(
    reads: ClusterReads, target: ClusterTarget, release: Release, obj: dict[str, Any]
) -> _Wanted:
    """``obj`` with the marks Helm adds when it applies it, and where it lives."""
    resource = await reads.resources(target, str(obj["apiVersion"]), str(obj["kind"]))
    meta = dict(obj.get("metadata") or {})
    namespaced = resource is None or resource.namespaced
    namespace = (meta.get("namespace") or release.namespace) if namespaced else None
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {**(meta.get("labels") or {}), MANAGED_BY: "Helm"}
    meta["annotations"] = {
        **(meta.get("annotations") or {}),
        RELEASE_NAME: release.name,
        RELEASE_NAMESPACE: release.namespace,
    }
    return _Wanted({**obj, "metadata": meta}, resource, namespace)


async def _marked(
    reads: ClusterReads,
    target: ClusterTarget,
    release: Release,
    kinds: list[tuple[str, str, str | None]],
    gate: asyncio.Semaphore,
) -> dict[_Key, dict[str, Any]]:
    """Every live object of ``kinds`` that carries the release's marks, by kind, namespace and
    name."""
    found: dict[_Key, dict[str, Any]] = {}
    selector = [("labelSelector", f"{MANAGED_BY}=Helm")]

    async def listed(api_version: str, kind: str, namespace: str | None) -> None:
        resource = await reads.resources(target, api_version, kind)
        if resource is None:
            return
        path = collection_path(api_version, resource, namespace or "")
        page = await _bounded(gate, reads.get(target, path, selector)) or {}
        for item in page.get("items") or []:
            notes = (item.get("metadata") or {}).get("annotations") or {}
            if notes.get(RELEASE_NAME) != release.name:
                continue
            if notes.get(RELEASE_NAMESPACE) != release.namespace:
                continue
            name = str(item["metadata"].get("name", ""))
            # a list's items carry no apiVersion and kind: the list says them once
            found[(api_version, kind, namespace, name)] = {
                "apiVersion": api_version,
                "kind": kind,
                **item,
            }

    await asyncio.gather(*(listed(*k) for k in kinds))
    return found


async def _judge(
    reads: ClusterReads,
    defaults: ServerDefaults,
    target: ClusterTarget,
    wanted: _Wanted,
    marked: dict[_Key, dict[str, Any]],
    gate: asyncio.Semaphore,
) -> DriftedObject:
    def verdict(state: State, **more: Any) -> DriftedObject:
        return DriftedObject(
            wanted.api_version, wanted.kind, wanted.name, wanted.namespace, state, **more
        )

    if wanted.resource is None:
        return verdict("missing", message="the cluster does not serve this kind")
    live = marked.get((wanted.api_version, wanted.kind, wanted.namespace, wanted.name))
    if live is None:
        live = await _fetch(reads, target, wanted, gate)
    if live is None:
        return verdict("missing", message="not found")
    expected = await _bounded(
        gate, defaults.expected(reads, target, wanted.collection(), wanted.declared)
    )
    if expected is None:  # the server would not say: every field not declared is its own
        expected = overlay(live, wanted.declared)
    result = compare(wanted.declared, expected, live)
    if result.in_sync:
        return verdict("in-sync")
    label = f"{wanted.kind}/{wanted.name}.yaml"
    return verdict("modified", patch=result.patch, diff=result.diff(label))


async def _fetch(
    reads: ClusterReads, target: ClusterTarget, wanted: _Wanted, gate: asyncio.Semaphore
) -> dict[str, Any] | None:
    assert wanted.resource is not None
    path = object_path(wanted.api_version, wanted.resource, wanted.namespace or "", wanted.name)
    return await _bounded(gate, reads.get(target, path))


async def _bounded(gate: asyncio.Semaphore, work: Awaitable[T]) -> T:
    async with gate:
        return await work


def _digest(collection: str, declared: dict[str, Any]) -> str:
    text = json.dumps([collection, declared], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
