"""Cordon, uncordon and drain, as ``kubectl cordon|uncordon|drain`` do them.

Cordon and uncordon are the strategic merge patches kubectl's CordonHelper sends
(``{"spec":{"unschedulable":true}}`` and ``…null}``), and nothing when the node is already so.
Drain cordons, then evicts (policy/v1 Eviction) every pod on the node except DaemonSet-managed and
mirror pods, as ``kubectl drain --ignore-daemonsets --delete-emptydir-data --force`` would; pods
losing emptyDir data or without a controller are evicted and said so. A 429 (a disruption budget
refuses for now) is retried with backoff until the deadline; any other refusal ends that pod's
attempts. Evicted pods are then awaited until gone or the deadline. When any pod could not be
evicted the drain fails with :class:`DrainFailed`, which carries every pod's outcome.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from common.errors import Conflict, UpstreamStatus, WharfError
from console.actions import ActionResult, PodOutcome, encode_pod
from console.resources import rows
from console.resources.catalog import Kind
from console.resources.kubeapi import STRATEGIC_PATCH, KubeApi, path_of, selector_query

MIRROR = "kubernetes.io/config.mirror"
DEFAULT_TIMEOUT_S = 60.0
FIRST_BACKOFF_S = 0.25
MAX_BACKOFF_S = 5.0  # kubectl retries a refused eviction every 5 s
CONCURRENCY = 8
Obj = dict[str, Any]


class DrainFailed(Conflict, code="drain-failed"):
    def __init__(self, node: str, pods: list[PodOutcome]) -> None:
        failed = [p for p in pods if p.outcome == "failed"]
        names = ", ".join(f"{p.namespace}/{p.name} ({p.reason})" for p in failed)
        super().__init__(
            f"node {node} is cordoned but {len(failed)} pod(s) could not be evicted: {names}",
            extra={"node": node, "pods": [encode_pod(p) for p in pods]},
        )


async def _set_unschedulable(api: KubeApi, kind: Kind, name: str, *, on: bool) -> ActionResult:
    path = path_of("", "v1", "nodes", name=name)
    node = await api.get(path)
    verb = "cordon" if on else "uncordon"
    done = "cordoned" if on else "uncordoned"
    if bool((node.get("spec") or {}).get("unschedulable")) == on:
        return ActionResult(verb, kind.id, None, name, f"node/{name} already {done}",
                            row=rows.row(node, kind="Node"))  # fmt: skip
    patch = {"spec": {"unschedulable": True if on else None}}
    patched = await api.send("PATCH", path, patch, content_type=STRATEGIC_PATCH)
    return ActionResult(verb, kind.id, None, name, f"node/{name} {done}",
                        row=rows.row(patched, kind="Node"))  # fmt: skip


async def cordon(api: KubeApi, kind: Kind, name: str) -> ActionResult:
    return await _set_unschedulable(api, kind, name, on=True)


async def uncordon(api: KubeApi, kind: Kind, name: str) -> ActionResult:
    return await _set_unschedulable(api, kind, name, on=False)


def classify(pod: Obj) -> tuple[bool, str]:
    """(evict?, why) for one pod on a node being drained, in kubectl's filter order."""
    meta = pod.get("metadata") or {}
    if MIRROR in (meta.get("annotations") or {}):
        return False, "mirror pod"
    owner = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
    if owner is not None and owner.get("kind") == "DaemonSet":
        return False, "managed by DaemonSet " + str(owner.get("name"))
    notes = []
    if any("emptyDir" in v for v in (pod.get("spec") or {}).get("volumes") or []):
        notes.append("emptyDir data deleted")
    if owner is None:
        notes.append("not managed by a controller")
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        notes.append("already finished")
    return True, "; ".join(notes)


async def drain(
    api: KubeApi, kind: Kind, name: str, *, timeout_s: float = DEFAULT_TIMEOUT_S
) -> ActionResult:
    deadline = time.monotonic() + timeout_s
    await cordon(api, kind, name)
    pods = await api.list_all(
        path_of("", "v1", "pods"), query=selector_query(fields=f"spec.nodeName={name}")
    )
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(pod: Obj) -> PodOutcome:
        async with gate:
            return await _drain_pod(api, pod, deadline)

    outcomes = list(await asyncio.gather(*(one(p) for p in pods)))
    if any(o.outcome == "failed" for o in outcomes):
        raise DrainFailed(name, outcomes)
    evicted = sum(1 for o in outcomes if o.outcome == "evicted")
    node = await api.get(path_of("", "v1", "nodes", name=name))
    return ActionResult("drain", kind.id, None, name, f"node/{name} drained ({evicted} evicted)",
                        row=rows.row(node, kind="Node"), pods=tuple(outcomes))  # fmt: skip


async def _drain_pod(api: KubeApi, pod: Obj, deadline: float) -> PodOutcome:
    meta = pod.get("metadata") or {}
    namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
    evict, why = classify(pod)
    if not evict:
        return PodOutcome(namespace, name, "skipped", why)
    refused = await _evict(api, namespace, name, deadline)
    if refused is not None:
        return PodOutcome(namespace, name, "failed", refused)
    gone = await _wait_gone(api, namespace, name, str(meta.get("uid", "")), deadline)
    note = why if gone else "; ".join(filter(None, [why, "still terminating at the deadline"]))
    return PodOutcome(namespace, name, "evicted", note)


async def _evict(api: KubeApi, namespace: str, name: str, deadline: float) -> str | None:
    """None once the eviction is accepted (or the pod is gone); otherwise why it was refused."""
    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    }
    path = path_of("", "v1", "pods", namespace=namespace, name=name, subresource="eviction")
    delay = FIRST_BACKOFF_S
    while True:
        try:
            await api.send("POST", path, body)
            return None
        except UpstreamStatus as exc:
            if exc.status == 404:
                return None
            if exc.status != 429:
                return f"{exc.status}: {exc.detail}"
            if time.monotonic() + delay > deadline:
                return f"429 until the deadline: {exc.detail}"
        except WharfError as exc:
            return exc.detail
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_BACKOFF_S)


async def _wait_gone(api: KubeApi, namespace: str, name: str, uid: str, deadline: float) -> bool:
    path = path_of("", "v1", "pods", namespace=namespace, name=name)
    while True:
        try:
            pod = await api.get(path)
        except UpstreamStatus as exc:
            if exc.status == 404:
                return True
            raise
        if (pod.get("metadata") or {}).get("uid") != uid:
            return True
        if time.monotonic() + 0.2 > deadline:
            return False
        await asyncio.sleep(0.2)
