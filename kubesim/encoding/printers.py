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


def _parse(timestamp: Any) -> datetime.datetime | None:
    try:
        return datetime.datetime.strptime(str(timestamp)[:19], "%Y-%m-%dT%H:%M:%S").replace(
            tzinfo=datetime.UTC
        )
    except ValueError:
        return None


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
# The wide columns of the kinds that run a pod template (but StatefulSets, which show no selector).
TEMPLATE_WIDE = [CONTAINERS, IMAGES, SELECTOR]

# Deployments and StatefulSets: ready replicas over desired ones.
READY_REPLICAS = col(
    "Ready",
    lambda o: (
        f"{cell(o, 'status', 'readyReplicas', default=0)}/{cell(o, 'spec', 'replicas', default=0)}"
    ),
)


def _since(timestamp: Any) -> str:
    return age(timestamp) + " ago" if timestamp else ""


def _init_status(o: Obj, statuses: list[Obj]) -> str | None:
    """printPod's init-container pass: the reason while an init container has not succeeded."""
    total = len(cell(o, "spec", "initContainers") or [])
    for i, cs in enumerate(statuses):
        state = cs.get("state") or {}
        term, wait = state.get("terminated"), state.get("waiting")
        if term and term.get("exitCode") == 0:
            continue
        if term:
            if term.get("reason"):
                return f"Init:{term['reason']}"
            if term.get("signal"):
                return f"Init:Signal:{term['signal']}"
            return f"Init:ExitCode:{term.get('exitCode')}"
        if wait and wait.get("reason") and wait["reason"] != "PodInitializing":
            return f"Init:{wait['reason']}"
        return f"Init:{i}/{total}"
    return None


def pod_status(o: Obj) -> str:
    """The STATUS column, following kubectl's printPod."""
    status = o.get("status") or {}
    reason = str(status.get("reason") or status.get("phase") or "")
    init = _init_status(o, status.get("initContainerStatuses") or [])
    if init is not None:
        reason = init
    else:
        running = False
        for cs in reversed(status.get("containerStatuses") or []):
            state = cs.get("state") or {}
            term, wait = state.get("terminated") or {}, state.get("waiting") or {}
            if wait.get("reason"):
                reason = wait["reason"]
            elif term.get("reason"):
                reason = term["reason"]
            elif term:
                signal = term.get("signal")
                reason = f"Signal:{signal}" if signal else f"ExitCode:{term.get('exitCode', 0)}"
            elif cs.get("ready") and "running" in state:
                running = True
        if reason == "Completed" and running:
            ready = any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in status.get("conditions") or []
            )
            reason = "Running" if ready else "NotReady"
    if o["metadata"].get("deletionTimestamp"):
        return "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason or "Unknown"


def pod_ready(o: Obj) -> str:
    statuses = cell(o, "status", "containerStatuses") or []
    total = len(cell(o, "spec", "containers") or [])
    ready = sum(1 for c in statuses if c.get("ready") and "running" in (c.get("state") or {}))
    return f"{ready}/{total}"


def pod_restarts(o: Obj) -> str:
    """RESTARTS: the count, and how long ago the last restart was, as ``3 (2m ago)``."""
    statuses = cell(o, "status", "containerStatuses") or []
    count = sum(int(c.get("restartCount", 0)) for c in statuses)
    last = max(
        (cell(c, "lastState", "terminated", "finishedAt") or "" for c in statuses), default=""
    )
    return f"{count} ({_since(last)})" if count and last else str(count)


def job_duration(o: Obj) -> str:
    start = cell(o, "status", "startTime")
    if not start:
        return ""
    end = cell(o, "status", "completionTime")
    begin, finish = _parse(start), _parse(end) if end else datetime.datetime.now(datetime.UTC)
    if begin is None or finish is None:
        return ""
    return human_duration(int((finish - begin).total_seconds()))


def job_completions(o: Obj) -> str:
    succeeded = cell(o, "status", "succeeded", default=0)
    completions = cell(o, "spec", "completions")
    if completions is None:
        return f"{succeeded}/1 of {cell(o, 'spec', 'parallelism', default=1)}"
    return f"{succeeded}/{completions}"


def node_address(kind: str) -> Callable[[Obj], str]:
    def find(o: Obj) -> str:
        for a in cell(o, "status", "addresses") or []:
            if a.get("type") == kind:
                return str(a.get("address", ""))
        return "<none>"

    return find


def _first(values: list[str], limit: int = 3) -> str:
    if not values:
        return "<none>"
    shown = ",".join(values[:limit])
    return shown + (f" + {len(values) - limit} more..." if len(values) > limit else "")


def endpoints(o: Obj) -> str:
    out = []
    for subset in o.get("subsets") or []:
        ports_ = [p.get("port") for p in subset.get("ports") or []] or [None]
        for a in subset.get("addresses") or []:
            out += [f"{a.get('ip')}:{p}" if p else str(a.get("ip")) for p in ports_]
    return _first(out)


def slice_ports(o: Obj) -> str:
    ports_ = [str(p.get("port")) for p in o.get("ports") or [] if p.get("port") is not None]
    return ",".join(ports_) or "<unset>"


