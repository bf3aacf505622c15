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
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar

import attrs

from chartsvc.clusters import ClusterTarget, ReleaseRef
from chartsvc.releases.compare import Comparison, PatchOp, compare, overlay
from chartsvc.releases.model import Release
from chartsvc.releases.reads import (
    DISCOVERY_TTL_S,
    ApiResource,
    ClusterReads,
    collection_path,
    object_path,
)
from chartsvc.releases.resources import manifest_objects

logger = logging.getLogger(__name__)

State = Literal["in-sync", "modified", "missing", "orphaned"]
STATES: tuple[State, ...] = ("in-sync", "modified", "missing", "orphaned")
MANAGED_BY = "app.kubernetes.io/managed-by"
RELEASE_NAME = "meta.helm.sh/release-name"
RELEASE_NAMESPACE = "meta.helm.sh/release-namespace"
CONCURRENCY = 16  # requests in flight per drift call, as for the resource statuses
DEFAULTS_TTL_S = 600.0  # defaults change with the cluster's version or admission, rarely
MEMO_ENTRIES = 4096  # manifests and dry-run answers kept, across clusters
INLINE_PARSE = 64 * 1024  # a larger manifest is parsed in a worker thread, off the event loop
COMPARISONS_KEPT = 8  # per object: its live copy changes with each write, the old ones are dead
_GENERATED = "wharf-drift-"  # the dry run's generateName; no object is ever stored under it
T = TypeVar("T")
_Key = tuple[str, str, str | None, str]  # apiVersion, kind, namespace, name
_Kind = tuple[str, str, str | None]  # apiVersion, kind, namespace
A = TypeVar("A")
B = TypeVar("B")


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


@attrs.frozen
class _Wanted:
    """One manifest object as Helm applied it (its ``digest`` names it in the memo), and where it
    lives (``resource`` None: the cluster does not serve its kind)."""

    declared: dict[str, Any]
    resource: ApiResource | None
    namespace: str | None
    digest: str

    @property
    def name(self) -> str:
        return str(self.declared["metadata"].get("name", ""))

    @property
    def api_version(self) -> str:
        return str(self.declared["apiVersion"])

    @property
    def kind(self) -> str:
        return str(self.declared["kind"])

    @property
    def key(self) -> _Key:
        return (self.api_version, self.kind, self.namespace, self.name)

    def collection(self) -> str:
        assert self.resource is not None
        return collection_path(self.api_version, self.resource, self.namespace or "")


@attrs.define
class _Expected:
    """The server's dry run of one manifest object (None: refused), when it was asked, and the
    comparisons already made against it, by the live object's uid and resourceVersion."""

    at: float
    obj: dict[str, Any] | None
    compared: dict[tuple[str, str], Comparison] = attrs.field(factory=dict)


@attrs.define
class DriftMemo:
    """What drift makes once and reuses, per cluster: a manifest's objects as Helm applied them
    (parsing YAML costs more than the rest of a drift), the server's dry run of each object, and
    the comparison with a live object that has not changed since (same uid and resourceVersion:
    the server changes the resourceVersion on every write). Bounded crudely: a full table is
    emptied, and refilling costs one parse or dry run per object."""

    _manifests: dict[tuple[str, ...], tuple[float, list[_Wanted]]] = attrs.field(factory=dict)
    _expected: dict[tuple[str, str], _Expected] = attrs.field(factory=dict)
    _kinds: dict[tuple[str, str, str], frozenset[_Kind]] = attrs.field(factory=dict)

    def kinds_of(self, ref: ReleaseRef) -> frozenset[_Kind]:
        """The kinds (apiVersion, kind, namespace) the release's drift listed last time."""
        return self._kinds.get(ref.key, frozenset())

    def remember(self, ref: ReleaseRef, kinds: set[_Kind]) -> None:
        known = frozenset(kinds)
        if self._kinds.get(ref.key) != known:
            _bound(self._kinds, MEMO_ENTRIES)[ref.key] = known

    async def wanted(
        self, reads: ClusterReads, target: ClusterTarget, release: Release, manifest: str
    ) -> list[_Wanted]:
        """The objects of ``manifest`` (one of ``release``'s revisions) as Helm applied them."""
        digest = hashlib.sha256(manifest.encode("utf-8")).hexdigest()
        key = (target.key, release.namespace, release.name, digest)
        kept = self._manifests.get(key)
        if kept is not None and time.monotonic() - kept[0] < DISCOVERY_TTL_S:
            return kept[1]
        parsed = (
            manifest_objects(manifest)
            if len(manifest) <= INLINE_PARSE
            else await asyncio.to_thread(manifest_objects, manifest)
        )
        objects = [await _wanted(reads, target, release, o) for o in parsed]
        _bound(self._manifests, MEMO_ENTRIES)[key] = (time.monotonic(), objects)
        return objects

    async def compare(
        self, reads: ClusterReads, target: ClusterTarget, wanted: _Wanted, live: dict[str, Any]
    ) -> Comparison:
        expected = await self._expected_of(reads, target, wanted)
        meta = live.get("metadata") or {}
        version = (str(meta.get("uid", "")), str(meta.get("resourceVersion", "")))
        done = expected.compared.get(version) if all(version) else None
        if done is not None:
            return done
        # Refused: every field not declared counts as the server's.
        server = expected.obj if expected.obj is not None else overlay(live, wanted.declared)
        done = compare(wanted.declared, server, live)
        if all(version):
            _bound(expected.compared, COMPARISONS_KEPT)[version] = done
        return done

    async def _expected_of(
        self, reads: ClusterReads, target: ClusterTarget, wanted: _Wanted
    ) -> _Expected:
        key = (target.key, wanted.digest)
        kept = self._expected.get(key)
        if kept is not None and time.monotonic() - kept.at < DEFAULTS_TTL_S:
            return kept
        declared = wanted.declared
        meta = {k: v for k, v in declared["metadata"].items() if k != "name"}
        probe = {**declared, "metadata": {**meta, "generateName": _GENERATED}}
        created = await reads.dry_run_create(target, wanted.collection(), probe)
        if created is None:
            logger.info("the dry run of %s %s was refused", wanted.kind, wanted.name)
        else:
            created["metadata"]["name"] = declared["metadata"]["name"]
            created["metadata"].pop("generateName", None)
        expected = _Expected(time.monotonic(), created)
        _bound(self._expected, MEMO_ENTRIES)[key] = expected
        return expected


