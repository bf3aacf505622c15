"""LimitRange admission: what the ``LimitRanger`` plugin does to pods and claims.

Mutating, on pod create: every container (and init container) missing a request or limit gets the
``defaultRequest``/``default`` of the ``Container`` items of the namespace's LimitRanges (the first
LimitRange to set a resource wins), and the pod is annotated ``kubernetes.io/limit-ranger`` with
what was set. Validating, on pod create and on claim create and update: ``min``, ``max`` and
``maxLimitRequestRatio`` of ``Container``, ``Pod`` and ``PersistentVolumeClaim`` items are enforced
with the plugin's 403 messages, all violations in one answer. A LimitRange's own defaults
(``default`` from ``max``, ``defaultRequest`` from ``default`` or ``min``) are ``defaults``' work.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from kubesim.api.core import Core
from kubesim.machinery import quantity
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.status import KubeError

Obj = dict[str, Any]
LIMITRANGES = ("", "limitranges")
PODS = ("", "pods")
CLAIMS = ("", "persistentvolumeclaims")
ANNOTATION = "kubernetes.io/limit-ranger"
_KINDS = (("containers", "container"), ("initContainers", "init container"))


def _items(objs: Core, namespace: str, kind: str) -> list[Obj]:
    return [
        item
        for lr in objs.store.list(LIMITRANGES, namespace)
        for item in (lr.get("spec") or {}).get("limits") or []
        if isinstance(item, dict) and item.get("type") == kind
    ]


def mutate(objs: Core, rt: ResourceType, obj: Obj) -> None:
    """Fill a new pod's missing requests and limits from the namespace's LimitRanges."""
    if rt.group_resource != PODS:
        return
    namespace = obj["metadata"].get("namespace", "")
    requests: Obj = {}
    limits: Obj = {}
    for item in _items(objs, namespace, "Container"):
        requests = {**(item.get("defaultRequest") or {}), **requests}
        limits = {**(item.get("default") or {}), **limits}
    if not requests and not limits:
        return
    spec = obj.get("spec") or {}
    notes: list[str] = []
    for key, label in _KINDS:
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                notes += _merge(c, requests, limits, f"{label} {c.get('name', '')}")
    if notes:
        annotations = obj["metadata"].setdefault("annotations", {})
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)
        obj.setdefault("status", {})["qosClass"] = quantity.qos_class(spec)


def _merge(container: Obj, requests: Obj, limits: Obj, who: str) -> list[str]:
    resources = container.setdefault("resources", {})
    notes = []
    for field, defaults, word in (("requests", requests, "request"), ("limits", limits, "limit")):
        current = resources.get(field) or {}
        missing = sorted(k for k in defaults if k not in current)
        if missing:
            resources[field] = {**current, **{k: defaults[k] for k in missing}}
            notes.append(f"{', '.join(missing)} {word} for {who}")
    return notes


def validate(objs: Core, rt: ResourceType, obj: Obj, *, creating: bool) -> None:
    """Refuse a pod (on create) or claim whose resources break a LimitRange (403)."""
    if rt.group_resource == PODS and creating:
        errors = _pod_errors(objs, obj)
    elif rt.group_resource == CLAIMS:
        errors = _claim_errors(objs, obj)
    else:
        return
    unique = list(dict.fromkeys(errors))
    if unique:
        text = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
        name = obj["metadata"].get("name", "")
        raise KubeError(403, f'{rt.plural} "{name}" is forbidden: {text}', reason="Forbidden")


def _pod_errors(objs: Core, pod: Obj) -> list[str]:
    namespace = pod["metadata"].get("namespace", "")
    spec = pod.get("spec") or {}
    containers = [
        c.get("resources") or {}
        for key, _ in _KINDS
        for c in spec.get(key) or []
        if isinstance(c, dict)
    ]
    errors: list[str] = []
    for item in _items(objs, namespace, "Container"):
        for res in containers:
            errors += _check("Container", item, res.get("requests") or {}, res.get("limits") or {})
    pod_items = _items(objs, namespace, "Pod")
    if pod_items:
        requests, limits = _pod_total(spec, "requests"), _pod_total(spec, "limits")
        for item in pod_items:
            errors += _check("Pod", item, requests, limits)
    return errors


def _pod_total(spec: Obj, field: str) -> Obj:
    """Containers summed, init containers at their peak, as the plugin's podRequests/podLimits."""
    totals: dict[str, Decimal] = {}
    binary: dict[str, bool] = {}
    for key, _ in _KINDS:
        for c in spec.get(key) or []:
            for name, value in ((c.get("resources") or {}).get(field) or {}).items():
                amount = quantity.parse(value)
                binary.setdefault(name, quantity.is_binary(value))
                if key == "containers":
                    totals[name] = totals.get(name, Decimal(0)) + amount
                else:
                    totals[name] = max(totals.get(name, Decimal(0)), amount)
    return {k: quantity.canonical(v, binary=binary[k]) for k, v in totals.items()}


