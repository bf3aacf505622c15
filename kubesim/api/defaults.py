"""Defaulting and allocation that kube-apiserver applies to built-in kinds on every write.

Only the defaults that clients visibly rely on (``kubectl describe``, kstatus, Helm's readiness
checks) are filled in; each is the value a real 1.32 server writes. Part 2's controllers own
everything that a real cluster fills in asynchronously (pod phases, workload status).
"""

from __future__ import annotations

import base64
import ipaddress
from typing import Any

from kubesim.api.core import Core
from kubesim.api.validation import field
from kubesim.machinery import quantity
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.status import KubeError, invalid

Obj = dict[str, Any]
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
# kube-apiserver's default --service-node-port-range.
NODE_PORTS = range(30000, 32768)
RBAC = "rbac.authorization.k8s.io"


def apply(rt: ResourceType, obj: Obj, objs: Core) -> None:
    handler = _BY_RESOURCE.get(rt.group_resource)
    if handler is not None:
        handler(obj, objs)


def _namespace(obj: Obj, objs: Core) -> None:
    name = obj["metadata"]["name"]
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
    spec = obj.setdefault("spec", {})
    if not obj["metadata"].get("deletionTimestamp"):
        spec.setdefault("finalizers", ["kubernetes"])
    obj.setdefault("status", {}).setdefault("phase", "Active")


def _container(c: Obj) -> None:
    image = str(c.get("image", ""))
    tag = image.rsplit("/", 1)[-1]
    latest = "@" not in tag and (":" not in tag or tag.endswith(":latest"))
    c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    c.setdefault("resources", {})
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    for port in c.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")


def _pod_spec(spec: Obj) -> None:
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                _container(c)
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("terminationGracePeriodSeconds", 30)


def _template(obj: Obj) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("template"), dict):
        tmpl = spec["template"]
        tmpl.setdefault("metadata", {})
        if isinstance(tmpl.get("spec"), dict):
            _pod_spec(tmpl["spec"])


def _pod(obj: Obj, objs: Core) -> None:
    spec = obj.setdefault("spec", {})
    _pod_spec(spec)
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            resources = c.get("resources") if isinstance(c, dict) else None
            if isinstance(resources, dict) and resources.get("limits"):
                # SetDefaults_Pod: a limit without a request requests the limit
                resources["requests"] = {**resources["limits"], **(resources.get("requests") or {})}
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault(
        "tolerations",
        [
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
        ],
    )
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Pending")
    status.setdefault("qosClass", quantity.qos_class(spec))


def _claim(obj: Obj, objs: Core) -> None:
    """SetDefaults_PersistentVolumeClaim(Spec): a Filesystem volume, Pending until bound."""
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        spec.setdefault("volumeMode", "Filesystem")
    status = obj.setdefault("status", {})
    if isinstance(status, dict):
        status.setdefault("phase", "Pending")


def _volume(obj: Obj, objs: Core) -> None:
    """SetDefaults_PersistentVolume: Retain, Filesystem, Pending until the controller looks."""
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
    status = obj.setdefault("status", {})
    if isinstance(status, dict):
        status.setdefault("phase", "Pending")


def _storage_class(obj: Obj, objs: Core) -> None:
    """SetDefaults_StorageClass."""
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def _limitrange(obj: Obj, objs: Core) -> None:
    """SetDefaults_LimitRangeItem: a Container item's default limit falls back to its max, its
    default request to its default limit, then to its min."""
    for item in (obj.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = {**(item.get("max") or {}), **(item.get("default") or {})}
        request = {**(item.get("min") or {}), **default, **(item.get("defaultRequest") or {})}
        if default:
            item["default"] = default
        if request:
            item["defaultRequest"] = request


def _strategy(spec: Obj, field: str, rolling: Obj) -> None:
    """Default an (update) strategy field by field, as SetDefaults_* do, so ``{}`` is filled."""
    strategy = spec.setdefault(field, {})
    if not isinstance(strategy, dict):
        return
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        current = strategy.setdefault("rollingUpdate", {})
        if isinstance(current, dict):
            for key, value in rolling.items():
                current.setdefault(key, value)


def _deployment(obj: Obj, objs: Core) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _strategy(spec, "strategy", {"maxSurge": "25%", "maxUnavailable": "25%"})
    _template(obj)


def _replicaset(obj: Obj, objs: Core) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _template(obj)


def _statefulset(obj: Obj, objs: Core) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    _strategy(spec, "updateStrategy", {"partition": 0})
    spec.setdefault(
        "persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"}
    )
    _template(obj)


def _daemonset(obj: Obj, objs: Core) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("revisionHistoryLimit", 10)
    _strategy(spec, "updateStrategy", {"maxSurge": 0, "maxUnavailable": 1})
    _template(obj)


def _job(obj: Obj, objs: Core) -> None:
    spec = obj.setdefault("spec", {})
    meta = obj["metadata"]
    if not spec.get("manualSelector") and "selector" not in spec and meta.get("uid"):
        # The job controller's generated selector, stamped on the template (batch/v1 strategy).
        uid, name = meta["uid"], meta["name"]
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        template = spec.setdefault("template", {})
        labels = template.setdefault("metadata", {}).setdefault("labels", {})
        labels.update(
            {
                "batch.kubernetes.io/controller-uid": uid,
                "batch.kubernetes.io/job-name": name,
                "controller-uid": uid,
                "job-name": name,
            }
        )
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("completions", 1)
    spec.setdefault("parallelism", 1)
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    spec.setdefault("manualSelector", False)
    _template(obj)


def _cronjob(obj: Obj, objs: Core) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("failedJobsHistoryLimit", 1)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("suspend", False)
    job = spec.get("jobTemplate")
    if isinstance(job, dict):
        _template(job)


