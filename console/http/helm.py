"""Helm per cluster: releases (list, one, history, resources, values, manifest, install, upgrade,
rollback, uninstall) and the chart catalogue, on chartsvc's release code and Helm engine.

Each request resolves its cluster once (``clusterId``; an unknown one is 404 ``unknown-cluster``),
then calls one :class:`~chartsvc.releases.ReleaseService` operation inside ``helm_failures``.
Writes are audited (``helm.<action>`` on ``<namespace>/<name>``) unless they are a dry run. The
desk (chart library, release service, values library) opens in this group's cleanup context.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import TypeVar

from aiohttp import web

from chartsvc.encoders import (
    ReleaseBody,
    ReleaseSummary,
    encode_release,
    encode_resource,
    encode_summary,
    encode_uninstalled,
)
from chartsvc.metrics import helm_observer
from chartsvc.releases import (
    ClusterTarget,
    InstallRequest,
    Release,
    ReleaseRef,
    ReleaseService,
    StuckReleases,
    UpgradeRequest,
)
from chartsvc.releases.model import write_options
from common import yamlio
from common.openapi import validated
from console.audit import audited
from console.auth import current_user
from console.helm.desk import HelmDesk, helm_failures, open_desk
from console.http.clusterapi import acting_as
from console.http.encode import YAML_TYPE
from console.http.encode.helm import encode_catalogue_entry
from console.keys import CLUSTERS, HELM, HELM_STUCK, METRICS, OUTBOUND_ALLOW, SETTINGS

routes = web.RouteTableDef()
RELEASES = "/clusters/{clusterId}/helm/releases"
RELEASE = RELEASES + "/{namespace}/{name}"
T = TypeVar("T")
#: A read of one release: ``(releases, release)``.
Read = Callable[[ReleaseService, ReleaseRef], Awaitable[T]]


def setup(app: web.Application) -> None:
    app.cleanup_ctx.append(_desk)


async def _desk(app: web.Application) -> AsyncIterator[None]:
    observer = helm_observer(app[METRICS], "console_helm_operation_seconds")
    allow = app.get(OUTBOUND_ALLOW, ())
    async with open_desk(app[SETTINGS], address_allow=allow, helm_observer=observer) as desk:
        app[HELM] = desk
        # every registered cluster, as the console itself reaches it
        registered = lambda: [desk.target(c) for c in app[CLUSTERS].list()]  # noqa: E731
        app[HELM_STUCK] = stuck = StuckReleases(desk.releases, registered)
        try:
            yield
        finally:
            await stuck.close()


async def _context(request: web.Request) -> tuple[HelmDesk, str, ClusterTarget]:
    """The desk and the cluster as Helm reaches it for this request's person."""
    cluster_id = validated(request).path["clusterId"]
    desk = request.app[HELM]
    cluster = request.app[CLUSTERS].get(cluster_id)
    return desk, cluster_id, desk.target(cluster, await acting_as(request, cluster_id))


def _release(request: web.Request, target: ClusterTarget) -> ReleaseRef:
    path = validated(request).path
    return ReleaseRef(target, path["namespace"], path["name"])


def _whole(request: web.Request) -> bool:
    """The one rule of every release read: values, and what Helm renders from them (manifest,
    hooks, notes), go to a signed-in person only. In open mode an anonymous caller sees releases
    without them, as ``/values`` and ``/manifest`` answer it 401."""
    return current_user(request) is not None


def _release_body(request: web.Request, release: Release) -> ReleaseBody | ReleaseSummary:
    return encode_release(release) if _whole(request) else encode_summary(release, public=True)


def _summary_body(request: web.Request, release: Release) -> ReleaseSummary:
    return encode_summary(release, public=not _whole(request))


async def _read(request: web.Request, read: Read[T]) -> T:
    """One read of the release the path names (``ReleaseService.status``, ``.history``, ...)."""
    desk, _, target = await _context(request)
    with helm_failures():
        return await read(desk.releases, _release(request, target))


@routes.get(RELEASES, name="listHelmReleases")
async def list_helm_releases(request: web.Request) -> web.Response:
    desk, _, target = await _context(request)
    with helm_failures():
        found = await desk.releases.list_releases(target, validated(request).query.get("namespace"))
    return web.json_response([_summary_body(request, r) for r in found])


@routes.get(RELEASE, name="getHelmRelease")
async def get_helm_release(request: web.Request) -> web.Response:
    return web.json_response(_release_body(request, await _read(request, ReleaseService.status)))


