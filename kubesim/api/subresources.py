"""The ``scale``, ``eviction`` and ``binding`` subresources.

``scale`` reads and writes ``spec.replicas`` of Deployments, ReplicaSets, StatefulSets and CRDs that
declare a scale subresource, through an ``autoscaling/v1 Scale``. ``eviction`` deletes a pod unless
a PodDisruptionBudget covering it would be violated, in which case it answers 429 like the real one.
``binding`` (and the ``bindings`` resource) assigns a pod to a node, once, as the scheduler does.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesim.api import deletion
from kubesim.api.objects import Objects
from kubesim.api.params import Target
from kubesim.machinery import jsonpath
from kubesim.machinery.meta import WriteOptions
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.selectors import label_matcher
from kubesim.machinery.status import KubeError, bad_request, not_found, stale

Obj = dict[str, Any]
SCALE_TYPE = ResourceType(
    group="autoscaling",
    version="v1",
    plural="scale",
    singular="",
    kind="Scale",
    namespaced=True,
    verbs=(),
)


def _paths(rt: ResourceType) -> tuple[str, str, str]:
    """(spec replicas, status replicas, label selector) JSON paths."""
    if rt.crd is not None:
        for v in rt.crd["spec"]["versions"]:
            if v["name"] == rt.version:
                scale = (v.get("subresources") or {}).get("scale") or {}
                return (
                    scale.get("specReplicasPath", ".spec.replicas"),
                    scale.get("statusReplicasPath", ".status.replicas"),
                    scale.get("labelSelectorPath", ""),
                )
    return (".spec.replicas", ".status.replicas", "")


def _selector_string(obj: Obj) -> str:
    sel = (obj.get("spec") or {}).get("selector") or {}
    if not isinstance(sel, dict):
        return ""
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for expr in sel.get("matchExpressions") or []:
        values = ",".join(expr.get("values") or [])
        op = {"In": "in", "NotIn": "notin"}.get(expr.get("operator", ""))
        if op:
            parts.append(f"{expr['key']} {op} ({values})")
        elif expr.get("operator") == "Exists":
            parts.append(expr["key"])
        else:
            parts.append(f"!{expr['key']}")
    return ",".join(parts)


def scale_of(rt: ResourceType, obj: Obj) -> Obj:
    spec_path, status_path, selector_path = _paths(rt)
    spec = jsonpath.find(obj, spec_path)
    status = jsonpath.find(obj, status_path)
    meta = obj["metadata"]
    selector = (
        (jsonpath.find(obj, selector_path) or [""])[0] if selector_path else _selector_string(obj)
    )
    out_status: Obj = {"replicas": int(status[0]) if status else 0}
    if selector:
        out_status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": int(spec[0]) if spec else 0},
        "status": out_status,
    }


def _set_path(obj: Obj, path: str, value: Any) -> None:
    keys = [k for k in path.split(".") if k]
    cur = obj
    for k in keys[:-1]:
        cur = cur.setdefault(k, {})
    cur[keys[-1]] = value


def update_scale(objs: Objects, target: Target, body: Any, opts: WriteOptions) -> Obj:
    rt = target.rt
    live = objs.store.get(rt.group_resource, target.namespace, target.name)
    if live is None:
        raise not_found(rt.group, rt.plural, target.name)
    if not isinstance(body, dict) or body.get("kind", "Scale") != "Scale":
        raise bad_request("the body must be an autoscaling/v1 Scale")
    replicas = (body.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or replicas < 0:
        raise KubeError(
            422,
            f'Scale.autoscaling "{target.name}" is invalid: spec.replicas: '
            f"Invalid value: {replicas}: must be greater than or equal to 0",
        )
    rv = (body.get("metadata") or {}).get("resourceVersion")
    if rv and rv != live["metadata"]["resourceVersion"]:
        raise stale(rt.group, rt.plural, target.name)
    obj = copy.deepcopy(objs.present(rt, live))
    _set_path(obj, _paths(rt)[0], replicas)
    scaled = WriteOptions(manager=opts.manager, dry_run=opts.dry_run, subresource="scale")
    updated = objs.update(rt, target.namespace, target.name, obj, scaled)
    return scale_of(rt, updated)


# -- eviction -----------------------------------------------------------------------------------
def _ready(pod: Obj) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def _budget(value: Any, expected: int, *, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        pct = int(value[:-1])
        n = expected * pct
        return -(-n // 100) if round_up else n // 100
    return int(value)


def _pdb_allows(objs: Objects, pdb: Obj, pod: Obj) -> tuple[bool, str]:
    sel = label_matcher(_selector_string(pdb))
    pods = [
        p
        for p in objs.store.list(("", "pods"), pod["metadata"]["namespace"])
        if sel(p) and not p["metadata"].get("deletionTimestamp")
    ]
    expected = len(pods)
    healthy = sum(1 for p in pods if _ready(p))
    spec = pdb.get("spec") or {}
    if "minAvailable" in spec:
        desired = _budget(spec["minAvailable"], expected, round_up=True)
    elif "maxUnavailable" in spec:
        desired = expected - _budget(spec["maxUnavailable"], expected, round_up=True)
    else:
        desired = expected
    ok = healthy - 1 >= desired if _ready(pod) else healthy >= desired
    msg = (
        f"The disruption budget {pdb['metadata']['name']} needs {desired} healthy pods and "
        f"has {healthy} currently"
    )
    return ok, msg


def evict(objs: Objects, target: Target, body: Any, opts: WriteOptions) -> Obj:
    pods = objs.registry.get("", "v1", "pods")
    assert pods is not None
    pod = objs.store.get(pods.group_resource, target.namespace, target.name)
    if pod is None:
        raise not_found("", "pods", target.name)
    if not isinstance(body, dict) or body.get("kind", "Eviction") != "Eviction":
        raise bad_request("the body must be a policy/v1 Eviction")
    name = (body.get("metadata") or {}).get("name", target.name)
    if name != target.name:
        raise bad_request("name in URL does not match name in Eviction object")
    matching = [
        p
        for p in objs.store.list(("policy", "poddisruptionbudgets"), target.namespace)
        if label_matcher(_selector_string(p))(pod) and _selector_string(p)
    ]
    if len(matching) > 1:
        raise KubeError(
            500,
            "This pod has more than one PodDisruptionBudget, which the eviction "
            "subresource does not support.",
        )
    if matching and not pod["metadata"].get("deletionTimestamp"):
        ok, msg = _pdb_allows(objs, matching[0], pod)
        if not ok:
            raise KubeError(
                429,
                "Cannot evict pod as it would violate the pod's disruption budget.",
                details={"causes": [{"reason": "DisruptionBudget", "message": msg}]},
            )
    options = dict(body.get("deleteOptions") or {})
    dry = opts.dry_run or bool(options.get("dryRun"))
    deletion.delete(
        objs,
        pods,
        target.namespace,
        target.name,
        options,
        WriteOptions(manager=opts.manager, dry_run=dry),
    )
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


# -- binding ------------------------------------------------------------------------------------
def bind(objs: Objects, target: Target, body: Any, opts: WriteOptions) -> Obj:
    """Set ``spec.nodeName`` of the pod a Binding names (pods/binding or the bindings resource)."""
    pods = objs.registry.get("", "v1", "pods")
    assert pods is not None
    if not isinstance(body, dict) or not isinstance(body.get("target"), dict):
        raise bad_request("the body must be a v1 Binding with a target")
    name = target.name or (body.get("metadata") or {}).get("name", "")
    pod = objs.store.get(pods.group_resource, target.namespace, name)
    if pod is None:
        raise not_found("", "pods", name)
    node = body["target"].get("name", "")
    if not node:
        raise KubeError(422, f'Binding "{name}" is invalid: target.name: Required value')
    bound = (pod.get("spec") or {}).get("nodeName")
    if bound:
        raise KubeError(
            409,
            f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already '
            f'assigned to node "{bound}"',
            details={"name": name, "kind": "pods/binding"},
        )
    obj = copy.deepcopy(objs.present(pods, pod))
    obj["spec"]["nodeName"] = node
    objs.update(pods, target.namespace, name, obj, opts)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
