"""The objects a fresh cluster starts with: its system namespaces, the ``kubernetes`` Service and
the bootstrap RBAC policy (``rbac.bootstrap``) and the system PriorityClasses."""

from __future__ import annotations

from common.kubesim.api import priority, rbac
from common.kubesim.api.objects import Objects
from common.kubesim.machinery.meta import WriteOptions

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
    for plural, body in rbac.bootstrap():
        rt = objs.registry.get(rbac.RBAC, "v1", plural)
        assert rt is not None
        objs.create(rt, "", body, opts)