async def release_drift(
    reads: ClusterReads,
    memo: DriftMemo,
    ref: ReleaseRef,
    revisions: Awaitable[Sequence[Release]],
) -> ReleaseDrift:
    """The drift of the latest of ``revisions`` (oldest first); the earlier ones name the kinds
    where orphans are looked for, beside the current manifest's. The kinds this release used last
    time are listed while the revisions are read: both wait on the cluster at once."""
    gate = asyncio.Semaphore(CONCURRENCY)
    remembered = memo.kinds_of(ref)
    history, marked = await _together(revisions, _marked(reads, ref, remembered, gate))
    release, target = history[-1], ref.target
    wanted = await memo.wanted(reads, target, release, release.manifest)
    kinds = {(w.api_version, w.kind, w.namespace) for w in wanted if w.resource is not None}
    for old in history[:-1]:
        for w in await memo.wanted(reads, target, release, old.manifest):
            if w.resource is not None:
                kinds.add((w.api_version, w.kind, w.namespace))
    if kinds - remembered:
        marked.update(await _marked(reads, ref, kinds - remembered, gate))
    memo.remember(ref, kinds)
    objects = await asyncio.gather(*(_judge(reads, memo, target, w, marked, gate) for w in wanted))
    named = {w.key for w in wanted}
    orphans = [
        DriftedObject(api_version, kind, name, namespace, "orphaned")
        for api_version, kind, namespace, name in sorted(
            (key for key in marked if key not in named and key[:3] in kinds), key=str
        )
    ]
    return ReleaseDrift(release.name, release.namespace, release.version, (*objects, *orphans))


async def _together(first: Awaitable[A], second: Awaitable[B]) -> tuple[A, B]:
    """Both awaited at once; when the first fails the second is cancelled and waited for, so
    nothing outlives the call."""
    task = asyncio.ensure_future(second)
    try:
        one = await first
    except BaseException:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    return one, await task


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
    declared = {**obj, "metadata": meta}
    text = json.dumps(declared, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return _Wanted(declared, resource, namespace, digest)


async def _marked(
    reads: ClusterReads, ref: ReleaseRef, kinds: Iterable[_Kind], gate: asyncio.Semaphore
) -> dict[_Key, dict[str, Any]]:
    """Every live object of ``kinds`` that carries the release's marks, by kind, namespace and
    name."""
    found: dict[_Key, dict[str, Any]] = {}
    target = ref.target
    selector = [("labelSelector", f"{MANAGED_BY}=Helm")]

    async def listed(api_version: str, kind: str, namespace: str | None) -> None:
        resource = await reads.resources(target, api_version, kind)
        if resource is None:
            return
        path = collection_path(api_version, resource, namespace or "")
        page = await _bounded(gate, reads.get(target, path, selector)) or {}
        for item in page.get("items") or []:
            notes = (item.get("metadata") or {}).get("annotations") or {}
            if notes.get(RELEASE_NAME) != ref.name:
                continue
            if notes.get(RELEASE_NAMESPACE) != ref.namespace:
                continue
            name = str(item["metadata"].get("name", ""))
            # a list's items carry no apiVersion and kind: the list says them once
            found[(api_version, kind, namespace, name)] = {
                "apiVersion": api_version,
                "kind": kind,
                **item,
            }

    await asyncio.gather(*(listed(*k) for k in sorted(kinds, key=str)))
    return found


async def _judge(
    reads: ClusterReads,
    memo: DriftMemo,
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
    live = marked.get(wanted.key)
    if live is None:
        live = await _fetch(reads, target, wanted, gate)
    if live is None:
        return verdict("missing", message="not found")
    result = await _bounded(gate, memo.compare(reads, target, wanted, live))
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


def _bound(table: dict[Any, Any], size: int) -> dict[Any, Any]:
    """``table``, emptied first when it holds ``size`` entries."""
    if len(table) >= size:
        table.clear()
    return table
