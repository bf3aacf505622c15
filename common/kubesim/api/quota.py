"""ResourceQuota admission: what the ``ResourceQuota`` admission plugin refuses, and ``status``.

Object-count quotas (``pods``, ``services``, ``configmaps``, ``count/<resource>.<group>``...) and
the compute quotas of pods (``requests.cpu``, ``limits.memory``, ``cpu``...) are enforced on
create, with the real 403 message; ``status.hard`` and ``status.used`` are recomputed whenever an
object in the namespace is created or removed, as the quota controller would shortly after.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from common.kubesim.api.core import Core
from common.kubesim.machinery import quantity
from common.kubesim.machinery.registry import ResourceType
from common.kubesim.machinery.status import KubeError

Obj = dict[str, Any]
QUOTAS = ("", "resourcequotas")
_COUNTED = {
    "pods": ("", "pods"),
    "services": ("", "services"),
    "configmaps": ("", "configmaps"),
    "secrets": ("", "secrets"),
    "persistentvolumeclaims": ("", "persistentvolumeclaims"),
    "replicationcontrollers": ("", "replicationcontrollers"),
    "resourcequotas": ("", "resourcequotas"),
}
_COMPUTE = {
    "cpu": ("requests", "cpu"),
    "memory": ("requests", "memory"),
    "requests.cpu": ("requests", "cpu"),
    "requests.memory": ("requests", "memory"),
    "limits.cpu": ("limits", "cpu"),
    "limits.memory": ("limits", "memory"),
}


def _counted(name: str) -> tuple[str, str] | None:
    if name in _COUNTED:
        return _COUNTED[name]
    if name.startswith("count/"):
        resource, _, group = name[len("count/") :].partition(".")
        return (group, resource)
    return None


def _pod_amount(pod: Obj, kind: str, resource: str) -> Decimal:
    total = Decimal(0)
    for c in (pod.get("spec") or {}).get("containers") or []:
        value = ((c.get("resources") or {}).get(kind) or {}).get(resource)
        if value is None and kind == "requests":  # a request defaults to its limit
            value = ((c.get("resources") or {}).get("limits") or {}).get(resource)
        total += quantity.parse(value) if value is not None else 0
    return total


def _live_pods(objs: Core, namespace: str) -> list[Obj]:
    return [
        p
        for p in objs.store.list(("", "pods"), namespace)
        if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    ]


def _used(objs: Core, namespace: str, name: str) -> Decimal:
    counted = _counted(name)
    if counted is not None:
        return Decimal(len(objs.store.list(counted, namespace)))
    if name in _COMPUTE:
        kind, resource = _COMPUTE[name]
        return sum(
            (_pod_amount(p, kind, resource) for p in _live_pods(objs, namespace)), Decimal(0)
        )
    return Decimal(0)


def _text(value: Decimal, name: str) -> str:
    if name.endswith("cpu") and value != value.to_integral_value():
        return f"{int(value * 1000)}m"
    return str(int(value)) if value == value.to_integral_value() else str(value)


def admit(objs: Core, rt: ResourceType, obj: Obj) -> None:
    """Refuse a create that would take any quota of its namespace past ``hard`` (403)."""
    namespace = obj["metadata"].get("namespace", "")
    if not namespace:
        return
    for q in objs.store.list(QUOTAS, namespace):
        hard = (q.get("spec") or {}).get("hard") or {}
        over: list[tuple[str, Decimal, Decimal, str]] = []
        missing: list[str] = []
        for name, limit in hard.items():
            counted = _counted(name)
            if counted == rt.group_resource:
                wanted = Decimal(1)
            elif rt.group_resource == ("", "pods") and name in _COMPUTE:
                wanted = _pod_amount(obj, *_COMPUTE[name])
                if wanted == 0 and name.startswith(("limits.", "requests.")):
                    missing.append(name)
                    continue
            else:
                continue
            used = _used(objs, namespace, name)
            if used + wanted > quantity.parse(limit):
                over.append((name, wanted, used, str(limit)))
        label = f'{rt.plural}{"." + rt.group if rt.group else ""} "{obj["metadata"]["name"]}"'
        qname = q["metadata"]["name"]
        if missing:
            names = ",".join(sorted(missing))
            raise KubeError(
                403,
                f"{label} is forbidden: failed quota: {qname}: must specify {names}",
                reason="Forbidden",
            )
        if over:
            req = ",".join(f"{n}={_text(w, n)}" for n, w, _, _ in over)
            use = ",".join(f"{n}={_text(u, n)}" for n, _, u, _ in over)
            lim = ",".join(f"{n}={h}" for n, _, _, h in over)
            raise KubeError(
                403,
                f"{label} is forbidden: exceeded quota: {qname}, requested: "
                f"{req}, used: {use}, limited: {lim}",
                reason="Forbidden",
            )


def refresh(objs: Core, namespace: str) -> None:
    """Bring ``status.hard``/``status.used`` of the namespace's quotas up to date."""
    for q in objs.store.list(QUOTAS, namespace):
        hard = (q.get("spec") or {}).get("hard") or {}
        status = {
            "hard": dict(hard),
            "used": {n: _text(_used(objs, namespace, n), n) for n in hard},
        }
        if q.get("status") != status:
            new = copy.deepcopy(q)
            new["status"] = status
            objs.store.commit(QUOTAS, new)
