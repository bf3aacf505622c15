"""Action routes (all POST, all audited): delete, scale, restart, suspend, trigger, rollback, and
cordon, uncordon, drain on nodes.

For cluster-scoped kinds the path's namespace segment is ignored (send ``_``). The audit entry
names the action and ``<resourceId>/<namespace>/<name>``; a failed action is recorded as a failure
with the problem's status and code, then answered as that problem.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from common.openapi import validated
from console.actions import ActionResult, nodes, objects, rollback
from console.audit import audited
from console.http.clusterapi import Target, audit_target, target_kind
from console.http.encode.actions import encode_action
from console.resources.catalog import Kind

routes = web.RouteTableDef()
OBJECT = "/clusters/{clusterId}/resources/{resourceId}/{namespace}/{name}"
NODE = "/clusters/{clusterId}/nodes/{name}"
Action = Callable[[Target, Kind, str | None, str], Awaitable[ActionResult]]


async def _run(
    request: web.Request, action: str, do: Action, *, rid: str | None = None
) -> web.Response:
    found, kind = await target_kind(request, rid)
    path = validated(request).path
    namespace = path.get("namespace") if kind.namespaced else None
    where = audit_target(kind, namespace, path["name"])
    with audited(request, action=action, cluster=found.cluster_id, target=where):
        result = await do(found, kind, namespace, path["name"])
    return web.json_response(encode_action(result))


@routes.post(OBJECT + "/delete", name="deleteObject")
async def delete_object(request: web.Request) -> web.Response:
    force = bool(validated(request).query.get("force"))

    async def do(t: Target, kind: Kind, ns: str | None, name: str) -> ActionResult:
        return await objects.delete(t.api, kind, ns, name, force=force)

    return await _run(request, "delete", do)


@routes.post(OBJECT + "/scale", name="scaleObject")
async def scale_object(request: web.Request) -> web.Response:
    replicas = int(validated(request).query["replicas"])

    async def do(t: Target, kind: Kind, ns: str | None, name: str) -> ActionResult:
        return await objects.scale(t.api, kind, ns, name, replicas)

    return await _run(request, "scale", do)


@routes.post(OBJECT + "/restart", name="restartObject")
async def restart_object(request: web.Request) -> web.Response:
    return await _run(request, "restart", lambda t, k, ns, n: objects.restart(t.api, k, ns, n))


@routes.post(OBJECT + "/suspend", name="suspendObject")
async def suspend_object(request: web.Request) -> web.Response:
    suspend = bool(validated(request).query["suspend"])

    async def do(t: Target, kind: Kind, ns: str | None, name: str) -> ActionResult:
        return await objects.suspend(t.api, kind, ns, name, suspend=suspend)

    return await _run(request, "suspend" if suspend else "resume", do)


@routes.post(OBJECT + "/trigger", name="triggerJob")
async def trigger_job(request: web.Request) -> web.Response:
    return await _run(request, "trigger", lambda t, k, ns, n: objects.trigger(t.api, k, ns, n))


@routes.post(OBJECT + "/rollback", name="rollbackObject")
async def rollback_object(request: web.Request) -> web.Response:
    return await _run(request, "rollback", lambda t, k, ns, n: rollback.rollback(t.api, k, ns, n))


@routes.post(NODE + "/cordon", name="cordonNode")
async def cordon_node(request: web.Request) -> web.Response:
    return await _run(request, "cordon", lambda t, k, _, n: nodes.cordon(t.api, k, n), rid="nodes")


@routes.post(NODE + "/uncordon", name="uncordonNode")
async def uncordon_node(request: web.Request) -> web.Response:
    return await _run(
        request, "uncordon", lambda t, k, _, n: nodes.uncordon(t.api, k, n), rid="nodes"
    )


@routes.post(NODE + "/drain", name="drainNode")
async def drain_node(request: web.Request) -> web.Response:
    timeout = float(validated(request).query["timeoutSeconds"])

    async def do(t: Target, kind: Kind, _: str | None, name: str) -> ActionResult:
        return await nodes.drain(t.api, kind, name, timeout_s=timeout)

    return await _run(request, "drain", do, rid="nodes")
