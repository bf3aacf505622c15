"""Deployment status: the counts and conditions kstatus, Helm and ``kubectl rollout status`` read.

``Available`` follows ``maxUnavailable``; ``Progressing`` moves through ``NewReplicaSetCreated``,
``ReplicaSetUpdated`` and ``NewReplicaSetAvailable``, and turns ``False`` with
``ProgressDeadlineExceeded`` when a rollout makes no progress for ``progressDeadlineSeconds``.
"""

from __future__ import annotations

import copy

from kubesim.controllers.client import fmt_time, now_utc, parse_time, set_condition
from kubesim.store import Obj

DEPLOY = ("apps", "deployments")
REVISION = "deployment.kubernetes.io/revision"
HASH = "pod-template-hash"


def revision_of(rs: Obj) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def strip_hash(template: Obj) -> Obj:
    t = copy.deepcopy(template or {})
    labels = (t.get("metadata") or {}).get("labels")
    if labels:
        labels.pop(HASH, None)
    return t


def _resolve(value: object, total: int, *, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        scaled = total * int(value[:-1])
        return -(-scaled // 100) if round_up else scaled // 100
    return int(str(value or 0))


def surge_and_unavailable(d: Obj) -> tuple[int, int]:
    spec = d.get("spec") or {}
    replicas = int(spec.get("replicas", 1))
    strategy = spec.get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0, replicas
    ru = strategy.get("rollingUpdate") or {}
    surge = _resolve(ru.get("maxSurge", "25%"), replicas, round_up=True)
    unavailable = _resolve(ru.get("maxUnavailable", "25%"), replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def deployment_status(d: Obj, rss: list[Obj], created: bool) -> tuple[Obj, float | None]:
    """The Deployment's status given its ReplicaSets, and when to look again (progress deadline)."""
    spec, old = d["spec"], d.get("status") or {}
    replicas = int(spec.get("replicas", 1))
    new = next(
        (
            r
            for r in rss
            if strip_hash(r["spec"].get("template")) == strip_hash(spec.get("template") or {})
        ),
        None,
    )

    def total(field: str) -> int:
        return sum(int((r.get("status") or {}).get(field) or 0) for r in rss)

    status: Obj = {
        "observedGeneration": d["metadata"].get("generation", 1),
        "replicas": total("replicas"),
        "updatedReplicas": int(((new or {}).get("status") or {}).get("replicas") or 0),
        "readyReplicas": total("readyReplicas"),
        "availableReplicas": total("availableReplicas"),
        "unavailableReplicas": max(0, replicas - total("availableReplicas")),
    }
    if old.get("collisionCount"):
        status["collisionCount"] = old["collisionCount"]
    status = {k: v for k, v in status.items() if v or k in ("observedGeneration", "replicas")}
    now = fmt_time(now_utc())
    _, unavailable = surge_and_unavailable(d)
    conditions = list(old.get("conditions") or [])
    if status.get("availableReplicas", 0) >= replicas - unavailable:
        conditions = set_condition(
            conditions,
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            now,
            update_time=True,
        )
    else:
        conditions = set_condition(
            conditions,
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            now,
            update_time=True,
        )
    conditions, wake = _progress(d, new, status, old, conditions, now, created)
    # the new ReplicaSet's ReplicaFailure (pods refused by admission) shows on the Deployment
    failure = next(
        (
            c
            for c in ((new or {}).get("status") or {}).get("conditions") or []
            if c.get("type") == "ReplicaFailure"
        ),
        None,
    )
    conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
    if failure is not None:
        conditions.append({**failure, "lastUpdateTime": failure.get("lastTransitionTime", now)})
    status["conditions"] = conditions
    return status, wake


def _progress(
    d: Obj,
    new: Obj | None,
    status: Obj,
    old: Obj,
    conditions: list[Obj],
    now: str,
    created: bool,
) -> tuple[list[Obj], float | None]:
    spec = d["spec"]
    replicas = int(spec.get("replicas", 1))
    name = new["metadata"]["name"] if new else ""
    if spec.get("paused"):
        return set_condition(
            conditions,
            "Progressing",
            "Unknown",
            "DeploymentPaused",
            "Deployment is paused",
            now,
            update_time=True,
        ), None
    complete = (
        status.get("updatedReplicas", 0) == replicas
        and status.get("availableReplicas", 0) >= replicas
        and status.get("replicas", 0) == replicas
    )
    if complete:
        return set_condition(
            conditions,
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            f'ReplicaSet "{name}" has successfully progressed.',
            now,
            update_time=True,
        ), None
    counts = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")
    moved = created or any(status.get(k, 0) != old.get(k, 0) for k in counts)
    current = next((c for c in conditions if c["type"] == "Progressing"), None)
    if moved or current is None:
        reason, message = (
            ("NewReplicaSetCreated", f'Created new replica set "{name}"')
            if created
            else ("ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.')
        )
        conditions = [c for c in conditions if c["type"] != "Progressing"]
        since = (
            current["lastTransitionTime"] if current and current.get("status") == "True" else now
        )
        conditions.append(
            {
                "type": "Progressing",
                "status": "True",
                "lastUpdateTime": now,
                "lastTransitionTime": since,
                "reason": reason,
                "message": message,
            }
        )
        current = conditions[-1]
    deadline = int(spec.get("progressDeadlineSeconds", 600))
    updated = parse_time(current.get("lastUpdateTime"))
    left = deadline - (now_utc() - updated).total_seconds() if updated else deadline
    if current.get("reason") != "ProgressDeadlineExceeded" and left <= 0:
        conditions = set_condition(
            conditions,
            "Progressing",
            "False",
            "ProgressDeadlineExceeded",
            f'ReplicaSet "{name}" has timed out progressing.',
            now,
            update_time=True,
        )
        return conditions, None
    return conditions, (left + 0.5 if current.get("reason") != "ProgressDeadlineExceeded" else None)
