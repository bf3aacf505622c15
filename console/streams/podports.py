"""Where a port-forward goes: the one running pod and container port a pod, Service or workload
and a remote port reach, resolved once, as ``kubectl port-forward`` resolves them (ready pods
first, then the oldest; a Service's port becomes its ``targetPort``, a named one looked up in the
pod). This module must not know HTTP.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from console.errors import PortForwardFailed
from console.resources.kubeapi import KubeApi, path_of
from console.streams.selectors import pod_selector

#: kind (as kubectl spells it: name, plural or short name) -> (group, version, resource)
KINDS: Mapping[str, tuple[str, str, str]] = {
    **dict.fromkeys(("pod", "pods", "po"), ("", "v1", "pods")),
    **dict.fromkeys(("service", "services", "svc"), ("", "v1", "services")),
    **dict.fromkeys(("deployment", "deployments", "deploy"), ("apps", "v1", "deployments")),
    **dict.fromkeys(("replicaset", "replicasets", "rs"), ("apps", "v1", "replicasets")),
    **dict.fromkeys(("statefulset", "statefulsets", "sts"), ("apps", "v1", "statefulsets")),
    **dict.fromkeys(("daemonset", "daemonsets", "ds"), ("apps", "v1", "daemonsets")),
}


@attrs.frozen
class ForwardRequest:
    kind: str
    namespace: str
    name: str
    remote_port: int
    local_port: int = 0  # 0: any free port


@attrs.frozen
class PodPort:
    pod: str
    port: int


async def resolve(api: KubeApi, wanted: ForwardRequest) -> PodPort:
    """The pod and container port ``wanted`` reaches; a ``port-forward-failed`` problem if none."""
    found = KINDS.get(wanted.kind.lower())
    if found is None:
        kinds = "pod, service, deployment, replicaset, statefulset, daemonset"
        raise PortForwardFailed(f"cannot forward to kind {wanted.kind[:60]!r}: one of {kinds}")
    group, version, resource = found
    path = path_of(group, version, resource, namespace=wanted.namespace, name=wanted.name)
    obj = await api.get(path)
    what = f"{resource}/{wanted.name}"
    if resource == "pods":
        if (obj.get("status") or {}).get("phase") != "Running":
            raise PortForwardFailed(f"pod {wanted.name} is not running")
        return PodPort(wanted.name, wanted.remote_port)
    selector = pod_selector(obj, what)
    pods_path = path_of("", "v1", "pods", namespace=wanted.namespace)
    pods = await api.list_all(pods_path, query=[("labelSelector", selector.query())])
    pod = _first_pod(pods)
    if pod is None:
        raise PortForwardFailed(f"{what} has no running pod to forward to")
    port = wanted.remote_port
    if resource == "services":
        port = _target_port(obj, pod, wanted.remote_port)
    return PodPort(pod["metadata"]["name"], port)


def _first_pod(pods: list[dict[str, Any]]) -> dict[str, Any] | None:
    """kubectl's choice: a running pod, ready ones first, then the oldest."""
    running = [
        p
        for p in pods
        if (p.get("status") or {}).get("phase") == "Running"
        and not (p.get("metadata") or {}).get("deletionTimestamp")
    ]
    running.sort(key=lambda p: (not _ready(p), p["metadata"].get("creationTimestamp") or ""))
    return running[0] if running else None


def _ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _target_port(service: Mapping[str, Any], pod: Mapping[str, Any], port: int) -> int:
    """The container port behind the Service's ``port`` (kubectl: ``remotePort`` is a Service
    port; its ``targetPort``, by number or by container port name, is what the pod listens on)."""
    name = (service.get("metadata") or {}).get("name", "")
    entries = (service.get("spec") or {}).get("ports") or []
    entry = next((e for e in entries if e.get("port") == port), None)
    if entry is None:
        offered = ", ".join(str(e.get("port")) for e in entries)
        raise PortForwardFailed(f"service {name} has no port {port} (it has: {offered})")
    target = entry.get("targetPort", port)
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for container in (pod.get("spec") or {}).get("containers") or []:
        for declared in container.get("ports") or []:
            if declared.get("name") == target and declared.get("protocol", "TCP") == "TCP":
                return int(declared["containerPort"])
    raise PortForwardFailed(f"service {name}: pod declares no port named {target!r}")
