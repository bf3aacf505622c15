"""``kubectl rollout undo`` (to the previous revision) for Deployments, StatefulSets and DaemonSets.

Deployments (kubectl's ``DeploymentRollbacker``): among the ReplicaSets the Deployment controls,
take the second-highest ``deployment.kubernetes.io/revision``; skip when its template (without the
``pod-template-hash`` label) already equals the Deployment's; otherwise send a JSON patch replacing
``/spec/template`` with it and ``/metadata/annotations`` with the ReplicaSet's annotations, except
that the Deployment keeps its own values of the revision bookkeeping annotations. A paused
Deployment is refused.

StatefulSets and DaemonSets: among the ControllerRevisions the object controls, sorted by revision,
take the one before the last and send its ``data`` (a ``{"spec":{"template":…,"$patch":"replace"}}``
patch) as a strategic merge patch, skipping when it already matches.
"""

from __future__ import annotations

import copy
from typing import Any

from common.errors import BadRequest, Conflict
from console.actions import ActionResult, dry_run_query, kubectl_name
from console.resources import rows
from console.resources.catalog import Kind
from console.resources.detail.refs import controller_of, selector_string, uid_of
from console.resources.kubeapi import JSON_PATCH, STRATEGIC_PATCH, KubeApi, Query, path_of
from console.resources.kubeapi import selector_query as query_for
from console.resources.listing import get_object, object_path

REVISION = "deployment.kubernetes.io/revision"
HASH_LABEL = "pod-template-hash"
# kubectl's annotationsToSkip: the Deployment keeps its own values of these.
KEEP_ON_DEPLOYMENT = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        "deployment.kubernetes.io/revision-history",
        "deployment.kubernetes.io/desired-replicas",
        "deployment.kubernetes.io/max-replicas",
        "deprecated.deployment.rollback.to",
    }
)
Obj = dict[str, Any]


async def rollback(
    api: KubeApi, kind: Kind, namespace: str | None, name: str, *, dry_run: bool = False
) -> ActionResult:
    """``rollout undo``; ``dry_run`` sends the same patch with ``dryRun=All``."""
    query = dry_run_query(dry_run)
    if kind.group == "apps" and kind.kind == "Deployment":
        return await _deployment(api, kind, namespace, name, query)
    if kind.group == "apps" and kind.kind in ("StatefulSet", "DaemonSet"):
        return await _from_history(api, kind, namespace, name, query)
    raise BadRequest(f"no rollback for {kind.id}: only Deployments, StatefulSets and DaemonSets")


async def _owned(api: KubeApi, resource: str, owner: Obj) -> list[Obj]:
    meta = owner.get("metadata") or {}
    labels = selector_string((owner.get("spec") or {}).get("selector"))
    path = path_of("apps", "v1", resource, namespace=meta.get("namespace"))
    items = await api.list_all(path, query=query_for(labels=labels))
    return [i for i in items if (controller_of(i) or {}).get("uid") == uid_of(owner)]


def _revision(rs: Obj) -> int | None:
    value = ((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION)
    try:
        return int(str(value))
    except ValueError:
        return None


def previous_replicaset(sets: list[Obj]) -> Obj | None:
    """kubectl's ``deploymentRevision`` with ``toRevision=0``: the second-highest revision."""
    latest, previous = -1, -1
    latest_rs: Obj | None = None
    previous_rs: Obj | None = None
    for rs in sets:
        value = _revision(rs)
        if value is None:
            continue
        if latest < value:
            previous, previous_rs = latest, latest_rs
            latest, latest_rs = value, rs
        elif previous < value:
            previous, previous_rs = value, rs
    return previous_rs


def _without_hash(template: Any) -> Obj:
    out = copy.deepcopy(template) if isinstance(template, dict) else {}
    labels = (out.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
        if not labels:
            del out["metadata"]["labels"]
    return out


def _typed(template: Obj) -> Obj:
    """As Go's typed comparison sees it: a null creationTimestamp is the same as none."""
    meta = {k: v for k, v in (template.get("metadata") or {}).items() if v is not None}
    return {**template, "metadata": meta}


def rollback_annotations(deployment: Obj, rs: Obj) -> dict[str, str]:
    own = (deployment.get("metadata") or {}).get("annotations") or {}
    theirs = (rs.get("metadata") or {}).get("annotations") or {}
    out = {k: own[k] for k in KEEP_ON_DEPLOYMENT if k in own}
    out.update((k, v) for k, v in theirs.items() if k not in KEEP_ON_DEPLOYMENT)
    return out


async def _deployment(
    api: KubeApi, kind: Kind, namespace: str | None, name: str, query: Query
) -> ActionResult:
    deployment = await get_object(api, kind, namespace, name)
    if (deployment.get("spec") or {}).get("paused"):
        raise Conflict(
            "you cannot rollback a paused deployment; resume it first with "
            "'kubectl rollout resume' and try again"
        )
    target = previous_replicaset(await _owned(api, "replicasets", deployment))
    if target is None:
        raise Conflict(f'no rollout history found for deployment "{name}"')
    template = _without_hash((target.get("spec") or {}).get("template"))
    label = kubectl_name(kind.kind, kind.group)
    current = _without_hash((deployment.get("spec") or {}).get("template"))
    if _typed(template) == _typed(current):
        return _done(kind, namespace, name, _skipped(label, name, _revision(target)), deployment)
    # kubectl marshals the typed template, whose metadata always carries creationTimestamp.
    template["metadata"] = {"creationTimestamp": None, **(template.get("metadata") or {})}
    patch = [
        {"op": "replace", "path": "/spec/template", "value": template},
        {"op": "replace", "path": "/metadata/annotations",
         "value": rollback_annotations(deployment, target)},
    ]  # fmt: skip
    path = object_path(kind, namespace, name)
    patched = await api.send("PATCH", path, patch, content_type=JSON_PATCH, query=query)
    return _done(kind, namespace, name, f"{label}/{name} rolled back", patched)


def _skipped(label: str, name: str, revision: Any) -> str:
    """kubectl's message when the previous revision is already what runs."""
    return f"{label}/{name} skipped rollback (current template already matches revision {revision})"


def _done(kind: Kind, namespace: str | None, name: str, message: str, obj: Obj) -> ActionResult:
    row = rows.row(obj, kind=kind.kind)
    return ActionResult("rollback", kind.id, namespace, name, message, row=row, stored=obj)


def _history_template(revision: Obj) -> Obj:
    data = revision.get("data") or {}
    template = dict(((data.get("spec") or {}).get("template")) or {})
    template.pop("$patch", None)
    return template


async def _from_history(
    api: KubeApi, kind: Kind, namespace: str | None, name: str, query: Query
) -> ActionResult:
    obj = await get_object(api, kind, namespace, name)
    history = await _owned(api, "controllerrevisions", obj)
    if len(history) <= 1:
        raise Conflict("no last revision to roll back to")
    history.sort(
        key=lambda r: (int(r.get("revision") or 0), (r.get("metadata") or {}).get("name", ""))
    )
    target = history[-2]
    label = kubectl_name(kind.kind, kind.group)
    current = (obj.get("spec") or {}).get("template") or {}
    if _typed(_history_template(target)) == _typed(current):
        return _done(kind, namespace, name, _skipped(label, name, target.get("revision")), obj)
    path = object_path(kind, namespace, name)
    data = target.get("data") or {}
    patched = await api.send("PATCH", path, data, content_type=STRATEGIC_PATCH, query=query)
    return _done(kind, namespace, name, f"{label}/{name} rolled back", patched)
