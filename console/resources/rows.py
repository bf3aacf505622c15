"""Summary rows (kind, namespace, name, status, age) computed from raw objects, as kubectl would
print them: the pod STATUS column follows kubectl's ``printPod``, ages its ``HumanDuration``.

Pure functions over dicts; nothing here calls a cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

Obj = Mapping[str, Any]


def row(obj: Obj, *, kind: str | None = None, now: datetime | None = None) -> dict[str, Any]:
    """``kind`` for list items, which a real API server sends without ``kind``."""
    meta = obj.get("metadata") or {}
    kind = kind or str(obj.get("kind") or "")
    return {
        "kind": kind,
        "namespace": meta.get("namespace") or None,
        "name": meta.get("name", ""),
        "status": status_of(kind, obj),
        "age": age(meta.get("creationTimestamp"), now=now),
    }


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def age(stamp: Any, *, now: datetime | None = None) -> str | None:
    created = parse_time(stamp)
    if created is None:
        return None
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return human_duration(((now or datetime.now(UTC)) - created).total_seconds())


def human_duration(seconds_f: float) -> str:
    """kubectl's ``duration.HumanDuration``."""
    seconds = int(seconds_f)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return _units(minutes, "m", seconds % 60, "s")
    if minutes < 180:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        return _units(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return _units(hours // 24, "d", hours % 24, "h")
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        return _units(hours // 24 // 365, "y", (hours // 24) % 365, "d")
    return f"{hours // 24 // 365}y"


def _units(big: int, big_unit: str, small: int, small_unit: str) -> str:
    """``3m`` or ``3m20s``: kubectl leaves the smaller unit out when it is zero."""
    return f"{big}{big_unit}" if small == 0 else f"{big}{big_unit}{small}{small_unit}"


def status_of(kind: str, obj: Obj) -> str | None:
    fn = _STATUS.get(kind)
    if fn is not None:
        return fn(obj)
    status = obj.get("status")
    if isinstance(status, Mapping):
        if isinstance(status.get("phase"), str):
            return str(status["phase"])
        ready = _condition(obj, "Ready")
        if ready is not None:
            return "Ready" if ready.get("status") == "True" else "NotReady"
    return None


def _condition(obj: Obj, kind: str) -> Mapping[str, Any] | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == kind:
            return cond
    return None


def pod_status(pod: Obj) -> str:
    """kubectl's pod STATUS column (``printPod``), without sidecar restart bookkeeping."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init_total = len(spec.get("initContainers") or [])
    initializing = False
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term and term.get("exitCode") == 0:
            continue
        if cs.get("started") and _restartable(spec, cs.get("name")):
            continue
        initializing = True
        if term:
            reason = "Init:" + (term.get("reason") or _exit(term))
        elif waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{init_total}"
        break
    if not initializing or _true(pod, "Initialized"):
        reason = _container_reason(pod, reason)
    deleting = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
    if deleting and status.get("reason") == "NodeLost":
        return "Unknown"
    if deleting and status.get("phase") not in ("Succeeded", "Failed"):
        return "Terminating"
    return str(reason)


def _container_reason(pod: Obj, reason: str) -> str:
    has_running = False
    for cs in reversed((pod.get("status") or {}).get("containerStatuses") or []):
        state = cs.get("state") or {}
        waiting, term = state.get("waiting"), state.get("terminated")
        if waiting and waiting.get("reason"):
            reason = waiting["reason"]
        elif term:
            reason = term.get("reason") or _exit(term)
        elif cs.get("ready") and state.get("running") is not None:
            has_running = True
    if reason == "Completed" and has_running:
        return "Running" if _true(pod, "Ready") else "NotReady"
    return reason


def _exit(term: Mapping[str, Any]) -> str:
    signal = term.get("signal") or 0
    return f"Signal:{signal}" if signal else f"ExitCode:{term.get('exitCode', 0)}"


def _restartable(spec: Mapping[str, Any], name: Any) -> bool:
    return any(
        c.get("name") == name and c.get("restartPolicy") == "Always"
        for c in spec.get("initContainers") or []
    )


def _true(obj: Obj, kind: str) -> bool:
    cond = _condition(obj, kind)
    return cond is not None and cond.get("status") == "True"


def _replicas(obj: Obj, ready_key: str = "readyReplicas", desired: Any = None) -> str:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    want = int(desired if desired is not None else spec.get("replicas", 1) or 0)
    ready = int(status.get(ready_key) or 0)
    if spec.get("paused"):
        return f"Paused {ready}/{want}"
    if want == 0:
        return "ScaledDown"
    return f"{'Ready' if ready >= want else 'NotReady'} {ready}/{want}"


def _daemonset(obj: Obj) -> str:
    status = obj.get("status") or {}
    return _replicas(obj, "numberReady", status.get("desiredNumberScheduled") or 0).replace(
        "ScaledDown", "NoNodes"
    )


def _job(obj: Obj) -> str:
    if _true(obj, "Complete"):
        return "Complete"
    if _true(obj, "Failed"):
        return "Failed"
    if (obj.get("spec") or {}).get("suspend"):
        return "Suspended"
    return "Running" if (obj.get("status") or {}).get("active") else "Pending"


def _cronjob(obj: Obj) -> str:
    if (obj.get("spec") or {}).get("suspend"):
        return "Suspended"
    return "Active" if (obj.get("status") or {}).get("active") else "Scheduled"


def _node(obj: Obj) -> str:
    ready = _condition(obj, "Ready")
    state = "Unknown" if ready is None else "Ready"
    if ready is not None and ready.get("status") != "True":
        state = "NotReady" if ready.get("status") == "False" else "Unknown"
    if (obj.get("spec") or {}).get("unschedulable"):
        state += ",SchedulingDisabled"
    return state


def _service(obj: Obj) -> str:
    return str((obj.get("spec") or {}).get("type") or "ClusterIP")


def _event(obj: Obj) -> str:
    return str(obj.get("type") or "Normal")


def _hpa(obj: Obj) -> str:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return (
        f"{status.get('currentReplicas', 0)} replicas "
        f"({spec.get('minReplicas', 1)}-{spec.get('maxReplicas', '?')})"
    )


_STATUS: dict[str, Callable[[Obj], str]] = {
    "Pod": pod_status,
    "Deployment": _replicas,
    "ReplicaSet": _replicas,
    "StatefulSet": _replicas,
    "ReplicationController": _replicas,
    "DaemonSet": _daemonset,
    "Job": _job,
    "CronJob": _cronjob,
    "Node": _node,
    "Service": _service,
    "Event": _event,
    "HorizontalPodAutoscaler": _hpa,
}
