"""Per-namespace defaults a real control plane creates: the ``default`` ServiceAccount and the
``kube-root-ca.crt`` ConfigMap (the cluster CA that pods use to trust the API server).
"""

from __future__ import annotations

from collections.abc import Iterable

from kubesim.controllers.base import Controller, Key
from kubesim.controllers.client import Client
from kubesim.store import Event

NAMESPACES = ("", "namespaces")
SERVICEACCOUNTS = ("", "serviceaccounts")
CONFIGMAPS = ("", "configmaps")
ROOT_CA = "kube-root-ca.crt"


class NamespaceDefaults(Controller):
    name = "serviceaccount"
    watches = (NAMESPACES, SERVICEACCOUNTS, CONFIGMAPS)

    def __init__(self, client: Client, ca_pem: str) -> None:
        super().__init__(client)
        self.ca_pem = ca_pem

    def keys(self, event: Event) -> Iterable[Key]:
        meta = event.obj["metadata"]
        if event.gr == NAMESPACES:
            return [("", meta["name"])]
        if event.type == "DELETED" and meta["name"] in ("default", ROOT_CA):
            return [("", meta["namespace"])]
        return []

    def reconcile(self, key: Key) -> float | None:
        ns = self.client.get(NAMESPACES, *key)
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return None
        name = key[1]
        if self.client.get(SERVICEACCOUNTS, name, "default") is None:
            self.client.create(SERVICEACCOUNTS, name, {"metadata": {"name": "default"}})
        if self.client.get(CONFIGMAPS, name, ROOT_CA) is None:
            body = {
                "metadata": {
                    "name": ROOT_CA,
                    "annotations": {
                        "kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."
                    },
                },
                "data": {"ca.crt": self.ca_pem},
            }
            self.client.create(CONFIGMAPS, name, body)
        return None
