"""The release calls: each resolves its cluster once, then calls one ``ReleaseService`` operation.

The cluster is the service's own, or the one the host's resolver picks for the HTTP request that
carried the call (``Services.cluster``), chosen before the first cluster call.
"""

from __future__ import annotations

from chartsvc.calls.base import (
    Reply,
    Services,
    call,
    verified_archive,
    verified_upload,
)
from chartsvc.calls.form import ChartForm
from chartsvc.clusters import ReleaseRef
from chartsvc.encoders import (
    encode_drift,
    encode_preview,
    encode_release,
    encode_resource,
    encode_summary,
    encode_test,
    encode_uninstalled,
)
from chartsvc.releases.model import InstallRequest, Release, UpgradeRequest
from common.openapi import Validated


async def _release(s: Services, v: Validated) -> ReleaseRef:
    """The release the call names, on the cluster resolved for it."""
    return ReleaseRef(await s.cluster(), v.query["namespace"], v.path["name"])


def _written(release: Release, *, created: bool) -> Reply:
    return Reply(encode_release(release), status=201 if created else 200)


@call("listReleases")
async def list_releases(s: Services, v: Validated) -> Reply:
    found = await s.release_service.list_releases(await s.cluster(), v.query["namespace"])
    return Reply([encode_summary(r) for r in found])


@call("getReleaseStatus")
async def get_release_status(s: Services, v: Validated) -> Reply:
    return Reply(encode_release(await s.release_service.status(await _release(s, v))))


@call("installRelease")
async def install_release(s: Services, v: Validated) -> Reply:
    install = InstallRequest.from_body(v.body)
    archive = await verified_archive(s, v.body, field="chartRef")
    release = await s.release_service.install(await s.cluster(), install, archive)
    return _written(release, created=not install.options.dry_run)


@call("installReleaseUpload")
async def install_release_upload(s: Services, v: Validated) -> Reply:
    form: ChartForm = v.body
    body = form.json_object("request")
    install = InstallRequest.from_body(body)
    archive = await verified_upload(s, form, body)
    release = await s.release_service.install(await s.cluster(), install, archive)
    return _written(release, created=not install.options.dry_run)


@call("upgradeRelease")
async def upgrade_release(s: Services, v: Validated) -> Reply:
    upgrade = UpgradeRequest.from_body(v.body)
    archive = await verified_archive(s, v.body, field="chartRef")
    release = await s.release_service.upgrade(await _release(s, v), upgrade, archive)
    return _written(release, created=False)


@call("upgradeReleaseUpload")
async def upgrade_release_upload(s: Services, v: Validated) -> Reply:
    form: ChartForm = v.body
    body = form.json_object("request")
    upgrade = UpgradeRequest.from_body(body)
    archive = await verified_upload(s, form, body)
    release = await s.release_service.upgrade(await _release(s, v), upgrade, archive)
    return _written(release, created=False)


@call("previewReleaseUpgrade")
async def preview_release_upgrade(s: Services, v: Validated) -> Reply:
    upgrade = UpgradeRequest.from_body(v.body)
    preview = await s.release_service.preview_upgrade(await _release(s, v), upgrade)
    return Reply(encode_preview(preview))


@call("uninstallRelease")
async def uninstall_release(s: Services, v: Validated) -> Reply:
    release, info = await s.release_service.uninstall(await _release(s, v))
    return Reply(encode_uninstalled(release, info))


@call("getReleaseHistory")
async def get_release_history(s: Services, v: Validated) -> Reply:
    revisions = await s.release_service.history(await _release(s, v))
    return Reply([encode_summary(r) for r in revisions])


@call("rollbackRelease")
async def rollback_release(s: Services, v: Validated) -> Reply:
    revision = (v.body or {}).get("revision")
    release = await s.release_service.rollback(await _release(s, v), revision)
    return Reply(encode_release(release))


@call("testRelease")
async def test_release(s: Services, v: Validated) -> Reply:
    timeout = v.query["timeoutSeconds"]
    results = await s.release_service.test(await _release(s, v), timeout=timeout)
    return Reply([encode_test(r) for r in results])


@call("getReleaseValues")
async def get_release_values(s: Services, v: Validated) -> Reply:
    everything = v.query["all"]
    values = await s.release_service.values(await _release(s, v), all_values=everything)
    return Reply(dict(values))


@call("getReleaseManifest")
async def get_release_manifest(s: Services, v: Validated) -> Reply:
    return Reply(text=(await s.release_service.status(await _release(s, v))).manifest)


@call("getReleaseNotes")
async def get_release_notes(s: Services, v: Validated) -> Reply:
    release = await s.release_service.status(await _release(s, v))
    return Reply(text=str(release.info.get("notes") or ""))


@call("getReleaseHooks")
async def get_release_hooks(s: Services, v: Validated) -> Reply:
    release = await s.release_service.status(await _release(s, v))
    return Reply([dict(hook) for hook in release.hooks])


@call("getReleaseResources")
async def get_release_resources(s: Services, v: Validated) -> Reply:
    statuses = await s.release_service.resources(await _release(s, v))
    return Reply([encode_resource(r) for r in statuses])


@call("getReleaseDrift")
async def get_release_drift(s: Services, v: Validated) -> Reply:
    return Reply(encode_drift(await s.release_service.drift(await _release(s, v))))