@routes.get(RELEASE + "/history", name="getHelmReleaseHistory")
async def get_helm_release_history(request: web.Request) -> web.Response:
    revisions = await _read(request, ReleaseService.history)
    return web.json_response([_summary_body(request, r) for r in revisions])


@routes.get(RELEASE + "/resources", name="getHelmReleaseResources")
async def get_helm_release_resources(request: web.Request) -> web.Response:
    statuses = await _read(request, ReleaseService.resources)
    return web.json_response([encode_resource(s) for s in statuses])


@routes.get(RELEASE + "/values", name="getHelmReleaseValues")
async def get_helm_release_values(request: web.Request) -> web.Response:
    everything = validated(request).query["all"]
    desk, _, target = await _context(request)
    with helm_failures():
        values = await desk.releases.values(_release(request, target), all_values=everything)
    text = yamlio.dump(dict(values))  # no values: "{}", an empty mapping
    return web.Response(text=text, content_type=YAML_TYPE)


@routes.get(RELEASE + "/manifest", name="getHelmReleaseManifest")
async def get_helm_release_manifest(request: web.Request) -> web.Response:
    release = await _read(request, ReleaseService.status)
    return web.Response(text=release.manifest, content_type=YAML_TYPE)


@routes.post(RELEASES, name="installHelmRelease")
async def install_helm_release(request: web.Request) -> web.Response:
    body = validated(request).body
    desk, cluster_id, target = await _context(request)
    values = await desk.values_for(body.get("valuesName"), body.get("values"))
    install = InstallRequest.from_body({**body, "values": values})
    dry_run = install.options.dry_run
    ref = ReleaseRef(target, install.namespace, install.release_name)
    with _write(request, "install", cluster_id, ref, dry_run=dry_run):
        release = await desk.releases.install(target, install)
    return web.json_response(encode_release(release), status=200 if dry_run else 201)


@routes.post(RELEASE + "/upgrade", name="upgradeHelmRelease")
async def upgrade_helm_release(request: web.Request) -> web.Response:
    body = validated(request).body
    desk, cluster_id, target = await _context(request)
    values = await desk.values_for(body.get("valuesName"), body.get("values"))
    upgrade = UpgradeRequest.from_body({**body, "values": values})
    ref = _release(request, target)
    dry_run = upgrade.options.dry_run
    with _write(request, "upgrade", cluster_id, ref, dry_run=dry_run):
        release = await desk.releases.upgrade(ref, upgrade)
    return web.json_response(encode_release(release))


@routes.post(RELEASE + "/rollback", name="rollbackHelmRelease")
async def rollback_helm_release(request: web.Request) -> web.Response:
    body = validated(request).body or {}
    dry_run = write_options(body).dry_run
    desk, cluster_id, target = await _context(request)
    ref = _release(request, target)
    with _write(request, "rollback", cluster_id, ref, dry_run=dry_run):
        release = await desk.releases.rollback(ref, body.get("revision"), dry_run=dry_run)
    return web.json_response(encode_release(release))


@routes.post(RELEASE + "/uninstall", name="uninstallHelmRelease")
async def uninstall_helm_release(request: web.Request) -> web.Response:
    desk, cluster_id, target = await _context(request)
    ref = _release(request, target)
    with _write(request, "uninstall", cluster_id, ref, dry_run=False):
        release, info = await desk.releases.uninstall(ref)
    return web.json_response(encode_uninstalled(release, info))


@routes.get("/clusters/{clusterId}/helm/charts", name="listHelmCharts")
async def list_helm_charts(request: web.Request) -> web.Response:
    desk, _, _ = await _context(request)
    charts = await desk.catalogue(validated(request).query.get("query"))
    return web.json_response([encode_catalogue_entry(repo, c) for repo, c in charts])


@contextmanager
def _write(
    request: web.Request, action: str, cluster: str, release: ReleaseRef, *, dry_run: bool
) -> Iterator[None]:
    """Audited (on ``namespace/name``) unless a dry run (dry runs are not recorded); the trail
    sees the console's code."""
    with ExitStack() as stack:
        if not dry_run:
            target = f"{release.namespace}/{release.name}"
            stack.enter_context(
                audited(request, action=f"helm.{action}", cluster=cluster, target=target)
            )
        stack.enter_context(helm_failures())
        yield
