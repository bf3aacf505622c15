"""A stand-in for the workload controllers until the real ones (``controllers/``) are wired in.

:func:`workload_status` reports every Deployment, ReplicaSet, StatefulSet and DaemonSet as fully
rolled out and available as soon as its spec changes, so that readiness checks (Helm's ``wait``,
kstatus, ``kubectl rollout status``) complete. It creates no ReplicaSets or Pods: that is the job of
the real controllers, which replace this module (``State.instant_rollout=False`` turns it off). It
writes through ``Objects`` like any client, so watchers see ordinary MODIFIED events; :func:`run`
owns its subscription and :func:`context` its task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import web

from kubesim.api.objects import Objects
from kubesim.http.state import STATE
from kubesim.machinery.meta import WriteOptions, now
from kubesim.machinery.status import KubeError
from kubesim.store import Event, GroupResource

logger = logging.getLogger(__name__)
Obj = dict[str, Any]
MANAGER = "kube-controller-manager"
WORKLOADS: tuple[GroupResource, ...] = (
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
)


def _condition(kind: str, reason: str, message: str, at: str) -> Obj:
    return {
        "type": kind,
        "status": "True",
        "lastUpdateTime": at,
        "lastTransitionTime": at,
        "reason": reason,
        "message": message,
    }


def rolled_out_status(gr: GroupResource, obj: Obj) -> Obj:
    """The status a healthy controller converges to for ``obj``'s current spec."""
    spec, meta = obj.get("spec") or {}, obj["metadata"]
    replicas = int(spec.get("replicas", 1)) if gr[1] != "daemonsets" else 0
    status: Obj = {"observedGeneration": meta.get("generation", 1)}
    if gr[1] == "daemonsets":
        status.update(
            {
                "currentNumberScheduled": 0,
                "desiredNumberScheduled": 0,
                "numberMisscheduled": 0,
                "numberReady": 0,
            }
        )
        return status
    if replicas:
        status.update(
            {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}
        )
    if gr[1] == "deployments":
        at = now()
        if replicas:
            status["updatedReplicas"] = replicas
        status["conditions"] = [
            _condition(
                "Available", "MinimumReplicasAvailable", "Deployment has minimum availability.", at
            ),
            _condition(
                "Progressing",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{meta["name"]}" has successfully progressed.',
                at,
            ),
        ]
    elif gr[1] == "replicasets":
        status["replicas"] = replicas
        if replicas:
            status["fullyLabeledReplicas"] = replicas
    elif gr[1] == "statefulsets":
        status.update(
            {
                "replicas": replicas,
                "currentReplicas": replicas,
                "updatedReplicas": replicas,
                "collisionCount": 0,
                "currentRevision": f"{meta['name']}-1",
                "updateRevision": f"{meta['name']}-1",
            }
        )
    return status


def workload_status(objs: Objects, event: Event) -> None:
    if event.type == "DELETED" or event.gr not in WORKLOADS:
        return
    obj = event.obj
    meta = obj["metadata"]
    if meta.get("deletionTimestamp"):
        return
    status = obj.get("status") or {}
    if status.get("observedGeneration") == meta.get("generation", 1) and status.get(
        "replicas", 0
    ) == (obj.get("spec") or {}).get("replicas", status.get("replicas", 0)):
        return
    rt = objs.registry.by_group_resource(*event.gr)
    if rt is None:
        return
    body = {**obj, "status": rolled_out_status(event.gr, obj)}
    with contextlib.suppress(KubeError):  # deleted or changed meanwhile: the next event retries
        objs.update(
            rt,
            meta.get("namespace", ""),
            meta["name"],
            body,
            WriteOptions(manager=MANAGER, subresource="status"),
        )


Reconciler = Callable[[Objects, Event], None]
RECONCILERS: tuple[Reconciler, ...] = (workload_status,)


async def run(objs: Objects, reconcilers: tuple[Reconciler, ...] = RECONCILERS) -> None:
    """Feed every store event to every reconciler until cancelled or the store closes."""
    sub = objs.store.subscribe(None)
    try:
        for gr, obj in list(objs.store.all_objects()):
            for reconcile in reconcilers:
                reconcile(objs, Event(objs.store.rv, "ADDED", gr, obj))
        while (event := await sub.next()) is not None:
            for reconcile in reconcilers:
                try:
                    reconcile(objs, event)
                except Exception:  # a controller bug must not stop the others
                    logger.exception("controller %s failed", reconcile.__name__)
    finally:
        sub.close()


async def context(app: web.Application) -> AsyncIterator[None]:
    """aiohttp cleanup context: controllers live exactly as long as the server."""
    if not app[STATE].instant_rollout:
        yield
        return
    task = asyncio.create_task(run(app[STATE].objects), name="kubesim-instant-rollout")
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
