"""Node heartbeats: each node's kubelet holds a Lease in ``kube-node-lease`` and renews it.

As the kubelet's node lease controller (component-helpers/apimachinery/lease ``controller``):
the Lease is named after the node, owned by it (so it goes with the node), held by it for
``leaseDurationSeconds`` 40 and renewed every quarter of that (``Timings.lease_renew``), with
``renewTime`` in microseconds. The node lifecycle controller of a real cluster reads these to
decide a node is gone; here nodes never go silent, so nothing reads them but clients.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Iterable

from kubesim.controllers.base import Controller, Key
from kubesim.controllers.client import NODES, Client
from kubesim.machinery.timings import Timings
from kubesim.store import Event

LEASES = ("coordination.k8s.io", "leases")
NAMESPACE = "kube-node-lease"
DURATION = 40


class NodeLeases(Controller):
    name = "node-lease"
    watches = (NODES, LEASES)

    def __init__(self, client: Client, timings: Timings) -> None:
        super().__init__(client)
        self.timings = timings

    def keys(self, event: Event) -> Iterable[Key]:
        meta = event.obj["metadata"]
        if event.gr == LEASES:  # a lease someone deleted comes back at once
            return [("", meta["name"])] if meta.get("namespace") == NAMESPACE else []
        return [("", meta["name"])] if event.type != "DELETED" else []

    def reconcile(self, key: Key) -> float | None:
        node = self.client.get(NODES, *key)
        if node is None:
            return None
        lease = self.client.get(LEASES, NAMESPACE, key[1])
        now = micro_time(datetime.datetime.now(datetime.UTC))
        if lease is None:
            self.client.create(LEASES, NAMESPACE, _lease(node, now))
        else:
            renewed = copy.deepcopy(lease)
            renewed["spec"] = {**(lease.get("spec") or {}), "renewTime": now}
            self.client.update(LEASES, renewed)
        return self.timings.lease_renew


def micro_time(t: datetime.datetime) -> str:
    """metav1.MicroTime's JSON form."""
    return t.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _lease(node: dict[str, object], now: str) -> dict[str, object]:
    meta = node["metadata"]
    assert isinstance(meta, dict)
    owner = {"apiVersion": "v1", "kind": "Node", "name": meta["name"], "uid": meta["uid"]}
    return {
        "metadata": {"name": meta["name"], "ownerReferences": [owner]},
        "spec": {
            "holderIdentity": meta["name"],
            "leaseDurationSeconds": DURATION,
            "renewTime": now,
        },
    }
