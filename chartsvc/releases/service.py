"""Release operations shared by every door (HTTP routes, MCP tools, the console): Helm's lifecycle
and reads, on a cluster given by each call.

Writes go through Helm (``chartsvc.helm``), so the release state is Helm's own and the ``helm`` CLI
on the same cluster sees exactly what the service did, and the other way round. Writes to one release
(same cluster, namespace and name) run one at a time, as Helm requires; different releases run
concurrently. Reads take Helm's stored records (``chartsvc.releases.reads``) and, for resources, the
live objects. Every operation names its cluster explicitly (a :class:`ClusterTarget`: kubeconfig
and context), and one on a release names it as a :class:`ReleaseRef` (that cluster, namespace and
name); which cluster is the caller's business. Charts come from a :class:`ChartSource`. This
module reads no settings and knows nothing of HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Hashable, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, Protocol

import attrs

from chartsvc.clusters import ClusterTarget, ReleaseRef
from chartsvc.helm import (
    Installed,
    ReleaseEngine,
    ReleaseNotFound,
    RenderTooLarge,
    WriteOptions,
)
from chartsvc.releases import preview, resources, testhooks
from chartsvc.releases.clients import KubeClients
from chartsvc.releases.drift import DriftMemo, ReleaseDrift, release_drift
from chartsvc.releases.model import (
    InstallRequest,
    Release,
    ResourceStatus,
    TestResult,
    UpgradeRequest,
    check_namespace,
    check_release,
    check_release_name,
)
from chartsvc.releases.reads import ClusterReads, StoredRevision
from common.errors import ValidationFailed


class ChartSource(Protocol):
    """Where release writes get their charts: by reference, or an upload checked against limits."""

    async def archive(self, ref: str, version: str | None) -> bytes:
        """The archive ``ref`` (``<repo>/<chart>`` or ``oci://...``) names, checked."""
        ...

    async def checked(self, upload: bytes) -> bytes:
        """``upload`` once it passes the archive limits."""
        ...


@attrs.define
class KeyedLocks:
    """An asyncio lock per key, dropped once nobody holds or waits for it."""

    _locks: dict[Hashable, tuple[asyncio.Lock, int]] = attrs.field(factory=dict)

    @asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[None]:
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def held(self, key: Hashable) -> bool:
        """Someone holds or waits for the lock of ``key``."""
        return key in self._locks


@attrs.define
class ReleaseService:
    """Releases on any cluster: ``engine`` writes through Helm, ``reads`` reads Helm's records and
    the live objects, ``charts`` supplies archives. :meth:`close` closes the cluster clients."""

    engine: ReleaseEngine
    charts: ChartSource
    #: Cluster clients write certificates under the same private folder as the Helm configs.
    reads: ClusterReads = attrs.field(
        default=attrs.Factory(
            lambda self: ClusterReads(KubeClients(self.engine.configs.credentials_dir)),
            takes_self=True,
        )
    )
    _locks: KeyedLocks = attrs.field(factory=KeyedLocks)
    _drift: DriftMemo = attrs.field(factory=DriftMemo)

    async def close(self) -> None:
        await self.reads.close()

    async def stuck(self, target: ClusterTarget) -> list[Release]:
        """Releases on ``target`` left pending (``pending-install``, ``-upgrade``, ``-rollback``)
        that this service is not writing now: their writer was stopped mid-write (a kill -9), and
        Helm leaves them so until a rollback or an uninstall. It reads every release: health
        reads it from a background refresh (``chartsvc.releases.stuck``), never per probe, and
        unpacks only the records whose Secret's ``status`` label says pending."""
        pending = [
            rev
            for rev in (await self._latest(target, None)).values()
            if rev.status.startswith("pending-")
            and not self._locks.held(ReleaseRef(target, rev.namespace, rev.name).key)
        ]
        return [Release.from_record(await rev.decode()) for rev in pending]

    # --- reads ---------------------------------------------------------------------------------

    async def list_releases(self, target: ClusterTarget, namespace: str | None) -> list[Release]:
        """The latest revision of every release, whatever its status, by name (``helm list -a``,
        and the SDK's list): a failed, pending or kept-uninstalled release still holds its name.
        ``namespace`` None lists every namespace (``helm list -A``), by namespace, then name."""
        if namespace is not None:
            check_namespace(namespace)
        latest = await self._latest(target, namespace)
        return [Release.from_record(await latest[key].decode()) for key in sorted(latest)]

    async def _latest(
        self, target: ClusterTarget, namespace: str | None
    ) -> dict[tuple[str, str], StoredRevision]:
        """The latest stored revision of each release by (namespace, name), still packed."""
        latest: dict[tuple[str, str], StoredRevision] = {}
        for rev in await self.reads.revisions(target, namespace):
            key = (rev.namespace, rev.name)
            if key not in latest or rev.version > latest[key].version:
                latest[key] = rev
        return latest

    async def status(self, release: ReleaseRef) -> Release:
        return (await self.history(release, latest_only=True))[-1]

    async def history(self, release: ReleaseRef, *, latest_only: bool = False) -> list[Release]:
        """Every stored revision, oldest first (``helm history``); 404 when there is none."""
        revisions = await self._stored(release)
        chosen = revisions[-1:] if latest_only else revisions
        return [Release.from_record(await r.decode()) for r in chosen]

    async def _stored(self, release: ReleaseRef) -> list[StoredRevision]:
        """The release's stored revisions as their Secrets' labels describe them, oldest first,
        none decoded yet; 404 when there is none."""
        check_release(release)
        revisions = sorted(
            await self.reads.revisions(release.target, release.namespace, release.name),
            key=lambda r: r.version,
        )
        if not revisions:
            raise ReleaseNotFound(release.namespace, release.name)
        return revisions

    async def values(self, release: ReleaseRef, *, all_values: bool) -> Mapping[str, Any]:
        """The user's values, or (``all_values``) those coalesced over the chart's defaults."""
        if not all_values:
            return (await self.status(release)).config
        check_release(release)
        return await self.engine.computed_values(release)

    async def resources(self, release: ReleaseRef) -> list[ResourceStatus]:
        current = await self.status(release)
        return await resources.statuses(self.reads, release.target, current)

    async def drift(self, release: ReleaseRef) -> ReleaseDrift:
        """How the live objects differ from what Helm applied; earlier revisions' kinds are
        searched for orphans too."""
        return await release_drift(self.reads, self._drift, release, self.history(release))

    # --- writes --------------------------------------------------------------------------------

    async def install(
        self, target: ClusterTarget, request: InstallRequest, archive: bytes | None = None
    ) -> Release:
        """``helm install`` of ``archive`` (an upload) or of the chart ``request`` names."""
        release = ReleaseRef(target, request.namespace, request.release_name)
        _check_install(request, upload=archive is not None)
        check_namespace(release.namespace)
        data = await self._chart(request.chart_ref, request.version, archive)
        async with self._locks.hold(release.key):
            done = await self.engine.write(
                "install", release, data, values=dict(request.values), options=request.options
            )
        return await self._result(release, done, request.values, dry_run=request.options.dry_run)

    async def upgrade(
        self, release: ReleaseRef, request: UpgradeRequest, archive: bytes | None = None
    ) -> Release:
        data = await self._upgrade_chart(release, request, archive)
        values = dict(request.values) if request.values is not None else None
        async with self._locks.hold(release.key):
            rendered = await self._upgrade_values(release, values, request.options)
            done = await self.engine.write(
                "upgrade",
                release,
                data,
                values=values,
                options=request.options,
                render_values=rendered,
            )
        return await self._result(release, done, values or {}, dry_run=request.options.dry_run)

    async def _upgrade_values(
        self, release: ReleaseRef, given: dict[str, Any] | None, options: WriteOptions
    ) -> dict[str, Any] | None:
        """The user values Helm will render an upgrade with, when they are not ``given`` alone
        (None then): Helm merges the release's stored values in when the upgrade reuses them
        (``reuseValues``, ``resetThenReuseValues``, or no values and no ``resetValues``). With
        ``reuseValues`` Helm also puts the release's coalesced values in place of the new
        chart's defaults; they are merged in here under the user's, so every value Helm sees is
        the same here (a key only the new chart's defaults add is seen here too)."""
        reuse = options.reuse_values or options.reset_then_reuse_values
        if options.reset_values or not (reuse or not given):
            return None
        revisions = await self._stored(release)
        # Helm reuses the values of the deployed revision (the latest, if none is deployed): the
        # Secrets' status labels say which, so only that record is unpacked
        chosen = next((r for r in reversed(revisions) if r.status == "deployed"), revisions[-1])
        current = Release.from_record(await chosen.decode())
        merged = preview.next_values(current.config, given, options)
        if options.reuse_values:
            merged = preview.coalesce(merged, await self.engine.computed_values(release))
        return merged

    async def preview_upgrade(
        self, release: ReleaseRef, request: UpgradeRequest, archive: bytes | None = None
    ) -> preview.UpgradePreview:
        """What ``upgrade`` would change, from Helm's server-side dry run of it (nothing stored)."""
        data = await self._upgrade_chart(release, request, archive)
        current = await self.status(release)
        was = await self.engine.computed_values(release)
        given = dict(request.values) if request.values is not None else None
        options = attrs.evolve(request.options, dry_run_mode="server", wait="none")
        rendered = await self._upgrade_values(release, given, options)
        done = await self.engine.write(
            "upgrade", release, data, values=given, options=options, render_values=rendered
        )
        values = preview.next_values(current.config, given, request.options)
        computed = await self.engine.coalesced_values(data, values)
        objects, unchanged = preview.diff_manifests(
            current.manifest, str(done.summary.get("manifest") or ""), release.namespace
        )
        return preview.UpgradePreview(
            release=Release.from_summary(
                done.summary, chart=done.chart, config=values, description="Upgrade preview"
            ),
            previous_values=current.config,
            next_values=values,
            computed=computed,
            values_diff=preview.unified(
                preview.values_yaml(current.config), preview.values_yaml(values), "values.yaml"
            ),
            computed_diff=preview.unified(
                preview.values_yaml(was), preview.values_yaml(computed), "computed-values.yaml"
            ),
            objects=tuple(objects),
            unchanged=unchanged,
        )

    async def uninstall(self, release: ReleaseRef) -> tuple[Release, str]:
        """``helm uninstall``: the release as it was, marked uninstalled, and Helm's info text."""
        async with self._locks.hold(release.key):
            current = await self.status(release)
            info = await self.engine.uninstall(release)
        return current.uninstalled(_now()), info

    async def rollback(
        self, release: ReleaseRef, revision: int | None, *, dry_run: bool = False
    ) -> Release:
        """``helm rollback`` to ``revision`` (None: the previous one); returns the new revision.

        ``dry_run``: Helm checks the rollback against the server and stores nothing; the answer
        is the revision that would be restored, described as a dry run."""
        check_release(release)
        async with self._locks.hold(release.key):
            await self._check_rollback_target(release, revision)
            await self.engine.rollback(release, revision or None, dry_run=dry_run)
            if not dry_run:
                return await self.status(release)
            revisions = await self.history(release)
        restored = revisions[-2] if not revision and len(revisions) > 1 else None
        restored = restored or next((r for r in revisions if r.version == revision), revisions[-1])
        info = {**restored.info, "description": f"Dry run complete: rollback to {restored.version}"}
        return attrs.evolve(restored, info=info)

    async def _check_rollback_target(self, release: ReleaseRef, revision: int | None) -> None:
        """Refuse a rollback to a revision whose stored manifests pass the render output bound.

        A rollback renders nothing (Helm applies the target revision's stored manifest and
        hooks again), so no template runs and the render time limit has nothing to stop; but
        a revision written around this service (the helm CLI, a hand-made record) may hold
        manifests no render here would have let through, and Helm would load and apply them
        whole. A missing target is left to Helm to name."""
        if not revision:
            revision = (await self.status(release)).version - 1
        stored = await self.reads.revision(release, revision)
        if stored is None:
            return
        target = Release.from_record(await stored.decode())
        size = len(target.manifest.encode()) + sum(
            len(str(hook.get("manifest") or "").encode()) for hook in target.hooks
        )
        limit = self.engine.renders.limits.max_output
        if size > limit:
            raise RenderTooLarge(
                f"revision {revision}'s stored manifests ({size} bytes) are larger than the "
                f"limit of {limit} bytes (chartsvc.charts.max-render-output)"
            )

    async def test(self, release: ReleaseRef, *, timeout: int) -> list[TestResult]:
        """``helm test --logs``: each test hook's phase and logs; a failing test is a result."""
        check_release(release)
        async with self._locks.hold(release.key):
            run = await self.engine.test(release, timeout=timeout)
            current = await self.status(release)
        return await testhooks.collect(self.reads, release.target, current, run)

    # --- helpers -------------------------------------------------------------------------------

    async def _upgrade_chart(
        self, release: ReleaseRef, request: UpgradeRequest, archive: bytes | None
    ) -> bytes:
        check_release(release)
        if archive is None and not request.chart_ref:
            raise _missing("chartRef")
        return await self._chart(request.chart_ref, request.version, archive)

    async def _chart(self, ref: str | None, version: str | None, upload: bytes | None) -> bytes:
        if upload is not None:
            return await self.charts.checked(upload)
        assert ref is not None
        return await self.charts.archive(ref, version)

    async def _result(
        self, release: ReleaseRef, done: Installed, values: Mapping[str, Any], *, dry_run: bool
    ) -> Release:
        """The revision Helm stored (as read back), or for a dry run the one it computed."""
        summary = done.summary
        if not dry_run:
            stored = await self.reads.revision(release, int(summary["revision"]))
            if stored is not None:
                return Release.from_record(await stored.decode())
        description = "Dry run complete" if dry_run else ""
        return Release.from_summary(
            summary, chart=done.chart, config=values, description=description
        )


def _check_install(request: InstallRequest, *, upload: bool) -> None:
    if not request.release_name:
        raise _missing("releaseName")
    check_release_name(request.release_name)
    if not upload and not request.chart_ref:
        raise _missing("chartRef")


def _missing(field: str) -> ValidationFailed:
    return ValidationFailed([{"in": "body", "field": field, "message": "is required"}])


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