def _claim_errors(objs: Core, claim: Obj) -> list[str]:
    namespace = claim["metadata"].get("namespace", "")
    requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
    errors: list[str] = []
    for item in _items(objs, namespace, "PersistentVolumeClaim"):
        for name, floor in sorted((item.get("min") or {}).items()):
            errors += _min("PersistentVolumeClaim", name, floor, requests, {})
        for name, ceiling in sorted((item.get("max") or {}).items()):
            if name not in requests:
                errors.append(
                    f"maximum {name} usage per PersistentVolumeClaim is {ceiling}.  "
                    "No request is specified"
                )
            elif quantity.parse(requests[name]) > quantity.parse(ceiling):
                errors.append(
                    f"maximum {name} usage per PersistentVolumeClaim is {ceiling}, "
                    f"but request is {requests[name]}"
                )
    return errors


def _check(kind: str, item: Obj, requests: Obj, limits: Obj) -> list[str]:
    errors: list[str] = []
    for name, floor in sorted((item.get("min") or {}).items()):
        errors += _min(kind, name, floor, requests, limits)
    for name, ceiling in sorted((item.get("max") or {}).items()):
        errors += _max(kind, name, ceiling, requests, limits)
    for name, ratio in sorted((item.get("maxLimitRequestRatio") or {}).items()):
        errors += _ratio(kind, name, ratio, requests, limits)
    return errors


def _min(kind: str, name: str, floor: Any, requests: Obj, limits: Obj) -> list[str]:
    prefix = f"minimum {name} usage per {kind} is {floor}"
    if name not in requests:
        return [f"{prefix}.  No request is specified"]
    if quantity.parse(requests[name]) < quantity.parse(floor):
        return [f"{prefix}, but request is {requests[name]}"]
    if name in limits and quantity.parse(limits[name]) < quantity.parse(floor):
        return [f"{prefix}, but limit is {limits[name]}"]
    return []


def _max(kind: str, name: str, ceiling: Any, requests: Obj, limits: Obj) -> list[str]:
    prefix = f"maximum {name} usage per {kind} is {ceiling}"
    if name not in limits:
        return [f"{prefix}.  No limit is specified"]
    if quantity.parse(limits[name]) > quantity.parse(ceiling):
        return [f"{prefix}, but limit is {limits[name]}"]
    if name in requests and quantity.parse(requests[name]) > quantity.parse(ceiling):
        return [f"{prefix}, but request is {requests[name]}"]
    return []


def _ratio(kind: str, name: str, ratio: Any, requests: Obj, limits: Obj) -> list[str]:
    prefix = f"{name} max limit to request ratio per {kind} is {ratio}"
    request = quantity.parse(requests.get(name, 0))
    limit = quantity.parse(limits.get(name, 0))
    if request == 0:
        return [f"{prefix}, but no request is specified or request is 0"]
    if limit == 0:
        return [f"{prefix}, but no limit is specified or limit is 0"]
    observed = limit / request
    if observed > quantity.parse(ratio):
        return [f"{prefix}, but provided ratio is {float(observed):f}"]
    return []
