"""Per-kind relations, resolved server-side: owned pods, selecting Services, Ingress → Service,
PVC → PV → StorageClass, mounted ConfigMaps and Secrets, HPA targets, and their reverses.

Each relator reads through a :class:`Lookup` and returns ``{relation name: [entries]}``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from console.resources.detail import refs
from console.resources.detail.lookup import Lookup, Obj

Relator = Callable[[Lookup, Obj, str], Awaitable[dict[str, list[Obj]]]]


def _ns(obj: Obj) -> str | None:
    return (obj.get("metadata") or {}).get("namespace") or None


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


async def owned_pods(look: Lookup, obj: Obj, kind: str) -> list[Obj]:
    spec = obj.get("spec") or {}
    if kind == "ReplicationController":
        labels = refs.map_selector(spec.get("selector"))
    else:
        labels = refs.selector_string(spec.get("selector"))
    if labels is None:
        return []
    owners = {refs.uid_of(obj)}
    if kind == "Deployment":
        sets = await look.list("replicasets", _ns(obj), labels=labels)
        owners = {refs.uid_of(rs) for rs in sets if _controlled_by(rs, owners)}
    pods = await look.list("pods", _ns(obj), labels=labels)
    return [p for p in pods if _controlled_by(p, owners)]


def _controlled_by(obj: Obj, uids: set[str]) -> bool:
    ref = refs.controller_of(obj)
    return ref is not None and ref.get("uid") in uids


async def _config(
    look: Lookup, namespace: str | None, pod_specs: list[Any]
) -> dict[str, list[Obj]]:
    maps: set[str] = set()
    secrets: set[str] = set()
    claims: set[str] = set()
    for spec in pod_specs:
        found_maps, found_secrets = refs.config_refs(spec or {})
        maps |= found_maps
        secrets |= found_secrets
        claims |= refs.claim_refs(spec or {})
    out: dict[str, list[Obj]] = {
        "configMaps": await _resolve_all(look, "configmaps", namespace, maps),
        "secrets": await _resolve_all(look, "secrets", namespace, secrets),
    }
    out.update(await _claims(look, namespace, claims))
    return out


async def _resolve_all(
    look: Lookup, resource_id: str, namespace: str | None, names: set[str]
) -> list[Obj]:
    found = await asyncio.gather(*(look.resolve(resource_id, namespace, n) for n in sorted(names)))
    return [f for f in found if f is not None]


async def _claims(look: Lookup, namespace: str | None, names: set[str]) -> dict[str, list[Obj]]:
    claims = await _resolve_all(look, "persistentvolumeclaims", namespace, names)
    volumes: list[Obj] = []
    classes: set[str] = set()
    for name in sorted(names):
        pvc = next((c for c in await look.list("persistentvolumeclaims", namespace)
                    if _name(c) == name), None)  # fmt: skip
        spec = (pvc or {}).get("spec") or {}
        if spec.get("volumeName"):
            pv = await look.resolve("persistentvolumes", None, spec["volumeName"])
            volumes.extend([pv] if pv else [])
        if spec.get("storageClassName"):
            classes.add(spec["storageClassName"])
    return {
        "persistentVolumeClaims": claims,
        "persistentVolumes": volumes,
        "storageClasses": await _resolve_all(look, "storageclasses", None, classes),
    }


async def _services_for(look: Lookup, namespace: str | None, labels: list[Any]) -> list[Obj]:
    services = await look.list("services", namespace)
    return [
        look.ref("services", s)
        for s in services
        if any(refs.selects((s.get("spec") or {}).get("selector"), lab or {}) for lab in labels)
    ]


async def _hpas_for(look: Lookup, obj: Obj, kind: str) -> list[Obj]:
    hpas = await look.list("horizontalpodautoscalers", _ns(obj))
    return [
        look.ref("horizontalpodautoscalers", h)
        for h in hpas
        if ((h.get("spec") or {}).get("scaleTargetRef") or {}).get("kind") == kind
        and ((h.get("spec") or {}).get("scaleTargetRef") or {}).get("name") == _name(obj)
    ]


async def workload(look: Lookup, obj: Obj, kind: str) -> dict[str, list[Obj]]:
    pods = await owned_pods(look, obj, kind)
    template = refs.pod_template(obj, kind) or {}
    specs = [template.get("spec"), *(p.get("spec") for p in pods)]
    labels = [(template.get("metadata") or {}).get("labels"), *(refs.labels_of(p) for p in pods)]
    out = {
        "pods": [look.ref("pods", p) for p in pods],
        "services": await _services_for(look, _ns(obj), labels),
        "horizontalPodAutoscalers": await _hpas_for(look, obj, kind),
        **await _config(look, _ns(obj), specs),
    }
    if kind == "Deployment":
        sets = await look.list("replicasets", _ns(obj))
        out["replicaSets"] = [
            look.ref("replicasets", rs) for rs in sets if _controlled_by(rs, {refs.uid_of(obj)})
        ]
    return out


async def cronjob(look: Lookup, obj: Obj, kind: str) -> dict[str, list[Obj]]:
    jobs = [j for j in await look.list("jobs", _ns(obj)) if _controlled_by(j, {refs.uid_of(obj)})]
    pods = [p for j in jobs for p in await owned_pods(look, j, "Job")]
    template = refs.pod_template(obj, kind) or {}
    return {
        "jobs": [look.ref("jobs", j) for j in jobs],
        "pods": [look.ref("pods", p) for p in pods],
        **await _config(look, _ns(obj), [template.get("spec")]),
    }


async def pod(look: Lookup, obj: Obj, kind: str) -> dict[str, list[Obj]]:
    spec = obj.get("spec") or {}
    node = spec.get("nodeName")
    account = spec.get("serviceAccountName") or spec.get("serviceAccount")
    nodes = await look.resolve("nodes", None, node) if node else None
    accounts = await look.resolve("serviceaccounts", _ns(obj), account) if account else None
    return {
        "nodes": [nodes] if nodes else [],
        "serviceAccounts": [accounts] if accounts else [],
        "services": await _services_for(look, _ns(obj), [refs.labels_of(obj)]),
        **await _config(look, _ns(obj), [spec]),
    }


async def service(look: Lookup, obj: Obj, kind: str) -> dict[str, list[Obj]]:
    selector = (obj.get("spec") or {}).get("selector")
    labels = refs.map_selector(selector)
    pods = await look.list("pods", _ns(obj), labels=labels) if labels else []
    ingresses = [
        look.ref("ingresses", i)
        for i in await look.list("ingresses", _ns(obj))
        if _name(obj) in refs.ingress_backends(i)
    ]
    return {"pods": [look.ref("pods", p) for p in pods], "ingresses": ingresses}


async def ingress(look: Lookup, obj: Obj, kind: str) -> dict[str, list[Obj]]:
    names = refs.ingress_backends(obj)
    return {"services": await _resolve_all(look, "services", _ns(obj), names)}


async def claim(look: Lookup, obj: Obj, kind: str) -> dict[str, list[Obj]]:
    out = await _claims(look, _ns(obj), {_name(obj)})
    out.pop("persistentVolumeClaims")
    out["pods"] = [
        look.ref("pods", p)
        for p in await look.list("pods", _ns(obj))
        if _name(obj) in refs.claim_refs(p.get("spec") or {})
    ]
    return out


async def volume(look: Lookup, obj: Obj, kind: str) -> dict[str, list[Obj]]:
    spec = obj.get("spec") or {}
    ref = spec.get("claimRef") or {}
    found = (
        await look.resolve("persistentvolumeclaims", ref.get("namespace"), ref["name"])
        if ref.get("name")
        else None
    )
    classes = {spec["storageClassName"]} if spec.get("storageClassName") else set()
    return {
        "persistentVolumeClaims": [found] if found else [],
        "storageClasses": await _resolve_all(look, "storageclasses", None, classes),
    }


async def mounted(look: Lookup, obj: Obj, kind: str) -> dict[str, list[Obj]]:
    slot = 0 if kind == "ConfigMap" else 1
    pods = await look.list("pods", _ns(obj))
    return {
        "pods": [
            look.ref("pods", p)
            for p in pods
            if _name(obj) in refs.config_refs(p.get("spec") or {})[slot]
        ]
    }


async def autoscaler(look: Lookup, obj: Obj, kind: str) -> dict[str, list[Obj]]:
    target = (obj.get("spec") or {}).get("scaleTargetRef") or {}
    found = look.catalog.by_kind(target.get("apiVersion", ""), target.get("kind", ""))
    if found is None or not target.get("name"):
        return {"scaleTarget": []}
    entry = await look.resolve(found.id, _ns(obj), target["name"])
    return {"scaleTarget": [entry] if entry else []}


async def node(look: Lookup, obj: Obj, kind: str) -> dict[str, list[Obj]]:
    pods = await look.list("pods", None, fields=f"spec.nodeName={_name(obj)}")
    return {"pods": [look.ref("pods", p) for p in pods]}


RELATORS: dict[str, Relator] = {
    **dict.fromkeys(refs.TEMPLATED, workload),
    "CronJob": cronjob,
    "Pod": pod,
    "Service": service,
    "Ingress": ingress,
    "PersistentVolumeClaim": claim,
    "PersistentVolume": volume,
    "ConfigMap": mounted,
    "Secret": mounted,
    "HorizontalPodAutoscaler": autoscaler,
    "Node": node,
}
