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


def _g(obj: Any, *path: str | int, default: Any = None) -> Any:
    for p in path:
        if isinstance(p, int):
            obj = obj[p] if isinstance(obj, list) and len(obj) > p else None
        else:
            obj = obj.get(p) if isinstance(obj, dict) else None
        if obj is None:
            return default
    return obj


def _age(o: Obj) -> str:
    return age(o["metadata"].get("creationTimestamp"))


def _col(
    name: str, cell: Callable[[Obj], Any], *, kind: str = "string", priority: int = 0, fmt: str = ""
) -> Column:
    return Column(name, kind, fmt, priority, cell)


NAME = _col("Name", lambda o: o["metadata"]["name"], fmt="name")
AGE = _col("Age", _age)


def _containers(o: Obj) -> list[Obj]:
    spec = (
        _g(o, "spec", "template", "spec")
        or _g(o, "spec", "jobTemplate", "spec", "template", "spec")
        or {}
    )
    return list(spec.get("containers") or [])


CONTAINERS = _col(
    "Containers", lambda o: ",".join(c.get("name", "") for c in _containers(o)), priority=1
)
IMAGES = _col("Images", lambda o: ",".join(c.get("image", "") for c in _containers(o)), priority=1)


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


SELECTOR = _col("Selector", lambda o: _selector_text(_g(o, "spec", "selector")), priority=1)


def _pod_status(o: Obj) -> str:
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


def _pod_ready(o: Obj) -> str:
    statuses = _g(o, "status", "containerStatuses") or []
    total = len(_g(o, "spec", "containers") or [])
    return f"{sum(1 for c in statuses if c.get('ready'))}/{total}"


def _ports(o: Obj) -> str:
    out = []
    for p in _g(o, "spec", "ports") or []:
        text = f"{p.get('port')}"
        if p.get("nodePort"):
            text += f":{p['nodePort']}"
        out.append(f"{text}/{p.get('protocol', 'TCP')}")
    return ",".join(out) or "<none>"


def _external_ip(o: Obj) -> str:
    spec = o.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return str(spec.get("externalName", "<none>"))
    ips = list(spec.get("externalIPs") or [])
    ingress = _g(o, "status", "loadBalancer", "ingress") or []
    ips += [i.get("ip") or i.get("hostname") for i in ingress]
    if ips:
        return ",".join(ips)
    return "<pending>" if spec.get("type") == "LoadBalancer" else "<none>"


def _job_status(o: Obj) -> str:
    for cond in _g(o, "status", "conditions") or []:
        if cond.get("status") == "True" and cond.get("type") in ("Complete", "Failed", "Suspended"):
            return str(cond["type"])
    return "Running"


def _node_status(o: Obj) -> str:
    for cond in _g(o, "status", "conditions") or []:
        if cond.get("type") == "Ready":
            text = "Ready" if cond.get("status") == "True" else "NotReady"
            return text + (",SchedulingDisabled" if _g(o, "spec", "unschedulable") else "")
    return "Unknown"


def _node_roles(o: Obj) -> str:
    prefix = "node-role.kubernetes.io/"
    roles = [k[len(prefix) :] for k in (o["metadata"].get("labels") or {}) if k.startswith(prefix)]
    return ",".join(sorted(roles)) or "<none>"


def _n(*path: str) -> Callable[[Obj], Any]:
    return lambda o: _g(o, *path, default=0)


def _s(*path: str, default: str = "<none>") -> Callable[[Obj], Any]:
    return lambda o: str(_g(o, *path, default=default))


def _event_object(o: Obj) -> str:
    ref = o.get("involvedObject") or {}
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"