def _secret(obj: Obj, objs: Core) -> None:
    obj.setdefault("type", "Opaque")
    # stringData is write-only: the apiserver folds it into data, base64-encoded.
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.setdefault("data", {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


def keep_allocated(rt: ResourceType, old: Obj, obj: Obj) -> None:
    """An update of a Service that leaves out what the server allocated keeps it, as the service
    storage's ``patchAllocatedValues`` does: the cluster IPs and each port's node port (matched by
    port and protocol), while the type still needs them. A PUT of the manifest (``kubectl replace``,
    ``helm upgrade --force``) would otherwise change an immutable field."""
    if rt.group_resource != ("", "services"):
        return
    before, after = old.get("spec") or {}, obj.get("spec")
    if not isinstance(after, dict) or after.get("type") == "ExternalName":
        return
    if before.get("clusterIP") and not after.get("clusterIP"):
        after["clusterIP"] = before["clusterIP"]
        if not after.get("clusterIPs"):
            after["clusterIPs"] = list(before.get("clusterIPs") or [before["clusterIP"]])
    if after.get("type") not in ("NodePort", "LoadBalancer"):
        return
    allocated = {
        (p.get("port"), p.get("protocol", "TCP")): p["nodePort"]
        for p in before.get("ports") or []
        if isinstance(p, dict) and p.get("nodePort")
    }
    for port in after.get("ports") or []:
        if isinstance(port, dict) and not port.get("nodePort"):
            found = allocated.get((port.get("port"), port.get("protocol", "TCP")))
            if found:
                port["nodePort"] = found


def _service(obj: Obj, objs: Core) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] == "ExternalName":
        return
    if not spec.get("clusterIP"):
        spec["clusterIP"] = _allocate_ip(objs)
    spec.setdefault("clusterIPs", [spec["clusterIP"]])
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    node_ports = spec["type"] in ("NodePort", "LoadBalancer")
    if node_ports:
        spec.setdefault("externalTrafficPolicy", "Cluster")
        if spec["type"] == "LoadBalancer":
            spec.setdefault("allocateLoadBalancerNodePorts", True)
    for i, port in enumerate(spec.get("ports") or []):
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "port" in port:
                port.setdefault("targetPort", port["port"])
            requested = port.get("nodePort")
            if node_ports and isinstance(requested, int) and requested:
                _claim_node_port(obj, i, requested, objs)
            elif node_ports:
                port["nodePort"] = _allocate_node_port(objs)
    obj.setdefault("status", {}).setdefault("loadBalancer", {})


def _claim_node_port(obj: Obj, index: int, port: int, objs: Core) -> None:
    """A requested node port must lie in the range and be free (the allocator's 422s)."""
    name, at = obj["metadata"]["name"], f"spec.ports[{index}].nodePort"
    if port not in NODE_PORTS:
        why = "provided port is not in the valid range. The range of valid ports is 30000-32767"
        raise invalid("", "Service", name, [field.invalid(at, port, why)])
    for other in objs.store.list(("", "services")):
        same = other["metadata"]["name"] == name and other["metadata"].get("namespace") == obj[
            "metadata"
        ].get("namespace")
        ports = (other.get("spec") or {}).get("ports") or []
        if not same and any(p.get("nodePort") == port for p in ports):
            why = "provided port is already allocated"
            raise invalid("", "Service", name, [field.invalid(at, port, why)])


def _allocate_node_port(objs: Core) -> int:
    used = {
        p.get("nodePort")
        for s in objs.store.list(("", "services"))
        for p in (s.get("spec") or {}).get("ports") or []
    }
    for port in NODE_PORTS:
        if port not in used:
            return port
    raise KubeError(422, "range 30000-32767 is full: no node port left to allocate")


def _allocate_ip(objs: Core) -> str:
    used = {(s.get("spec") or {}).get("clusterIP") for s in objs.store.list(("", "services"))}
    for n, ip in enumerate(SERVICE_CIDR.hosts()):
        if n and str(ip) not in used:
            return str(ip)
    raise RuntimeError("service CIDR exhausted")  # 1M addresses: unreachable in a simulator


def _binding(obj: Obj, objs: Core) -> None:
    """rbac/v1 defaults: roleRef and User/Group subjects take the RBAC group when it is left out."""
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = RBAC
    for subject in obj.get("subjects") or []:
        group_kind = isinstance(subject, dict) and subject.get("kind") in ("User", "Group")
        if group_kind and not subject.get("apiGroup"):
            subject["apiGroup"] = RBAC


def _priority_class(obj: Obj, objs: Core) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _hpa(obj: Obj, objs: Core) -> None:
    """autoscaling/v2 defaults: one replica at least, and 80% CPU when no metric is given."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        target = {"type": "Utilization", "averageUtilization": 80}
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]


_BY_RESOURCE = {
    ("", "namespaces"): _namespace,
    ("", "pods"): _pod,
    ("", "services"): _service,
    ("", "secrets"): _secret,
    ("", "limitranges"): _limitrange,
    ("apps", "deployments"): _deployment,
    ("apps", "replicasets"): _replicaset,
    ("apps", "statefulsets"): _statefulset,
    ("apps", "daemonsets"): _daemonset,
    ("batch", "jobs"): _job,
    ("batch", "cronjobs"): _cronjob,
    (RBAC, "rolebindings"): _binding,
    ("scheduling.k8s.io", "priorityclasses"): _priority_class,
    ("autoscaling", "horizontalpodautoscalers"): _hpa,
    (RBAC, "clusterrolebindings"): _binding,
    ("", "persistentvolumeclaims"): _claim,
    ("", "persistentvolumes"): _volume,
    ("storage.k8s.io", "storageclasses"): _storage_class,
}
