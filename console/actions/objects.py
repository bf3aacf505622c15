"""Delete, scale, rollout restart, suspend/resume and CronJob trigger, as kubectl does them.

- delete: ``DELETE`` with ``propagationPolicy: Background`` (kubectl's default cascade); ``force``
  is ``--force --grace-period=0``: ``gracePeriodSeconds: 0``.
- scale: a merge patch ``{"spec":{"replicas":N}}`` on the ``scale`` subresource (``kubectl scale``).
- restart: a strategic merge patch setting the pod template annotation
  ``kubectl.kubernetes.io/restartedAt`` to the time in RFC 3339; a paused Deployment is refused
  with kubectl's message.
- set memory limit (a remediation's): a strategic merge patch of one container's
  ``resources.limits.memory``, as ``kubectl set resources --limits=memory=...`` sends it.
- suspend/resume: a merge patch of ``spec.suspend``.
- trigger: ``kubectl create job --from=cronjob/NAME``: the job template's spec and labels, its
  annotations plus ``cronjob.kubernetes.io/instantiate: manual``, and a controller ownerReference
  without ``blockOwnerDeletion`` (setting it would need ``cronjobs/finalizers``).
"""

from __future__ import annotations

import secrets
import string
from datetime import UTC, datetime
from typing import Any

from common.errors import BadRequest, Conflict
from console.actions import ActionResult, dry_run_query, kubectl_name
from console.resources import rows
from console.resources.catalog import Kind
from console.resources.kubeapi import JSON, MERGE_PATCH, STRATEGIC_PATCH, KubeApi, path_of
from console.resources.listing import get_object, object_path

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
INSTANTIATE = "cronjob.kubernetes.io/instantiate"
RESTARTABLE = frozenset({"Deployment", "DaemonSet", "StatefulSet"})
SUSPENDABLE = frozenset({"CronJob", "Job"})
_SUFFIX = string.ascii_lowercase + string.digits


def _result(action: str, kind: Kind, namespace: str | None, name: str, message: str,
            obj: Any = None, **extra: Any) -> ActionResult:  # fmt: skip
    row = rows.row(obj, kind=kind.kind) if isinstance(obj, dict) else None
    return ActionResult(action, kind.id, namespace, name, message, row=row, **extra)


async def delete(
    api: KubeApi,
    kind: Kind,
    namespace: str | None,
    name: str,
    *,
    force: bool = False,
    dry_run: bool = False,
) -> ActionResult:
    options: dict[str, Any] = {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Background",
    }
    if force:
        options["gracePeriodSeconds"] = 0
    path = object_path(kind, namespace, name)
    query = dry_run_query(dry_run)
    answer = await api.send("DELETE", path, options, content_type=JSON, query=query)
    message = f'{kubectl_name(kind.kind, kind.group)} "{name}" deleted'
    if force:
        message += " (forced: grace period 0, not waiting for the running resource to stop)"
    return _result("delete", kind, namespace, name, message, stored=answer)


async def scale(
    api: KubeApi, kind: Kind, namespace: str | None, name: str, replicas: int
) -> ActionResult:
    if "scale" not in kind.subresources:
        raise BadRequest(f"{kind.id} cannot be scaled: the kind has no scale subresource")
    if replicas < 0:
        raise BadRequest("replicas must be 0 or more")
    patch = {"spec": {"replicas": replicas}}
    path = object_path(kind, namespace, name, "scale")
    await api.send("PATCH", path, patch, content_type=MERGE_PATCH)
    obj = await get_object(api, kind, namespace, name)
    message = f"{kubectl_name(kind.kind, kind.group)}/{name} scaled"
    return _result("scale", kind, namespace, name, message, obj)


def restarted_at(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def restart(
    api: KubeApi, kind: Kind, namespace: str | None, name: str, *, dry_run: bool = False
) -> ActionResult:
    if kind.kind not in RESTARTABLE or kind.group != "apps":
        raise BadRequest(f"restarting is not supported for {kind.id}")
    obj = await get_object(api, kind, namespace, name)
    if kind.kind == "Deployment" and (obj.get("spec") or {}).get("paused"):
        raise Conflict(f"can't restart paused deployment (run rollout resume first): {name}")
    patch = {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: restarted_at()}}}}}
    patched = await _strategic_patch(api, kind, namespace, name, patch, dry_run=dry_run)
    message = f"{kubectl_name(kind.kind, kind.group)}/{name} restarted"
    return _result("restart", kind, namespace, name, message, patched, stored=patched)


