"""Health per category: every object of the category's kinds judged OK, ATTENTION, SUSPENDED or
IDLE, counted per kind, with the objects that are not OK named and the reason given.

The judgements are deterministic and read only the objects themselves, except a Service's, which
asks the cluster for the pods its selector matches (one filtered list per Service), and an
Ingress's, which checks its backends against the Services. Objects are judged a page at a time and
only the ones that are not OK are kept, so thousands of pods cost one page of memory.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import attrs

from common.errors import NotFound, WharfError
from console.resources import rows
from console.resources.catalog import Catalog, Kind
from console.resources.counts import Failure, failure
from console.resources.detail.refs import ingress_backends, map_selector
from console.resources.kubeapi import KubeApi, path_of, selector_query
from console.resources.listing import collection

OK, ATTENTION, SUSPENDED, IDLE = "OK", "ATTENTION", "SUSPENDED", "IDLE"
STATES = (OK, ATTENTION, SUSPENDED, IDLE)
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


@attrs.frozen
class Flagged:
    """An object that is not OK, and why."""

    namespace: str | None
    name: str
    state: str
    reason: str


@attrs.frozen
class KindHealth:
    """One kind's objects counted by state (``STATES``), the first ``MAX_NAMED`` not OK named."""

    kind: Kind
    total: int
    states: dict[str, int]
    flagged: tuple[Flagged, ...]


@attrs.frozen
class Overview:
    category: str
    namespace: str | None
    kinds: tuple[KindHealth, ...]
    failed: tuple[Failure, ...]


async def overview(
    api: KubeApi, catalog: Catalog, category: str, namespace: str | None
) -> Overview:
    if category not in CATEGORIES:
        raise UnknownCategory(category)
    kinds = [k for rid in CATEGORIES[category] if (k := catalog.find(rid)) is not None]
    results = await asyncio.gather(*(_summarise(api, k, namespace) for k in kinds))
    return Overview(
        category=category,
        namespace=namespace,
        kinds=tuple(r for r in results if isinstance(r, KindHealth)),
        failed=tuple(r for r in results if isinstance(r, Failure)),
    )


@attrs.define
class _Tally:
    """One kind's verdicts, counted as pages arrive; only the objects that are not OK are kept."""

    kind: Kind
    total: int = 0
    states: dict[str, int] = attrs.field(factory=lambda: dict.fromkeys(STATES, 0))
    named: list[Flagged] = attrs.field(factory=list)

    def add(self, items: list[Obj], verdicts: list[Verdict]) -> None:
        for item, (state, reason) in zip(items, verdicts, strict=True):
            self.total += 1
            self.states[state] += 1
            if state != OK and len(self.named) < MAX_NAMED:
                meta = item.get("metadata") or {}
                name = str(meta.get("name", ""))
                self.named.append(Flagged(meta.get("namespace"), name, state, reason))

    def health(self) -> KindHealth:
        return KindHealth(self.kind, self.total, dict(self.states), tuple(self.named))


async def _summarise(api: KubeApi, kind: Kind, namespace: str | None) -> KindHealth | Failure:
    """Judged page by page, so a kind with thousands of objects is never held whole."""
    tally = _Tally(kind)
    try:
        services = await _service_names(api, namespace) if kind.kind == "Ingress" else set()
        pages = api.chunks(collection(kind, namespace))
        async with contextlib.aclosing(pages):
            async for page in pages:
                items = [i for i in page.get("items") or [] if isinstance(i, dict)]
                tally.add(items, await _judge_page(api, kind, items, services))
    except WharfError as exc:
        return failure(kind.id, exc)
    return tally.health()


async def _service_names(api: KubeApi, namespace: str | None) -> set[tuple[str, str]]:
    services = await api.list_all(path_of("", "v1", "services", namespace=namespace))
    return {((s.get("metadata") or {}).get("namespace", ""),
             (s.get("metadata") or {}).get("name", "")) for s in services}  # fmt: skip


async def _judge_page(
    api: KubeApi, kind: Kind, items: list[Obj], services: set[tuple[str, str]]
) -> list[Verdict]:
    if kind.kind == "Service":
        gate = asyncio.Semaphore(8)

        async def one(obj: Obj) -> Verdict:
            async with gate:
                return await _service(api, obj)

        return list(await asyncio.gather(*(one(i) for i in items)))
    if kind.kind == "Ingress":
        return [_ingress(i, services) for i in items]
    judge = JUDGES.get(kind.kind, _fine)
    return [judge(i) for i in items]


def _fine(obj: Obj) -> Verdict:
    return OK, ""
