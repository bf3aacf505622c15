"""YAML, apply, dry run and merge patch routes.

Apply and patch are audited (target ``<resourceId>/<namespace>/<name>``, never the manifest); a
dry run changes nothing and is not. The manifest body is read as text whatever its declared type
(JSON is YAML), within the app's request size limit.
"""

from __future__ import annotations

from aiohttp import web

from common.errors import BadRequest
from common.openapi import validated
from console.audit import audited
from console.http.clusterapi import audit_target, target, target_kind, target_whole_kind
from console.http.encode import YAML_TYPE
from console.resources import manifests, rows

routes = web.RouteTableDef()


async def _manifest_text(request: web.Request) -> str:
    try:
        return await request.text()
    except UnicodeDecodeError:
        raise BadRequest("the manifest must be UTF-8 text") from None


@routes.get("/clusters/{clusterId}/yaml", name="getYaml")
async def get_yaml(request: web.Request) -> web.Response:
    query = validated(request).query
    found, kind = await target_whole_kind(request, query["resource"])
    text = await manifests.export_yaml(found.api, kind, query.get("namespace"), query["name"])
    return web.Response(text=text, content_type=YAML_TYPE)


@routes.post("/clusters/{clusterId}/apply", name="applyManifest")
async def apply_manifest(request: web.Request) -> web.Response:
    found = await target(request)
    manifest = await manifests.normalise(found.api, found.catalogs, await _manifest_text(request))
    where = audit_target(manifest.kind, manifest.namespace, manifest.name)
    with audited(request, action="apply", cluster=found.cluster_id, target=where):
        stored = await manifests.apply(found.api, manifest, dry_run=False)
    return web.json_response(rows.row(stored, kind=manifest.kind.kind))


@routes.post("/clusters/{clusterId}/apply/dry-run", name="dryRunManifest")
async def dry_run_manifest(request: web.Request) -> web.Response:
    found = await target(request)
    manifest = await manifests.normalise(found.api, found.catalogs, await _manifest_text(request))
    return web.json_response(await manifests.apply(found.api, manifest, dry_run=True))


@routes.patch("/clusters/{clusterId}/patch", name="patchObject")
async def patch_object(request: web.Request) -> web.Response:
    given = validated(request)
    found, kind = await target_kind(request, given.query["resource"])
    namespace, name = given.query.get("namespace"), given.query["name"]
    where = audit_target(kind, namespace, name)
    with audited(request, action="patch", cluster=found.cluster_id, target=where):
        patched = await manifests.merge_patch(found.api, kind, namespace, name, given.body)
    return web.json_response(rows.row(patched, kind=kind.kind))