async def set_memory_limit(
    api: KubeApi,
    kind: Kind,
    namespace: str | None,
    name: str,
    container: str,
    memory: str,
    *,
    dry_run: bool = False,
) -> ActionResult:
    """One container's memory limit in the pod template, as ``kubectl set resources
    --limits=memory=...`` patches it."""
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": container, "resources": {"limits": {"memory": memory}}}
    ]}}}}  # fmt: skip
    patched = await _strategic_patch(api, kind, namespace, name, patch, dry_run=dry_run)
    message = (
        f"{kubectl_name(kind.kind, kind.group)}/{name} container {container} memory limit {memory}"
    )
    return _result("set-memory-limit", kind, namespace, name, message, patched, stored=patched)


async def _strategic_patch(
    api: KubeApi, kind: Kind, namespace: str | None, name: str, patch: Any, *, dry_run: bool
) -> Any:
    """A strategic merge patch of the object (a server-side dry run when ``dry_run``): the object
    as the cluster stored it, or would have."""
    path = object_path(kind, namespace, name)
    query = dry_run_query(dry_run)
    return await api.send("PATCH", path, patch, content_type=STRATEGIC_PATCH, query=query)


async def suspend(
    api: KubeApi, kind: Kind, namespace: str | None, name: str, *, suspend: bool
) -> ActionResult:
    if kind.kind not in SUSPENDABLE or kind.group != "batch":
        raise BadRequest(f"{kind.id} cannot be suspended: only CronJobs and Jobs can")
    path = object_path(kind, namespace, name)
    patched = await api.send(
        "PATCH", path, {"spec": {"suspend": suspend}}, content_type=MERGE_PATCH
    )
    verb = "suspended" if suspend else "resumed"
    message = f"{kubectl_name(kind.kind, kind.group)}/{name} {verb}"
    return _result("suspend" if suspend else "resume", kind, namespace, name, message, patched)


def job_name(cronjob: str, suffix: str | None = None) -> str:
    """``<cronjob>-manual-<5 random>``, cut to the 63 characters a Job's name may have."""
    tail = suffix or "".join(secrets.choice(_SUFFIX) for _ in range(5))
    return f"{cronjob[: 63 - len(tail) - 8].rstrip('-.')}-manual-{tail}"


def job_from_cronjob(cronjob: dict[str, Any], name: str) -> dict[str, Any]:
    """The Job ``kubectl create job NAME --from=cronjob/...`` creates."""
    meta = cronjob.get("metadata") or {}
    template = (cronjob.get("spec") or {}).get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    annotations = {INSTANTIATE: "manual", **(template_meta.get("annotations") or {})}
    job_meta: dict[str, Any] = {
        "name": name,
        "namespace": meta.get("namespace"),
        "annotations": annotations,
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": cronjob.get("kind") or "CronJob",
                "name": meta.get("name"),
                "uid": meta.get("uid"),
                "controller": True,
            }
        ],
    }
    if template_meta.get("labels"):
        job_meta["labels"] = template_meta["labels"]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": job_meta,
        "spec": template.get("spec") or {},
    }


async def trigger(api: KubeApi, kind: Kind, namespace: str | None, name: str) -> ActionResult:
    if kind.kind != "CronJob" or kind.group != "batch":
        raise BadRequest(f"only CronJobs can be triggered, not {kind.id}")
    cronjob = await get_object(api, kind, namespace, name)
    job = job_from_cronjob(cronjob, job_name(name))
    created = await api.send("POST", path_of("batch", "v1", "jobs", namespace=namespace), job)
    created_row = {**rows.row(created, kind="Job"), "resourceId": "jobs"}
    message = f"job.batch/{created_row['name']} created from cronjob.batch/{name}"
    return _result("trigger", kind, namespace, name, message, cronjob, created=created_row)
