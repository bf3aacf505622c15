"""Port-forward routes: list a cluster's forwards, start one, stop one (start and stop audited).

The listening socket is the service's (``console.port-forwards.bind-address``, loopback by
default); the forwards live in ``PORT_FORWARDS`` and are released with their cluster and at
shutdown (``setup``). Each forward is its starter's, and names them: a person stops only their
own (any other is 404 ``unknown-port-forward``, as if it did not exist) and, in closed mode, lists
only their own; the admin groups list and stop every one. In open mode the list, a GET, is public
as every GET is (the contract). The account behind a forward removed or changed, or the session
that started it ending, stops it (``console.standing``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from common import sse
from common.openapi import validated
from console.audit import audited
from console.auth import acting_identity, is_admin
from console.http.clusterapi import target
from console.http.encode.portforwards import encode_forward
from console.identity import Identity
from console.keys import AUTH, CLUSTERS, PORT_FORWARDS, SETTINGS
from console.streams.podports import ForwardRequest
from console.streams.portforward import PortForwards

routes = web.RouteTableDef()
BASE = "/clusters/{clusterId}/port-forwards"


@routes.get(BASE, name="listPortForwards")
async def list_port_forwards(request: web.Request) -> web.Response:
    found = await target(request)
    # In open mode every GET is public (the contract): the list is everyone's there.
    seen_by = None if request.app[AUTH].open_mode else _seen_by(request)
    forwards = request.app[PORT_FORWARDS].of_cluster(found.cluster_id, seen_by=seen_by)
    return web.json_response([encode_forward(f) for f in forwards])


@routes.post(BASE, name="startPortForward")
async def start_port_forward(request: web.Request) -> web.Response:
    found = await target(request)
    body = validated(request).body
    wanted = ForwardRequest(
        kind=body["kind"],
        namespace=body["namespace"],
        name=body["name"],
        remote_port=body["remotePort"],
        local_port=body.get("localPort") or 0,
    )
    where = f"{wanted.kind}/{wanted.namespace}/{wanted.name}:{wanted.remote_port}"
    with audited(request, action="port-forward", cluster=found.cluster_id, target=where):
        forward = await request.app[PORT_FORWARDS].start(
            found.cluster_id,
            found.api,
            wanted,
            owner=acting_identity(request),
            credential=request.get(sse.CREDENTIAL),
        )
    return web.json_response(encode_forward(forward), status=201)


@routes.post(BASE + "/{id}/stop", name="stopPortForward")
async def stop_port_forward(request: web.Request) -> web.Response:
    found = await target(request)
    forward_id = validated(request).path["id"]
    forwards = request.app[PORT_FORWARDS]
    with audited(request, action="port-forward-stop", cluster=found.cluster_id, target=forward_id):
        forward = await forwards.stop(found.cluster_id, forward_id, seen_by=_seen_by(request))
    return web.json_response(encode_forward(forward, stopped=True))


def _seen_by(request: web.Request) -> Identity | None:
    """Whose forwards the request may see: its person's, or everyone's for the admin groups."""
    return None if is_admin(request) else acting_identity(request)


def setup(app: web.Application) -> None:
    async def forwards(app: web.Application) -> AsyncIterator[None]:
        settings = app[SETTINGS].port_forwards
        streams = app[sse.STREAMS]
        registry = PortForwards(
            host=settings.bind_address,
            limit=settings.max_forwards,
            guard=streams.guard,
            unguard=streams.unguard,
        )
        app[PORT_FORWARDS] = registry
        app[CLUSTERS].on_change(registry.cluster_changed)
        try:
            yield
        finally:
            await registry.close()

    app.cleanup_ctx.append(forwards)
