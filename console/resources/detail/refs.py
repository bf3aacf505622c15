"""What one object says about others: selectors, owner references, the ConfigMaps, Secrets and
claims a pod spec uses, the Services an Ingress routes to. Pure functions over raw objects.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

Obj = Mapping[str, Any]
# Kinds whose pods are described by spec.template (and CronJobs by their job template).
TEMPLATED = frozenset(
    {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController"}
)


def selector_string(selector: Any) -> str | None:
    """A LabelSelector as a label-selector query; None for a missing or empty selector."""
    if not isinstance(selector, Mapping):
        return None
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) or None


def map_selector(selector: Any) -> str | None:
    """A Service's or ReplicationController's plain label map as a selector query."""
    if not isinstance(selector, Mapping) or not selector:
        return None
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))


def selects(selector: Any, labels: Mapping[str, str]) -> bool:
    """Whether a Service-style label map selects ``labels`` (an empty map selects nothing)."""
    if not isinstance(selector, Mapping) or not selector:
        return False
    return all(labels.get(k) == v for k, v in selector.items())


def labels_of(obj: Obj) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def controller_of(obj: Obj) -> Mapping[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def uid_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid", ""))


def pod_template(obj: Obj, kind: str) -> Mapping[str, Any] | None:
    """The pod template (metadata + spec) behind an object, or the pod itself."""
    spec = obj.get("spec") or {}
    if kind == "Pod":
        return {"metadata": obj.get("metadata") or {}, "spec": spec}
    if kind in TEMPLATED:
        return spec.get("template")
    if kind == "CronJob":
        return ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template")
    return None


def _containers(pod_spec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from pod_spec.get(key) or []


def config_refs(pod_spec: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """The ConfigMaps and Secrets a pod spec mounts or reads (volumes, projections, env)."""
    maps: set[str] = set()
    secrets: set[str] = {s.get("name", "") for s in pod_spec.get("imagePullSecrets") or []}
    for volume in pod_spec.get("volumes") or []:
        if volume.get("configMap"):
            maps.add(volume["configMap"].get("name", ""))
        if volume.get("secret"):
            secrets.add(volume["secret"].get("secretName", ""))
        for source in (volume.get("projected") or {}).get("sources") or []:
            if source.get("configMap"):
                maps.add(source["configMap"].get("name", ""))
            if source.get("secret"):
                secrets.add(source["secret"].get("name", ""))
    for container in _containers(pod_spec):
        for env in container.get("envFrom") or []:
            if env.get("configMapRef"):
                maps.add(env["configMapRef"].get("name", ""))
            if env.get("secretRef"):
                secrets.add(env["secretRef"].get("name", ""))
        for env in container.get("env") or []:
            source = env.get("valueFrom") or {}
            if source.get("configMapKeyRef"):
                maps.add(source["configMapKeyRef"].get("name", ""))
            if source.get("secretKeyRef"):
                secrets.add(source["secretKeyRef"].get("name", ""))
    maps.discard("")
    secrets.discard("")
    return maps, secrets


def claim_refs(pod_spec: Mapping[str, Any]) -> set[str]:
    return {
        v["persistentVolumeClaim"].get("claimName", "")
        for v in pod_spec.get("volumes") or []
        if v.get("persistentVolumeClaim")
    } - {""}


def ingress_backends(ingress: Obj) -> set[str]:
    spec = ingress.get("spec") or {}
    backends = [spec.get("defaultBackend") or {}]
    for rule in spec.get("rules") or []:
        backends.extend(p.get("backend") or {} for p in (rule.get("http") or {}).get("paths") or [])
    return {(b.get("service") or {}).get("name", "") for b in backends} - {""}
