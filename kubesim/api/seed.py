"""The objects a fresh cluster starts with: its system namespaces, the ``kubernetes`` Service and
the bootstrap RBAC policy (``rbac.bootstrap``) and the system PriorityClasses."""

from __future__ import annotations

from kubesim.api import priority, rbac
from kubesim.api.objects import Objects
from kubesim.machinery.meta import WriteOptions

NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def populate(objs: Objects) -> None:
    opts = WriteOptions(manager="kube-apiserver")
    namespaces = objs.registry.get("", "v1", "namespaces")
    services = objs.registry.get("", "v1", "services")
    assert namespaces is not None
    assert services is not None
    for name in NAMESPACES:
        objs.create(namespaces, "", {"metadata": {"name": name}}, opts)
    objs.create(
        services,
        "default",
        {
            "metadata": {
                "name": "kubernetes",
                "labels": {"component": "apiserver", "provider": "kubernetes"},
            },
            "spec": {
                "clusterIP": "10.96.0.1",
                "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
            },
        },
        opts,
    )
    classes = objs.registry.get("scheduling.k8s.io", "v1", "priorityclasses")
    assert classes is not None
    for body in priority.SYSTEM:
        objs.create(classes, "", dict(body), opts)
    _api_services(objs, opts)
    for plural, body in rbac.bootstrap():
        rt = objs.registry.get(rbac.RBAC, "v1", plural)
        assert rt is not None
        objs.create(rt, "", body, opts)


# kube-apiserver's apiVersionPriorities (groupPriorityMinimum, versionPriority) per group/version.
_PRIORITIES = {
    ("", "v1"): (18000, 1),
    ("apiregistration.k8s.io", "v1"): (18000, 15),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
}
# metrics-server's own APIService, as its release manifest registers it.
_METRICS_SPEC: dict[str, object] = {
    "group": "metrics.k8s.io",
    "version": "v1beta1",
    "groupPriorityMinimum": 100,
    "versionPriority": 100,
    "insecureSkipTLSVerify": True,
    "service": {"name": "metrics-server", "namespace": "kube-system", "port": 443},
}


def _api_services(objs: Objects, opts: WriteOptions) -> None:
    """One APIService per served group/version, as the aggregator's autoregistration keeps them:
    local ones always Available, metrics.k8s.io served by metrics-server."""
    rt = objs.registry.get("apiregistration.k8s.io", "v1", "apiservices")
    assert rt is not None
    status_opts = WriteOptions(manager=opts.manager, subresource="status")
    for group, version in objs.registry.group_versions():
        spec: dict[str, object]
        if (group, version) in _PRIORITIES:
            group_min, version_priority = _PRIORITIES[(group, version)]
            spec = {
                "group": group,
                "version": version,
                "groupPriorityMinimum": group_min,
                "versionPriority": version_priority,
            }
            reason, message = "Local", "Local APIServices are always available"
        elif (group, version) == ("metrics.k8s.io", "v1beta1"):
            spec = dict(_METRICS_SPEC)
            reason, message = "Passed", "all checks passed"
        else:
            continue
        name = f"{version}.{group}"
        created = objs.create(rt, "", {"metadata": {"name": name}, "spec": spec}, opts)
        condition = {
            "type": "Available",
            "status": "True",
            "lastTransitionTime": created["metadata"]["creationTimestamp"],
            "reason": reason,
            "message": message,
        }
        body = {**created, "status": {"conditions": [condition]}}
        objs.update(rt, "", name, body, status_opts)
