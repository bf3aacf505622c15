"""Routes of the release group: list, status, install, upgrade, uninstall, history, rollback, test,
values, manifest, notes, hooks and resources. Each resolves its cluster once, then calls one
``ReleaseService`` operation."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from chartsvc.clusters import ClusterTarget
from chartsvc.encoders import (
    encode_release,
    encode_resource,
    encode_summary,
    encode_test,
    encode_uninstalled,
)
from chartsvc.http.forms import read_chart_form
from chartsvc.http.responses import text_response
from chartsvc.keys import CLUSTERS, RELEASES
from chartsvc.releases import ReleaseService
from chartsvc.releases.model import InstallRequest, Release, UpgradeRequest
from common.errors import ValidationFailed
from common.openapi import validated

routes = web.RouteTableDef()


async def _context(request: web.Request) -> tuple[ReleaseService, ClusterTarget]:
    return request.app[RELEASES], await request.app[CLUSTERS].resolve(request)


def _where(request: web.Request) -> tuple[str, str]:
    """(namespace, name) of a request on one release."""
    params = validated(request)
    return params.query["namespace"], params.path["name"]


def _written(release: Release, *, created: bool) -> web.Response:
    return web.json_response(encode_release(release), status=201 if created else 200)


def _upload_options(options: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(options.get("dryRun", False), bool):
        field = {"in": "body", "field": "request.dryRun", "message": "must be of type boolean"}
        raise ValidationFailed([field])
    return options


@routes.get("/releases", name="listReleases")
async def list_releases(request: web.Request) -> web.Response:
    service, target = await _context(request)
    releases = await service.list_releases(target, validated(request).query["namespace"])
    return web.json_response([encode_summary(r) for r in releases])


@routes.get("/releases/{name}", name="getReleaseStatus")
async def get_release_status(request: web.Request) -> web.Response:
    service, target = await _context(request)
    release = await service.status(target, *_where(request))
    return web.json_response(encode_release(release))


@routes.post("/releases", name="installRelease")
async def install_release(request: web.Request) -> web.Response:
    install = InstallRequest.from_body(validated(request).body)
    service, target = await _context(request)
    release = await service.install(target, install)
    return _written(release, created=not install.options.dry_run)


@routes.post("/releases/upload", name="installReleaseUpload")
async def install_release_upload(request: web.Request) -> web.Response:
    form = await read_chart_form(request)
    install = InstallRequest.from_body(_upload_options(form.json_object("request")))
    service, target = await _context(request)
    release = await service.install(target, install, form.archive())
    return _written(release, created=not install.options.dry_run)


@routes.put("/releases/{name}", name="upgradeRelease")
async def upgrade_release(request: web.Request) -> web.Response:
    upgrade = UpgradeRequest.from_body(validated(request).body)
    service, target = await _context(request)
    release = await service.upgrade(target, *_where(request), upgrade)
    return _written(release, created=False)


@routes.post("/releases/{name}/upgrade/upload", name="upgradeReleaseUpload")
async def upgrade_release_upload(request: web.Request) -> web.Response:
    form = await read_chart_form(request)
    upgrade = UpgradeRequest.from_body(_upload_options(form.json_object("request")))
    service, target = await _context(request)
    release = await service.upgrade(target, *_where(request), upgrade, form.archive())
    return _written(release, created=False)


@routes.delete("/releases/{name}", name="uninstallRelease")
async def uninstall_release(request: web.Request) -> web.Response:
    service, target = await _context(request)
    release, info = await service.uninstall(target, *_where(request))
    return web.json_response(encode_uninstalled(release, info))


@routes.get("/releases/{name}/history", name="getReleaseHistory")
async def get_release_history(request: web.Request) -> web.Response:
    service, target = await _context(request)
    revisions = await service.history(target, *_where(request))
    return web.json_response([encode_summary(r) for r in revisions])


@routes.post("/releases/{name}/rollback", name="rollbackRelease")
async def rollback_release(request: web.Request) -> web.Response:
    revision = (validated(request).body or {}).get("revision")
    service, target = await _context(request)
    release = await service.rollback(target, *_where(request), revision)
    return web.json_response(encode_release(release))


@routes.post("/releases/{name}/test", name="testRelease")
async def test_release(request: web.Request) -> web.Response:
    timeout = validated(request).query["timeoutSeconds"]
    service, target = await _context(request)
    results = await service.test(target, *_where(request), timeout=timeout)
    return web.json_response([encode_test(r) for r in results])


@routes.get("/releases/{name}/values", name="getReleaseValues")
async def get_release_values(request: web.Request) -> web.Response:
    everything = validated(request).query["all"]
    service, target = await _context(request)
    values = await service.values(target, *_where(request), all_values=everything)
    return web.json_response(dict(values))


@routes.get("/releases/{name}/manifest", name="getReleaseManifest")
async def get_release_manifest(request: web.Request) -> web.Response:
    service, target = await _context(request)
    return text_response((await service.status(target, *_where(request))).manifest)


@routes.get("/releases/{name}/notes", name="getReleaseNotes")
async def get_release_notes(request: web.Request) -> web.Response:
    service, target = await _context(request)
    release = await service.status(target, *_where(request))
    return text_response(str(release.info.get("notes") or ""))


@routes.get("/releases/{name}/hooks", name="getReleaseHooks")
async def get_release_hooks(request: web.Request) -> web.Response:
    service, target = await _context(request)
    release = await service.status(target, *_where(request))
    return web.json_response([dict(hook) for hook in release.hooks])


@routes.get("/releases/{name}/resources", name="getReleaseResources")
async def get_release_resources(request: web.Request) -> web.Response:
    service, target = await _context(request)
    statuses = await service.resources(target, *_where(request))
    return web.json_response([encode_resource(s) for s in statuses])
