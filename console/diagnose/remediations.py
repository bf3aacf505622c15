"""Remediations: fixes proposed from findings, previewed with ``dryRun=All``, applied on request.

| action | proposed for | what it sends (as kubectl would) |
|---|---|---|
| ``rollback`` | a Deployment at revision 2+ whose pods crash-loop or cannot pull | ``rollout undo`` |
| ``raise-memory-limit`` | an OOM-killed workload | strategic patch: the container's memory limit doubled |
| ``restart`` | a crash-looping, OOM-killed or unready workload | ``rollout restart`` |
| ``delete-pod`` | a stuck pod of a controller (it is recreated) | ``DELETE`` the pod |

Every action runs through one code path with ``dry_run`` on or off: the preview sends exactly the
apply's request with ``dryRun=All`` (deletes and rollbacks too), so it changes nothing and returns
the object as the cluster would store it, with a diff against the object as it is. Targets are
``<Kind>/<name>`` in a namespace. This module knows nothing of HTTP or of the audit trail.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import attrs

from common import yamlio
from common.errors import BadRequest
from console.actions import objects, rollback
from console.diagnose.model import Finding
from console.resources.catalog import Kind
from console.resources.discovery import Catalogs
from console.resources.kubeapi import KubeApi
from console.resources.listing import get_object
from console.usage import quantity

ACTIONS = ("rollback", "raise-memory-limit", "restart", "delete-pod")
RESOURCE_IDS = {
    "Deployment": "deployments",
    "StatefulSet": "statefulsets",
    "DaemonSet": "daemonsets",
    "Pod": "pods",
}
WORKLOADS = frozenset({"Deployment", "StatefulSet", "DaemonSet"})
#: Memory limit proposed for an OOM-killed container that had none (bytes): 512 MiB.
DEFAULT_MEMORY = 512 * 1024 * 1024
Obj = dict[str, Any]


@attrs.frozen
class Proposal:
    action: str
    namespace: str
    target: str
    finding: str
    description: str
    params: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class Outcome:
    action: str
    namespace: str
    target: str
    dry_run: bool
    message: str
    object: Obj | None
    diff: str


async def propose(api: KubeApi, catalogs: Catalogs, findings: list[Finding]) -> list[Proposal]:
    """Fixes for ``findings``, in their order; reads each workload once."""
    proposals: list[Proposal] = []
    for finding in findings:
        ref = finding.object
        if ref.namespace is None:
            continue
        workload = None
        if ref.kind in WORKLOADS:
            kind = await catalogs.kind(api, RESOURCE_IDS[ref.kind])
            workload = await get_object(api, kind, ref.namespace, ref.name)
        proposals += _for(finding, workload)
    return proposals


def _for(finding: Finding, workload: Obj | None) -> list[Proposal]:
    ref, code = finding.object, finding.code
    ns, target = ref.namespace or "", f"{ref.kind}/{ref.name}"
    found: list[Proposal] = []

    def add(action: str, description: str, **params: Any) -> None:
        found.append(Proposal(action, ns, target, code, description, params))

    if workload is not None and ref.kind == "Deployment" and code in ("crash-loop", "image-pull"):
        revision = _annotations(workload).get(rollback.REVISION, "")
        if revision.isdigit() and int(revision) > 1:
            add("rollback", f"roll back to the revision before {revision}: this one fails ({code})")
    if workload is not None and code == "oom-killed" and finding.evidence.container:
        container = finding.evidence.container
        current = _memory_limit(workload, container)
        raised = quantity.mebibytes(current * 2 if current else DEFAULT_MEMORY)
        add(
            "raise-memory-limit",
            f"raise container {container}'s memory limit to {raised}"
            + (f" (from {quantity.mebibytes(current)})" if current else ""),
            container=container,
            memory=raised,
        )
    if workload is not None and code in ("crash-loop", "oom-killed", "not-ready"):
        add("restart", f"restart the {ref.kind}'s pods (rollout restart)")
    if code in ("crash-loop", "image-pull", "container-config", "not-ready"):
        for pod in finding.evidence.pods:
            found.append(
                Proposal(
                    "delete-pod",
                    ns,
                    f"Pod/{pod}",
                    code,
                    f"delete the stuck pod {pod}; its controller creates a new one",
                )
            )
    return found


async def run(
    api: KubeApi,
    catalogs: Catalogs,
    *,
    namespace: str,
    action: str,
    target: str,
    params: Mapping[str, Any],
    dry_run: bool,
) -> Outcome:
    """Do ``action`` on ``target`` (``dry_run``: with ``dryRun=All``, changing nothing)."""
    kind, name = await _target(api, catalogs, action, target)
    before = await get_object(api, kind, namespace, name)
    if action == "rollback":
        result = await rollback.rollback(api, kind, namespace, name, dry_run=dry_run)
    elif action == "restart":
        result = await objects.restart(api, kind, namespace, name, dry_run=dry_run)
    elif action == "delete-pod":
        result = await objects.delete(api, kind, namespace, name, dry_run=dry_run)
    else:
        container, memory = _memory_params(params, before)
        result = await objects.set_memory_limit(
            api, kind, namespace, name, container, memory, dry_run=dry_run
        )
    message, after = result.message, result.stored
    if dry_run:
        message += " (dry run: nothing changed)"
    return Outcome(action, namespace, target, dry_run, message, after, _diff(before, after))


async def _target(api: KubeApi, catalogs: Catalogs, action: str, target: str) -> tuple[Kind, str]:
    if action not in ACTIONS:
        raise BadRequest(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")
    kind_name, _, name = target.partition("/")
    wanted = {"Pod"} if action == "delete-pod" else WORKLOADS
    if action in ("rollback", "raise-memory-limit", "restart") and kind_name not in wanted:
        wanted = WORKLOADS
    if kind_name not in wanted or not name:
        shown = " or ".join(f"{k}/<name>" for k in sorted(wanted))
        raise BadRequest(f"target of {action} must be {shown}, not {target[:100]!r}")
    return await catalogs.kind(api, RESOURCE_IDS[kind_name]), name


def _memory_params(params: Mapping[str, Any], workload: Obj) -> tuple[str, str]:
    containers = [str(c.get("name")) for c in _containers(workload)]
    container = params.get("container") or (containers[0] if len(containers) == 1 else None)
    if not isinstance(container, str) or container not in containers:
        raise BadRequest(f"params.container must name one of the containers: {containers}")
    memory = params.get("memory")
    if memory is None:
        current = _memory_limit(workload, container)
        memory = quantity.mebibytes(current * 2 if current else DEFAULT_MEMORY)
    try:
        quantity.size_bytes(str(memory))
    except ValueError:
        raise BadRequest(f"params.memory is not a quantity: {str(memory)[:40]!r}") from None
    return str(container), str(memory)


def _containers(workload: Obj) -> list[Obj]:
    spec = ((workload.get("spec") or {}).get("template") or {}).get("spec") or {}
    return list(spec.get("containers") or [])


def _memory_limit(workload: Obj, container: str) -> int | None:
    for c in _containers(workload):
        if c.get("name") == container:
            limit = ((c.get("resources") or {}).get("limits") or {}).get("memory")
            return quantity.size_bytes(str(limit)) if limit else None
    return None


def _annotations(obj: Obj) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


def _diff(before: Obj, after: Obj | None) -> str:
    """A unified diff of the two objects as YAML, bookkeeping left out."""

    def text(obj: Obj | None) -> list[str]:
        if obj is None:
            return []
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _BOOKKEEPING}
        shown = {**obj, "metadata": meta}
        shown.pop("status", None)
        return yamlio.dump(shown, sort_keys=True).splitlines(keepends=True)

    return "".join(difflib.unified_diff(text(before), text(after), "before", "after"))


_BOOKKEEPING = frozenset({"managedFields", "resourceVersion", "generation"})
