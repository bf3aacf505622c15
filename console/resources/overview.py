"""Health per category: every object of the category's kinds judged OK, ATTENTION, SUSPENDED or
IDLE, counted per kind, with the objects that are not OK named and the reason given.

The judgements are deterministic and read only the objects themselves, except a Service's, which
asks the cluster for the pods its selector matches (one filtered list per Service).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from common.errors import NotFound, WharfError
from console.resources import rows
from console.resources.catalog import Catalog, Kind
from console.resources.counts import Failure, failure
from console.resources.detail.refs import ingress_backends, map_selector
from console.resources.kubeapi import KubeApi, path_of, selector_query
from console.resources.listing import collection

OK, ATTENTION, SUSPENDED, IDLE = "OK", "ATTENTION", "SUSPENDED", "IDLE"
CATEGORIES = {
    "workloads": ("deployments", "statefulsets", "daemonsets", "jobs", "cronjobs", "pods"),
    "network": ("services", "ingresses", "networkpolicies"),
    "storage": ("persistentvolumeclaims", "persistentvolumes", "storageclasses"),
    "config": (
        "configmaps",
        "secrets",
        "resourcequotas",
        "horizontalpodautoscalers",
        "poddisruptionbudgets",
    ),
}
MAX_NAMED = 100
Obj = dict[str, Any]
Verdict = tuple[str, str]


class UnknownCategory(NotFound):
    def __init__(self, category: str) -> None:
        super().__init__(f"no overview category {category!r}; one of {', '.join(CATEGORIES)}")


def _replicas(obj: Obj, ready_key: str, desired: int) -> Verdict:
    ready = int((obj.get("status") or {}).get(ready_key) or 0)
    if (obj.get("spec") or {}).get("paused"):
        return SUSPENDED, "rollout paused"
    if desired == 0:
        return IDLE, "scaled to 0"
    return (OK, "") if ready >= desired else (ATTENTION, f"{ready}/{desired} ready")


def _scaled(obj: Obj) -> Verdict:
    return _replicas(obj, "readyReplicas", int((obj.get("spec") or {}).get("replicas", 1) or 0))


def _daemonset(obj: Obj) -> Verdict:
    desired = int((obj.get("status") or {}).get("desiredNumberScheduled") or 0)
    return _replicas(obj, "numberReady", desired)


def _job(obj: Obj) -> Verdict:
    state = rows.status_of("Job", obj)
    return {"Failed": (ATTENTION, "failed"), "Suspended": (SUSPENDED, "suspended")}.get(
        state or "", (OK, "")
    )


def _cronjob(obj: Obj) -> Verdict:
    if (obj.get("spec") or {}).get("suspend"):
        return SUSPENDED, "suspended"
    if not (obj.get("status") or {}).get("lastScheduleTime"):
        return IDLE, "has not run yet"
    return OK, ""


def _pod(obj: Obj) -> Verdict:
    state = rows.pod_status(obj)
    if state == "Completed" or (obj.get("status") or {}).get("phase") == "Succeeded":
        return IDLE, "completed"
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
    )
    return (OK, "") if state == "Running" and ready else (ATTENTION, state)


def _claim(obj: Obj) -> Verdict:
    phase = (obj.get("status") or {}).get("phase")
    return (OK, "") if phase == "Bound" else (ATTENTION, str(phase or "Pending"))


def _volume(obj: Obj) -> Verdict:
    phase = (obj.get("status") or {}).get("phase")
    if phase == "Available":
        return IDLE, "not claimed"
    return (ATTENTION, str(phase)) if phase in ("Released", "Failed") else (OK, "")


def _quota(obj: Obj) -> Verdict:
    status = obj.get("status") or {}
    used, hard = status.get("used") or {}, status.get("hard") or {}
    full = sorted(k for k, v in hard.items() if k in used and str(used[k]) == str(v))
    return (ATTENTION, "at limit: " + ", ".join(full)) if full else (OK, "")


def _hpa(obj: Obj) -> Verdict:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") in ("AbleToScale", "ScalingActive") and cond.get("status") == "False":
            return ATTENTION, str(cond.get("reason") or cond["type"])
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if spec.get("maxReplicas") and status.get("currentReplicas") == spec["maxReplicas"]:
        return ATTENTION, "at maxReplicas"
    return OK, ""


def _pdb(obj: Obj) -> Verdict:
    status = obj.get("status") or {}
    if status.get("expectedPods") and not status.get("disruptionsAllowed"):
        return ATTENTION, "allows no disruption (drains will block)"
    return OK, ""


JUDGES: dict[str, Callable[[Obj], Verdict]] = {
    "Deployment": _scaled,
    "StatefulSet": _scaled,
    "DaemonSet": _daemonset,
    "Job": _job,
    "CronJob": _cronjob,
    "Pod": _pod,
    "PersistentVolumeClaim": _claim,
    "PersistentVolume": _volume,
    "ResourceQuota": _quota,
    "HorizontalPodAutoscaler": _hpa,
    "PodDisruptionBudget": _pdb,
}


async def _service(api: KubeApi, obj: Obj) -> Verdict:
    labels = map_selector((obj.get("spec") or {}).get("selector"))
    if labels is None:
        return OK, ""
    namespace = (obj.get("metadata") or {}).get("namespace")
    path = path_of("", "v1", "pods", namespace=namespace)
    pods = await api.list_all(path, query=selector_query(labels=labels))
    if not pods:
        return ATTENTION, "selects no pods"
    if not any(_pod(p)[0] == OK for p in pods):
        return ATTENTION, "no ready pods"
    return OK, ""


def _ingress(obj: Obj, services: set[tuple[str, str]]) -> Verdict:
    namespace = (obj.get("metadata") or {}).get("namespace", "")
    missing = sorted(n for n in ingress_backends(obj) if (namespace, n) not in services)
    return (ATTENTION, "no service " + ", ".join(missing)) if missing else (OK, "")


async def overview(
    api: KubeApi, catalog: Catalog, category: str, namespace: str | None
) -> dict[str, Any]:
    if category not in CATEGORIES:
        raise UnknownCategory(category)
    kinds = [k for rid in CATEGORIES[category] if (k := catalog.find(rid)) is not None]
    results = await asyncio.gather(*(_summarise(api, k, namespace) for k in kinds))
    return {
        "category": category,
        "namespace": namespace,
        "summaries": [r for r in results if not isinstance(r, Failure)],
        "failed": [
            {"resourceId": f.resource_id, "status": f.status, "reason": f.reason}
            for f in results
            if isinstance(f, Failure)
        ],
    }


async def _summarise(api: KubeApi, kind: Kind, namespace: str | None) -> Obj | Failure:
    try:
        items = await api.list_all(collection(kind, namespace))
        verdicts = await _judge_all(api, kind, items, namespace)
    except WharfError as exc:
        return failure(kind.id, exc)
    tally = dict.fromkeys((OK, ATTENTION, SUSPENDED, IDLE), 0)
    named: list[Obj] = []
    for item, (state, reason) in zip(items, verdicts, strict=True):
        tally[state] += 1
        if state != OK and len(named) < MAX_NAMED:
            meta = item.get("metadata") or {}
            named.append({"namespace": meta.get("namespace"), "name": meta.get("name"),
                          "state": state, "reason": reason})  # fmt: skip
    return {"resourceId": kind.id, "kind": kind.kind, "total": len(items),
            **{k.lower(): v for k, v in tally.items()}, "objects": named}  # fmt: skip


async def _judge_all(
    api: KubeApi, kind: Kind, items: list[Obj], namespace: str | None
) -> list[Verdict]:
    if kind.kind == "Service":
        gate = asyncio.Semaphore(8)

        async def one(obj: Obj) -> Verdict:
            async with gate:
                return await _service(api, obj)

        return list(await asyncio.gather(*(one(i) for i in items)))
    if kind.kind == "Ingress":
        services = await api.list_all(path_of("", "v1", "services", namespace=namespace))
        names = {((s.get("metadata") or {}).get("namespace", ""),
                  (s.get("metadata") or {}).get("name", "")) for s in services}  # fmt: skip
        return [_ingress(i, names) for i in items]
    judge = JUDGES.get(kind.kind, _fine)
    return [judge(i) for i in items]


def _fine(obj: Obj) -> Verdict:
    return OK, ""
