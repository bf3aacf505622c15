"""Pod file routes: list a directory, read, download, write and delete a file in a container.

Every method needs the admin in both security modes (``console.auth.SECRET_PATHS``). The feature
answers 404 ``files-disabled`` unless ``console.files.enabled``; writes and deletes answer 403
``files-read-only`` unless ``console.files.writable``. Writes and deletes are audited (target
``pods/<namespace>/<pod>:<path>``). The work is done in ``console.streams.podfiles``.
"""

from __future__ import annotations

from aiohttp import web

from common import headers
from common.openapi import validated
from console.audit import audited
from console.http.clusterapi import Target, target
from console.http.encode.files import encode_content, encode_entry, encode_listing, encode_written
from console.keys import SETTINGS
from console.streams import podfiles
from console.streams.podfiles import FilesDisabled, FilesReadOnly, FileTooLarge, Limits, Place

routes = web.RouteTableDef()
FILES = "/clusters/{clusterId}/pods/{namespace}/{pod}/files"


@routes.get(FILES, name="listPodFiles")
async def list_pod_files(request: web.Request) -> web.Response:
    found, place, limits = await _open(request)
    path = validated(request).query.get("path") or "/"
    listing = await podfiles.list_dir(found.api, place, path, limits)
    return web.json_response(encode_listing(listing))


@routes.get(FILES + "/content", name="readPodFile")
async def read_pod_file(request: web.Request) -> web.Response:
    found, place, limits = await _open(request)
    path, data = await podfiles.read_file(found.api, place, _path(request), limits)
    return web.json_response(encode_content(path, data))


@routes.get(FILES + "/download", name="downloadPodFile")
async def download_pod_file(request: web.Request) -> web.Response:
    found, place, limits = await _open(request)
    path, data = await podfiles.read_file(found.api, place, _path(request), limits)
    disposition = headers.content_disposition(path.rsplit("/", 1)[-1], default="file")
    return web.Response(
        body=data,
        content_type="application/octet-stream",
        headers={"Content-Disposition": disposition},
    )


@routes.put(FILES + "/content", name="writePodFile")
async def write_pod_file(request: web.Request) -> web.Response:
    found, place, limits = await _open(request, write=True)
    data = await _body(request, limits.max_write)
    with audited(request, action="file-write", cluster=found.cluster_id, target=_audit(request)):
        path, size = await podfiles.write_file(found.api, place, _path(request), data, limits)
    return web.json_response(encode_written(path, size))


@routes.delete(FILES, name="deletePodFile")
async def delete_pod_file(request: web.Request) -> web.Response:
    found, place, limits = await _open(request, write=True)
    with audited(request, action="file-delete", cluster=found.cluster_id, target=_audit(request)):
        entry = await podfiles.delete(found.api, place, _path(request), limits)
    return web.json_response(encode_entry(entry))


async def _open(request: web.Request, *, write: bool = False) -> tuple[Target, Place, Limits]:
    settings = request.app[SETTINGS].files
    if not settings.enabled:
        raise FilesDisabled("the pod file browser is off (console.files.enabled=false)")
    if write and not settings.writable:
        raise FilesReadOnly("pod files are read-only here (console.files.writable=false)")
    found = await target(request)
    args = validated(request)
    place = Place(args.path["namespace"], args.path["pod"], args.query.get("container") or None)
    limits = Limits(settings.allowed_roots, settings.max_read_bytes, settings.max_write_bytes)
    return found, place, limits


def _path(request: web.Request) -> str:
    path: str = validated(request).query["path"]
    return path


def _audit(request: web.Request) -> str:
    args = validated(request)
    return f"pods/{args.path['namespace']}/{args.path['pod']}:{args.query['path'][:300]}"


async def _body(request: web.Request, cap: int) -> bytes:
    """The file's bytes (the request body), refused with 413 ``file-too-large`` once past ``cap``:
    before reading when Content-Length says so."""
    refusal = f"request body is larger than the limit of {cap} bytes"
    if request.content_length is not None and request.content_length > cap:
        raise FileTooLarge(refusal)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(256 * 1024):
        size += len(chunk)
        if size > cap:
            raise FileTooLarge(refusal)
        chunks.append(chunk)
    return b"".join(chunks)
