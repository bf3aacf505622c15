"""Node heartbeats: each node's kubelet renews a Lease in ``kube-node-lease`` and, less often,
re-posts its node status.

As the kubelet's node lease controller (component-helpers/apimachinery/lease ``controller``):
the Lease is named after the node, owned by it (so it goes with the node), held by it for
``leaseDurationSeconds`` 40 and renewed every quarter of that (``Timings.lease_renew``), with
``renewTime`` in microseconds. The node's conditions get a new ``lastHeartbeatTime`` every
``Timings.node_status`` (the kubelet's nodeStatusReportFrequency, 5 minutes) when nothing else
changed. The node lifecycle controller of a real cluster reads these to decide a node is gone;
here nodes never go silent, so nothing reads them but clients.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Iterable

from kubesim.controllers.base import Controller, Key
from kubesim.controllers.client import NODES, Client, fmt_time, parse_time
from kubesim.machinery.timings import Timings
from kubesim.store import Event, Obj

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
        moment = datetime.datetime.now(datetime.UTC)
        now = micro_time(moment)
        renew_in = self.timings.lease_renew
        if lease is None:
            self.client.create(LEASES, NAMESPACE, _lease(node, now))
        else:
            # Written only when the renewal is due: the controller's own writes (the renewal, the
            # node's heartbeat) wake it too, and each must not call for another write at once.
            last = parse_time((lease.get("spec") or {}).get("renewTime"))
            age = (moment - last).total_seconds() if last is not None else renew_in
            if age >= renew_in:
                renewed = copy.deepcopy(lease)
                renewed["spec"] = {**(lease.get("spec") or {}), "renewTime": now}
                self.client.update(LEASES, renewed)
            else:
                renew_in -= age
        return min(renew_in, self._report_status(node, moment))

    def _report_status(self, node: Obj, moment: datetime.datetime) -> float:
        """Refresh the conditions' heartbeat once it is ``Timings.node_status`` old; returns the
        seconds until the next report is due."""
        conditions = (node.get("status") or {}).get("conditions") or []
        beats = [parse_time(c.get("lastHeartbeatTime")) for c in conditions]
        last = min((b for b in beats if b is not None), default=None)
        age = (moment - last).total_seconds() if last is not None else 0.0
        if last is None or age < self.timings.node_status:
            return self.timings.node_status - age
        status = copy.deepcopy(node["status"])
        for c in status["conditions"]:
            c["lastHeartbeatTime"] = fmt_time(moment)
        self.client.update_status(NODES, node, status)
        return self.timings.node_status


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
