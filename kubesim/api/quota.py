"""ResourceQuota admission: what the ``ResourceQuota`` admission plugin refuses, and ``status``.

Object counts (``pods``, ``services``, ``configmaps``, ``count/<resource>.<group>``...), the
compute resources of pods (``requests.cpu``, ``limits.memory``, ``cpu``, ``ephemeral-storage``,
``hugepages-*``, extended resources), claims' storage (``requests.storage``, per storage class)
and ``services.nodeports``/``services.loadbalancers`` are enforced on create, with the real 403
messages; a quota on cpu or memory makes every container name its request or limit ("must
specify"). ``status.hard`` and ``status.used`` are recomputed whenever an object in the namespace
is created or removed, as the quota controller would shortly after. Quota scopes and
``scopeSelector`` are not evaluated.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from kubesim.api.core import Core
from kubesim.machinery import quantity
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.status import KubeError

Obj = dict[str, Any]
QUOTAS = ("", "resourcequotas")
PODS = ("", "pods")
CLAIMS = ("", "persistentvolumeclaims")
SERVICES = ("", "services")
_COUNTED = {
    "pods": PODS,
    "services": SERVICES,
    "configmaps": ("", "configmaps"),
    "secrets": ("", "secrets"),
    "persistentvolumeclaims": CLAIMS,
    "replicationcontrollers": ("", "replicationcontrollers"),
    "resourcequotas": QUOTAS,
}
# A quota on one of these makes every container state it (the pod evaluator's validationSet).
_MUST_SPECIFY = frozenset(
    {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}
)
_STORAGE_CLASS = ".storageclass.storage.k8s.io/"


def _counted(name: str) -> tuple[str, str] | None:
    if name in _COUNTED:
        return _COUNTED[name]
    if name.startswith("count/"):
        resource, _, group = name[len("count/") :].partition(".")
        return (group, resource)
    return None


def _subject(name: str) -> tuple[str, str] | None:
    """The resource whose objects a quota name measures."""
    counted = _counted(name)
    if counted is not None:
        return counted
    if name.startswith("services."):
        return SERVICES
    if name == "requests.storage" or _STORAGE_CLASS in name:
        return CLAIMS
    return PODS


def _compute(name: str) -> tuple[str, str]:
    """(``requests``|``limits``, resource) of a pod compute quota name."""
    kind, dot, resource = name.partition(".")
    if dot and kind in ("requests", "limits"):
        return kind, resource
    return "requests", name


def _container_amount(c: Obj, kind: str, resource: str) -> Decimal:
    res = c.get("resources") or {}
    value = (res.get(kind) or {}).get(resource)
    if value is None and kind == "requests":  # a request defaults to its limit
        value = (res.get("limits") or {}).get(resource)
    return quantity.parse(value) if value is not None else Decimal(0)


def _pod_amount(pod: Obj, name: str) -> Decimal:
    """Containers summed, init containers at their peak (what the pod evaluator counts)."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return Decimal(0)
    kind, resource = _compute(name)
    spec = pod.get("spec") or {}
    apps = sum(
        (_container_amount(c, kind, resource) for c in spec.get("containers") or []), Decimal(0)
    )
    inits = [_container_amount(c, kind, resource) for c in spec.get("initContainers") or []]
    return max([apps, *inits])


def _claim_amount(claim: Obj, name: str) -> Decimal:
    spec = claim.get("spec") or {}
    if _STORAGE_CLASS in name:
        storage_class, _, name = name.partition(_STORAGE_CLASS)
        if spec.get("storageClassName") != storage_class:
            return Decimal(0)
        if name == "persistentvolumeclaims":
            return Decimal(1)
    value = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    return quantity.parse(value) if value is not None else Decimal(0)


def _service_amount(service: Obj, name: str) -> Decimal:
    spec = service.get("spec") or {}
    kind = spec.get("type", "ClusterIP")
    if name == "services.loadbalancers":
        return Decimal(kind == "LoadBalancer")
    if name == "services.nodeports" and kind in ("NodePort", "LoadBalancer"):
        return Decimal(len(spec.get("ports") or []))
    return Decimal(0)


def _amount(obj: Obj, name: str) -> Decimal:
    """How much of quota ``name`` one object of the name's subject uses."""
    if _counted(name) is not None:
        return Decimal(1)
    subject = _subject(name)
    if subject == CLAIMS:
        return _claim_amount(obj, name)
    if subject == SERVICES:
        return _service_amount(obj, name)
    return _pod_amount(obj, name)


def _used(objs: Core, namespace: str, name: str) -> Decimal:
    subject = _subject(name)
    assert subject is not None
    return sum((_amount(o, name) for o in objs.store.list(subject, namespace)), Decimal(0))


def _text(value: Decimal, like: Any) -> str:
    return quantity.canonical(value, binary=quantity.is_binary(like))


def _missing(pod: Obj, required: set[str]) -> str:
    """The pod evaluator's Constraints: containers that do not state a quota'd cpu or memory."""
    who: dict[str, list[str]] = {}
    spec = pod.get("spec") or {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        res = c.get("resources") or {}
        stated: set[str] = set()
        for kind, prefixes in (("requests", ("", "requests.")), ("limits", ("limits.",))):
            for resource in res.get(kind) or {}:
                stated.update(p + resource for p in prefixes)
        for name in sorted(required - stated):
            who.setdefault(name, []).append(str(c.get("name", "")))
    return "; ".join(f"{n} for: {','.join(sorted(who[n]))}" for n in sorted(who))


def admit(objs: Core, rt: ResourceType, obj: Obj) -> None:
    """Refuse a create that would take any quota of its namespace past ``hard`` (403)."""
    namespace = obj["metadata"].get("namespace", "")
    if not namespace:
        return
    label = f'{rt.plural}{"." + rt.group if rt.group else ""} "{obj["metadata"]["name"]}"'
    for q in sorted(objs.store.list(QUOTAS, namespace), key=lambda q: q["metadata"]["name"]):
        hard = (q.get("spec") or {}).get("hard") or {}
        qname = q["metadata"]["name"]
        names = sorted(n for n in hard if _subject(n) == rt.group_resource)
        if rt.group_resource == PODS:
            missing = _missing(obj, set(names) & _MUST_SPECIFY)
            if missing:
                raise KubeError(
                    403,
                    f"{label} is forbidden: failed quota: {qname}: must specify {missing}",
                    reason="Forbidden",
                )
        over = []
        for name in names:
            wanted = _amount(obj, name)
            used = _used(objs, namespace, name)
            if wanted and used + wanted > quantity.parse(hard[name]):
                over.append((name, wanted, used, hard[name]))
        if over:
            req = ",".join(f"{n}={_text(w, h)}" for n, w, _, h in over)
            use = ",".join(f"{n}={_text(u, h)}" for n, _, u, h in over)
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
            "used": {n: _text(_used(objs, namespace, n), h) for n, h in hard.items()},
        }
        if q.get("status") != status:
            new = copy.deepcopy(q)
            new["status"] = status
            objs.store.commit(QUOTAS, new)