def slice_endpoints(o: Obj) -> str:
    return _first([a for e in o.get("endpoints") or [] for a in e.get("addresses") or []])


def revision_controller(o: Obj) -> str:
    for ref in o["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            group = str(ref.get("apiVersion", "")).rpartition("/")[0]
            kind = str(ref.get("kind", "")).lower()
            return f"{kind}.{group}/{ref.get('name')}" if group else f"{kind}/{ref.get('name')}"
    return "<none>"


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
    """STATUS of a Job (printJob, 1.32)."""
    if o["metadata"].get("deletionTimestamp"):
        return "Terminating"
    true = {
        c.get("type") for c in cell(o, "status", "conditions") or [] if c.get("status") == "True"
    }
    for kind in ("Complete", "Failed", "FailureTarget", "SuccessCriteriaMet", "Suspended"):
        if kind in true:
            return kind
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


def integer(name: str, *path: str) -> Column:
    """An integer column showing the field at ``path`` (0 when unset)."""
    return col(name, lambda o: cell(o, *path, default=0), kind="integer")


def text(*path: str, default: str = "<none>") -> Callable[[Obj], Any]:
    return lambda o: str(cell(o, *path, default=default))


def reference(*path: str) -> Callable[[Obj], str]:
    """``kind/name`` of the object reference at ``path`` (a binding's role, an autoscaler's target)."""
    return lambda o: f"{cell(o, *path, 'kind', default='')}/{cell(o, *path, 'name', default='')}"


def event_object(o: Obj) -> str:
    ref = o.get("involvedObject") or {}
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"


def _subjects(kind: str) -> Callable[[Obj], str]:
    """A binding's subjects of ``kind``, comma-joined (ServiceAccounts as ``namespace/name``)."""

    def names(o: Obj) -> str:
        subjects = [s for s in o.get("subjects") or [] if s.get("kind") == kind]
        if kind == "ServiceAccount":
            return ", ".join(f"{s.get('namespace', '')}/{s.get('name', '')}" for s in subjects)
        return ", ".join(str(s.get("name", "")) for s in subjects)

    return names


BINDING_SUBJECTS = [
    col("Users", _subjects("User"), priority=1),
    col("Groups", _subjects("Group"), priority=1),
    col("ServiceAccounts", _subjects("ServiceAccount"), priority=1),
]

#: How many of an autoscaler's metrics its Targets cell shows before "+ N more...".
_HPA_SHOWN = 2


def hpa_targets(o: Obj) -> str:
    """The Targets cell of an autoscaling/v2 HorizontalPodAutoscaler, as the printers'
    ``formatHPAMetrics`` writes it: ``cpu: 3%/50%``, a value target as ``<current>/<target>``,
    ``<unknown>`` until the controller has a current value."""
    specs = cell(o, "spec", "metrics", default=None) or []
    if not specs:
        return "<none>"
    statuses = cell(o, "status", "currentMetrics", default=None) or []
    shown = [
        _hpa_metric(spec, statuses[i] if i < len(statuses) else {}) for i, spec in enumerate(specs)
    ]
    text_ = ", ".join(shown[:_HPA_SHOWN])
    more = len(shown) - _HPA_SHOWN
    return f"{text_} + {more} more..." if more > 0 else text_


def _hpa_metric(spec: Obj, status: Obj) -> str:
    kind = spec.get("type", "")
    key = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods",
           "Object": "object", "External": "external"}.get(kind)  # fmt: skip
    if key is None:
        return "<unknown type>"
    source, now = spec.get(key) or {}, status.get(key) or {}
    target, current = source.get("target") or {}, now.get("current") or {}
    if "averageUtilization" in target or (key.endswith("esource") and "averageValue" not in target):
        have = current.get("averageUtilization")
        want = target.get("averageUtilization")
        pair = (
            f"{'<unknown>' if have is None else f'{have}%'}/"
            f"{'<auto>' if want is None else f'{want}%'}"
        )
    else:
        field = "averageValue" if "averageValue" in target else "value"
        pair = f"{current.get(field, '<unknown>')}/{target.get(field, '<unknown>')}"
        if key in ("external", "object") and field == "averageValue":
            pair += " (avg)"
    if key in ("resource", "containerResource"):
        return f"{source.get('name', '')}: {pair}"
    return pair


def apiservice_service(o: Obj) -> str:
    """kube-aggregator's APIService ``ConvertToTable``: ``Local`` or the backing ``ns/name``."""
    service = cell(o, "spec", "service")
    if not isinstance(service, dict):
        return "Local"
    return f"{service.get('namespace', '')}/{service.get('name', '')}"


def apiservice_available(o: Obj) -> str:
    """The ``Available`` condition's status, with its reason when it is not True."""
    for condition in cell(o, "status", "conditions", default=None) or []:
        if condition.get("type") == "Available":
            status, reason = str(condition.get("status", "")), condition.get("reason")
            return f"{status} ({reason})" if status != "True" and reason else status
    return "Unknown"
