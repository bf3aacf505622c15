"""What the browse, objects, apply and actions routes share: the addressed cluster as the domain
modules want it (a ``KubeApi`` and the discovery cache), resource ids resolved to kinds, and the
streamed JSON array.

Every ``KubeApi`` a request gets comes from :func:`cluster_api`: it acts as the request's person
(``console.auth.acting_identity``) where the cluster impersonates, as the console itself where it
does not (``ClusterRegistry.acting_as`` decides), so no route chooses an identity of its own.

``CATALOGS`` holds discovery per cluster client for a few seconds (set by ``console.app``). The
array stream fetches its first chunk before answering, so a refusal is still a problem response;
a failure after the first bytes went out closes the connection, so the client sees a truncated
body rather than a short list that looks complete.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator

import attrs
from aiohttp import web

from common.app import REQUEST_ID, REQUEST_ID_HEADER
from common.errors import Unauthorized, WharfError
from common.openapi import validated
from console.audit import IMPERSONATED
from console.auth import acting_identity, current_user
from console.identity import Identity
from console.keys import CATALOGS, CLUSTERS
from console.resources.catalog import Catalog, Kind
from console.resources.discovery import Catalogs
from console.resources.kubeapi import KubeApi

logger = logging.getLogger(__name__)


@attrs.frozen
class Target:
    cluster_id: str
    api: KubeApi
    catalogs: Catalogs


async def cluster_api(request: web.Request, cluster_id: str) -> KubeApi:
    """The cluster as the request's person may use it (see the module's doc)."""
    client = await request.app[CLUSTERS].client(cluster_id)
    return KubeApi(client, acting_as=await acting_as(request, cluster_id))


async def acting_as(request: web.Request, cluster_id: str) -> Identity | None:
    """Who ``request``'s cluster calls act as: its person where the cluster impersonates, None
    (the console itself) where it does not. Helm's calls ask here too."""
    who = await request.app[CLUSTERS].acting_as(cluster_id, acting_identity(request))
    request[IMPERSONATED] = who is not None  # the audit entry names who the cluster saw
    return who


async def target(request: web.Request) -> Target:
    cluster_id = validated(request).path["clusterId"]
    return Target(cluster_id, await cluster_api(request, cluster_id), request.app[CATALOGS])


async def target_catalog(request: web.Request) -> tuple[Target, Catalog]:
    """The cluster and its kinds (discovery, cached for a few seconds)."""
    found = await target(request)
    return found, await found.catalogs.get(found.api)


async def target_kind(request: web.Request, resource_id: str | None = None) -> tuple[Target, Kind]:
    """The cluster and the kind named by the path's ``resourceId`` (or ``resource_id``)."""
    found = await target(request)
    rid = resource_id or validated(request).path["resourceId"]
    return found, await found.catalogs.kind(found.api, rid)


async def target_whole_kind(
    request: web.Request, resource_id: str | None = None
) -> tuple[Target, Kind]:
    """:func:`target_kind` for reads that return an object whole, values included: a Secret's
    need the admin in both modes (the projected list and the detail view keep them out)."""
    found, kind = await target_kind(request, resource_id)
    if kind.group == "" and kind.resource == "secrets" and current_user(request) is None:
        raise Unauthorized(
            "a Secret's values need the admin (HTTP Basic or a session), in open mode too"
        )
    return found, kind


def audit_target(kind: Kind, namespace: str | None, name: str) -> str:
    return f"{kind.id}/{namespace}/{name}" if kind.namespaced else f"{kind.id}/{name}"


async def json_array(request: web.Request, chunks: AsyncGenerator[str, None]) -> web.StreamResponse:
    """Send ``chunks`` (comma-joined runs of array members) as one JSON array."""
    async with contextlib.aclosing(chunks):
        first = await anext(chunks, None)
        response = web.StreamResponse(headers={"Content-Type": "application/json; charset=utf-8"})
        response.headers[REQUEST_ID_HEADER] = request.get(REQUEST_ID, "-")
        await response.prepare(request)
        await response.write(b"[")
        try:
            if first is not None:
                await response.write(first.encode())
            async for chunk in chunks:
                await response.write(chunk.encode())
        except WharfError as exc:
            logger.warning("object stream of %s broke off: %s", request.path, exc.detail)
            if request.transport is not None:
                request.transport.close()
            return response
        await response.write(b"]")
        await response.write_eof()
        return response
