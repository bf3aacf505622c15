"""Small builders for scenario objects, so a scenario reads like the manifests it stands for."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesim.controllers.client import Client

Obj = dict[str, Any]
GR = {
    "Namespace": ("", "namespaces"),
    "ConfigMap": ("", "configmaps"),
    "Secret": ("", "secrets"),
    "Service": ("", "services"),
    "ServiceAccount": ("", "serviceaccounts"),
    "PersistentVolumeClaim": ("", "persistentvolumeclaims"),
    "Deployment": ("apps", "deployments"),
    "StatefulSet": ("apps", "statefulsets"),
    "DaemonSet": ("apps", "daemonsets"),
    "Job": ("batch", "jobs"),
    "CronJob": ("batch", "cronjobs"),
    "Ingress": ("networking.k8s.io", "ingresses"),
    "IngressClass": ("networking.k8s.io", "ingressclasses"),
    "NetworkPolicy": ("networking.k8s.io", "networkpolicies"),
    "HorizontalPodAutoscaler": ("autoscaling", "horizontalpodautoscalers"),
    "PodDisruptionBudget": ("policy", "poddisruptionbudgets"),
    "Role": ("rbac.authorization.k8s.io", "roles"),
    "RoleBinding": ("rbac.authorization.k8s.io", "rolebindings"),
    "StorageClass": ("storage.k8s.io", "storageclasses"),
}


def container(name: str, image: str, port: int | None = None, **extra: Any) -> Obj:
    c: Obj = {"name": name, "image": image}
    if port is not None:
        c["ports"] = [{"name": extra.pop("port_name", "http"), "containerPort": port}]
    c.update(extra)
    return c


def resources(
    cpu: str, memory: str, limit_cpu: str | None = None, limit_memory: str | None = None
) -> Obj:
    out: Obj = {"requests": {"cpu": cpu, "memory": memory}}
    limits = {k: v for k, v in (("cpu", limit_cpu), ("memory", limit_memory)) if v}
    if limits:
        out["limits"] = limits
    return out


def http_probe(path: str, port: int | str = "http") -> Obj:
    return {"httpGet": {"path": path, "port": port}, "periodSeconds": 10, "initialDelaySeconds": 2}


def labels(app: str, part: str = "") -> dict[str, str]:
    out = {"app.kubernetes.io/name": app}
    if part:
        out["app.kubernetes.io/part-of"] = part
    return out


def _template(app: str, part: str, containers: list[Obj], **spec: Any) -> Obj:
    return {"metadata": {"labels": labels(app, part)}, "spec": {"containers": containers, **spec}}


def _workload(kind: str, name: str, part: str, template: Obj, **spec: Any) -> Obj:
    """An ``apps/v1`` workload whose selector picks the pods of its own template."""
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "labels": labels(name, part)},
        "spec": {
            **spec,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": template,
        },
    }


def deployment(
    name: str, containers: list[Obj], replicas: int = 1, part: str = "", **spec: Any
) -> Obj:
    template = _template(name, part, containers, **spec)
    return _workload("Deployment", name, part, template, replicas=replicas)


def statefulset(
    name: str, containers: list[Obj], storage: str, part: str = "", replicas: int = 1
) -> Obj:
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}},
    }
    template = _template(name, part, containers)
    return _workload(
        "StatefulSet",
        name,
        part,
        template,
        replicas=replicas,
        serviceName=name,
        volumeClaimTemplates=[claim],
    )


def daemonset(name: str, containers: list[Obj], part: str = "", **spec: Any) -> Obj:
    return _workload("DaemonSet", name, part, _template(name, part, containers, **spec))


def service(
    name: str,
    port: int,
    target: int | str = "http",
    *,
    selector: str | None = None,
    headless: bool = False,
    **spec: Any,
) -> Obj:
    body: Obj = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "labels": labels(selector or name)},
        "spec": {
            "selector": {"app.kubernetes.io/name": selector or name},
            "ports": [{"name": "http", "port": port, "targetPort": target}],
            **spec,
        },
    }
    if headless:
        body["spec"]["clusterIP"] = "None"
    return body


def job_spec(script: str, image: str = "busybox:1.36", **spec: Any) -> Obj:
    return {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [container("main", image, command=["sh", "-c", script])],
            }
        },
        **spec,
    }


def job(name: str, script: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": job_spec(script, **spec),
    }


def cronjob(name: str, schedule: str, script: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {"schedule": schedule, **spec, "jobTemplate": {"spec": job_spec(script)}},
    }


def pdb(name: str, app: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": app}}, **spec},
    }


def clone(obj: Obj) -> Obj:
    return copy.deepcopy(obj)


def create(client: Client, namespace: str, *objs: Obj) -> list[Obj]:
    return [client.create(GR[o["kind"]], namespace, o) for o in objs]