COLUMNS: dict[tuple[str, str], list[Column]] = {
    ("", "pods"): [
        NAME,
        _col("Ready", _pod_ready),
        _col("Status", _pod_status),
        _col(
            "Restarts",
            lambda o: sum(
                c.get("restartCount", 0) for c in _g(o, "status", "containerStatuses") or []
            ),
            kind="string",
        ),
        AGE,
        _col("IP", _s("status", "podIP"), priority=1),
        _col("Node", _s("spec", "nodeName"), priority=1),
        _col("Nominated Node", _s("status", "nominatedNodeName"), priority=1),
        _col("Readiness Gates", lambda o: "<none>", priority=1),
    ],
    ("apps", "deployments"): [
        NAME,
        _col(
            "Ready",
            lambda o: (
                f"{_g(o, 'status', 'readyReplicas', default=0)}/"
                f"{_g(o, 'spec', 'replicas', default=0)}"
            ),
        ),
        _col("Up-to-date", _n("status", "updatedReplicas"), kind="integer"),
        _col("Available", _n("status", "availableReplicas"), kind="integer"),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    ("apps", "replicasets"): [
        NAME,
        _col("Desired", _n("spec", "replicas"), kind="integer"),
        _col("Current", _n("status", "replicas"), kind="integer"),
        _col("Ready", _n("status", "readyReplicas"), kind="integer"),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    ("apps", "statefulsets"): [
        NAME,
        _col(
            "Ready",
            lambda o: (
                f"{_g(o, 'status', 'readyReplicas', default=0)}/"
                f"{_g(o, 'spec', 'replicas', default=0)}"
            ),
        ),
        AGE,
        CONTAINERS,
        IMAGES,
    ],
    ("apps", "daemonsets"): [
        NAME,
        _col("Desired", _n("status", "desiredNumberScheduled"), kind="integer"),
        _col("Current", _n("status", "currentNumberScheduled"), kind="integer"),
        _col("Ready", _n("status", "numberReady"), kind="integer"),
        _col("Up-to-date", _n("status", "updatedNumberScheduled"), kind="integer"),
        _col("Available", _n("status", "numberAvailable"), kind="integer"),
        _col(
            "Node Selector",
            lambda o: (
                ",".join(
                    f"{k}={v}"
                    for k, v in (_g(o, "spec", "template", "spec", "nodeSelector") or {}).items()
                )
                or "<none>"
            ),
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    ("", "services"): [
        NAME,
        _col("Type", _s("spec", "type")),
        _col("Cluster-IP", _s("spec", "clusterIP")),
        _col("External-IP", _external_ip),
        _col("Port(s)", _ports),
        AGE,
        _col(
            "Selector",
            lambda o: (
                ",".join(f"{k}={v}" for k, v in sorted((_g(o, "spec", "selector") or {}).items()))
                or "<none>"
            ),
            priority=1,
        ),
    ],
    ("", "namespaces"): [NAME, _col("Status", _s("status", "phase", default="")), AGE],
    ("", "nodes"): [
        NAME,
        _col("Status", _node_status),
        _col("Roles", _node_roles),
        AGE,
        _col("Version", _s("status", "nodeInfo", "kubeletVersion", default="")),
    ],
    ("", "configmaps"): [
        NAME,
        _col(
            "Data",
            lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {}),
            kind="integer",
        ),
        AGE,
    ],
    ("", "secrets"): [
        NAME,
        _col("Type", _s("type", default="")),
        _col("Data", lambda o: len(o.get("data") or {}), kind="integer"),
        AGE,
    ],
    ("", "serviceaccounts"): [
        NAME,
        _col("Secrets", lambda o: len(o.get("secrets") or []), kind="integer"),
        AGE,
    ],
    ("batch", "jobs"): [
        NAME,
        _col("Status", _job_status),
        _col(
            "Completions",
            lambda o: (
                f"{_g(o, 'status', 'succeeded', default=0)}/"
                f"{_g(o, 'spec', 'completions', default=1)}"
            ),
        ),
        _col("Duration", lambda o: ""),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    ("batch", "cronjobs"): [
        NAME,
        _col("Schedule", _s("spec", "schedule", default="")),
        _col("Timezone", _s("spec", "timeZone")),
        _col("Suspend", lambda o: "True" if _g(o, "spec", "suspend") else "False", kind="boolean"),
        _col("Active", lambda o: len(_g(o, "status", "active") or []), kind="integer"),
        _col("Last Schedule", _s("status", "lastScheduleTime")),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    ("networking.k8s.io", "ingresses"): [
        NAME,
        _col("Class", _s("spec", "ingressClassName")),
        _col(
            "Hosts",
            lambda o: ",".join(r.get("host", "*") for r in _g(o, "spec", "rules") or []) or "*",
        ),
        _col(
            "Address",
            lambda o: ",".join(
                i.get("ip") or i.get("hostname", "")
                for i in _g(o, "status", "loadBalancer", "ingress") or []
            ),
        ),
        _col("Ports", lambda o: "80, 443" if _g(o, "spec", "tls") else "80"),
        AGE,
    ],
    ("", "events"): [
        _col(
            "Last Seen",
            lambda o: _age(
                {
                    "metadata": {
                        "creationTimestamp": o.get("lastTimestamp")
                        or o.get("eventTime")
                        or o["metadata"].get("creationTimestamp")
                    }
                }
            ),
        ),
        _col("Type", _s("type", default="")),
        _col("Reason", _s("reason", default="")),
        _col("Object", _event_object),
        _col("Subobject", _s("involvedObject", "fieldPath", default=""), priority=1),
        _col("Source", _s("source", "component", default=""), priority=1),
        _col("Message", _s("message", default="")),
        _col(
            "First Seen",
            lambda o: _age({"metadata": {"creationTimestamp": o.get("firstTimestamp")}}),
            priority=1,
        ),
        _col("Count", lambda o: o.get("count", 1), kind="integer", priority=1),
        _col("Name", lambda o: o["metadata"]["name"], priority=1),
    ],
    ("", "persistentvolumeclaims"): [
        NAME,
        _col("Status", _s("status", "phase", default="")),
        _col("Volume", _s("spec", "volumeName", default="")),
        _col("Capacity", _s("status", "capacity", "storage", default="")),
        _col("Access Modes", lambda o: ",".join(_g(o, "status", "accessModes") or [])),
        _col("StorageClass", _s("spec", "storageClassName", default="")),
        _col("VolumeAttributesClass", _s("spec", "volumeAttributesClassName")),
        AGE,
        _col("VolumeMode", _s("spec", "volumeMode", default=""), priority=1),
    ],
    ("", "persistentvolumes"): [
        NAME,
        _col("Capacity", _s("spec", "capacity", "storage", default="")),
        _col("Access Modes", lambda o: ",".join(_g(o, "spec", "accessModes") or [])),
        _col("Reclaim Policy", _s("spec", "persistentVolumeReclaimPolicy", default="")),
        _col("Status", _s("status", "phase", default="")),
        _col(
            "Claim",
            lambda o: (
                f"{_g(o, 'spec', 'claimRef', 'namespace', default='')}/"
                f"{_g(o, 'spec', 'claimRef', 'name', default='')}"
                if _g(o, "spec", "claimRef")
                else ""
            ),
        ),
        _col("StorageClass", _s("spec", "storageClassName", default="")),
        _col("VolumeAttributesClass", _s("spec", "volumeAttributesClassName")),
        _col("Reason", _s("status", "reason", default="")),
        AGE,
        _col("VolumeMode", _s("spec", "volumeMode", default=""), priority=1),
    ],
    ("policy", "poddisruptionbudgets"): [
        NAME,
        _col("Min Available", _s("spec", "minAvailable", default="N/A")),
        _col("Max Unavailable", _s("spec", "maxUnavailable", default="N/A")),
        _col("Allowed Disruptions", _n("status", "disruptionsAllowed"), kind="integer"),
        AGE,
    ],
    ("autoscaling", "horizontalpodautoscalers"): [
        NAME,
        _col(
            "Reference",
            lambda o: (
                f"{_g(o, 'spec', 'scaleTargetRef', 'kind', default='')}/"
                f"{_g(o, 'spec', 'scaleTargetRef', 'name', default='')}"
            ),
        ),
        _col("Targets", lambda o: "<unknown>"),
        _col("MinPods", _n("spec", "minReplicas"), kind="integer"),
        _col("MaxPods", _n("spec", "maxReplicas"), kind="integer"),
        _col("Replicas", _n("status", "currentReplicas"), kind="integer"),
        AGE,
    ],
    ("rbac.authorization.k8s.io", "rolebindings"): [
        NAME,
        _col(
            "Role",
            lambda o: (
                f"{_g(o, 'roleRef', 'kind', default='')}/{_g(o, 'roleRef', 'name', default='')}"
            ),
        ),
        AGE,
    ],
    ("rbac.authorization.k8s.io", "clusterrolebindings"): [
        NAME,
        _col(
            "Role",
            lambda o: (
                f"{_g(o, 'roleRef', 'kind', default='')}/{_g(o, 'roleRef', 'name', default='')}"
            ),
        ),
        AGE,
    ],
    ("storage.k8s.io", "storageclasses"): [
        NAME,
        _col("Provisioner", _s("provisioner", default="")),
        _col("ReclaimPolicy", _s("reclaimPolicy", default="Delete")),
        _col("VolumeBindingMode", _s("volumeBindingMode", default="Immediate")),
        _col("AllowVolumeExpansion", lambda o: bool(o.get("allowVolumeExpansion")), kind="boolean"),
        AGE,
    ],
    ("coordination.k8s.io", "leases"): [
        NAME,
        _col("Holder", _s("spec", "holderIdentity", default="")),
        AGE,
    ],
    ("", "endpoints"): [
        NAME,
        _col(
            "Endpoints",
            lambda o: (
                ",".join(
                    f"{a.get('ip')}"
                    for s in o.get("subsets") or []
                    for a in s.get("addresses") or []
                )
                or "<none>"
            ),
        ),
        AGE,
    ],
}
