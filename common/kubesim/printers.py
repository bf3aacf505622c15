"""Printer columns of the built-in kinds, as kube-apiserver's internalversion printers define them."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import attrs

Obj = dict[str, Any]


@attrs.frozen
class Column:
    name: str
    type: str
    format: str
    priority: int
    cell: Callable[[Obj], Any]
    description: str = ""


def human_duration(seconds: int) -> str:
    """k8s.io/apimachinery duration.HumanDuration."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m{s}s" if s else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        m = minutes % 60
        return f"{hours}h{m}m" if m else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d{h}h" if h else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        d = (hours // 24) % 365
        return f"{hours // 24 // 365}y{d}d" if d else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def age(timestamp: Any) -> str:
    if not isinstance(timestamp, str) or not timestamp:
        return "<unknown>"
    try:
        then = datetime.datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.UTC
        )
    except ValueError:
        return "<unknown>"
    return human_duration(int((datetime.datetime.now(datetime.UTC) - then).total_seconds()))


def cell(obj: Any, *path: str | int, default: Any = None) -> Any:
    for p in path:
        if isinstance(p, int):
            obj = obj[p] if isinstance(obj, list) and len(obj) > p else None
        else:
            obj = obj.get(p) if isinstance(obj, dict) else None
        if obj is None:
            return default
    return obj


def age_of(o: Obj) -> str:
    return age(o["metadata"].get("creationTimestamp"))


def col(
    name: str, cell: Callable[[Obj], Any], *, kind: str = "string", priority: int = 0, fmt: str = ""
) -> Column:
    return Column(name, kind, fmt, priority, cell)


NAME = col("Name", lambda o: o["metadata"]["name"], fmt="name")
AGE = col("Age", age_of)


def _containers(o: Obj) -> list[Obj]:
    spec = (
        cell(o, "spec", "template", "spec")
        or cell(o, "spec", "jobTemplate", "spec", "template", "spec")
        or {}
    )
    return list(spec.get("containers") or [])


CONTAINERS = col(
    "Containers", lambda o: ",".join(c.get("name", "") for c in _containers(o)), priority=1
)
IMAGES = col("Images", lambda o: ",".join(c.get("image", "") for c in _containers(o)), priority=1)


def _selector_text(sel: Any) -> str:
    if not isinstance(sel, dict):
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for expr in sel.get("matchExpressions") or []:
        op, key, values = expr.get("operator"), expr.get("key"), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) or "<none>"


SELECTOR = col("Selector", lambda o: _selector_text(cell(o, "spec", "selector")), priority=1)


def pod_status(o: Obj) -> str:
    if o["metadata"].get("deletionTimestamp"):
        return "Terminating"
    status = o.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for cs in status.get("initContainerStatuses") or []:
        state = cs.get("state") or {}
        if (
            "waiting" in state
            and state["waiting"].get("reason", "PodInitializing") != "PodInitializing"
        ):
            return f"Init:{state['waiting']['reason']}"
    for cs in status.get("containerStatuses") or []:
        state = cs.get("state") or {}
        if state.get("waiting", {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif state.get("terminated", {}).get("reason"):
            reason = state["terminated"]["reason"]
    return str(reason)


def pod_ready(o: Obj) -> str:
    statuses = cell(o, "status", "containerStatuses") or []
    total = len(cell(o, "spec", "containers") or [])
    return f"{sum(1 for c in statuses if c.get('ready'))}/{total}"


def ports(o: Obj) -> str:
    out = []
    for p in cell(o, "spec", "ports") or []:
        text = f"{p.get('port')}"
        if p.get("nodePort"):
            text += f":{p['nodePort']}"
        out.append(f"{text}/{p.get('protocol', 'TCP')}")
    return ",".join(out) or "<none>"


def external_ip(o: Obj) -> str:
    spec = o.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return str(spec.get("externalName", "<none>"))
    ips = list(spec.get("externalIPs") or [])
    ingress = cell(o, "status", "loadBalancer", "ingress") or []
    ips += [i.get("ip") or i.get("hostname") for i in ingress]
    if ips:
        return ",".join(ips)
    return "<pending>" if spec.get("type") == "LoadBalancer" else "<none>"


def job_status(o: Obj) -> str:
    for cond in cell(o, "status", "conditions") or []:
        if cond.get("status") == "True" and cond.get("type") in ("Complete", "Failed", "Suspended"):
            return str(cond["type"])
    return "Running"


def node_status(o: Obj) -> str:
    for cond in cell(o, "status", "conditions") or []:
        if cond.get("type") == "Ready":
            text = "Ready" if cond.get("status") == "True" else "NotReady"
            return text + (",SchedulingDisabled" if cell(o, "spec", "unschedulable") else "")
    return "Unknown"


def node_roles(o: Obj) -> str:
    prefix = "node-role.kubernetes.io/"
    roles = [k[len(prefix) :] for k in (o["metadata"].get("labels") or {}) if k.startswith(prefix)]
    return ",".join(sorted(roles)) or "<none>"


def number(*path: str) -> Callable[[Obj], Any]:
    return lambda o: cell(o, *path, default=0)


def text(*path: str, default: str = "<none>") -> Callable[[Obj], Any]:
    return lambda o: str(cell(o, *path, default=default))


def event_object(o: Obj) -> str:
    ref = o.get("involvedObject") or {}
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"
