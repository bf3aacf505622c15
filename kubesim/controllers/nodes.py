"""The simulated nodes: what ``--nodes N`` creates, and the node lifecycle controller.

Each node looks like a kubeadm/kind worker (capacity, allocatable, the four kubelet conditions,
addresses, ``nodeInfo``, a pod CIDR, zone labels) so ``kubectl describe node`` and ``kubectl top``
have something real to show. The lifecycle controller keeps the
``node.kubernetes.io/unschedulable`` taint in step with ``spec.unschedulable`` (what ``kubectl
cordon`` sets), as the real one does, and deletes the pods of a node that was removed (the pod
garbage collector); scheduling itself lives in ``controllers.scheduler``.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import uuid

from kubesim.controllers.base import Controller, Key
from kubesim.controllers.client import NODES, PODS, Client, fmt_time, now_utc
from kubesim.machinery.status import KubeError
from kubesim.store import Obj

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
ZONES = ("zone-a", "zone-b", "zone-c")
CPU_CORES = 4
MEMORY_KI = 16374584
MAX_PODS = 110
KUBELET_VERSION = "v1.32.4"


def node_name(i: int) -> str:
    return f"kubesim-node-{i}"


def node_ip(i: int) -> str:
    return f"172.18.0.{i + 1}"


def _stable_uuid(seed: str) -> str:
    return str(uuid.UUID(bytes=hashlib.blake2b(seed.encode(), digest_size=16).digest()))


def node_object(i: int) -> Obj:
    name = node_name(i)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": "kubesim.standard-4",
                "topology.kubernetes.io/region": "kubesim",
                "topology.kubernetes.io/zone": ZONES[(i - 1) % len(ZONES)],
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "podCIDR": f"10.244.{i}.0/24",
            "podCIDRs": [f"10.244.{i}.0/24"],
            "providerID": f"kubesim://{name}",
        },
    }


def node_status(i: int) -> Obj:
    now = fmt_time(now_utc())
    name = node_name(i)

    def cond(kind: str, status: str, reason: str, message: str) -> Obj:
        return {
            "type": kind,
            "status": status,
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        }

    resources = {
        "cpu": str(CPU_CORES),
        "ephemeral-storage": "102626232Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{MEMORY_KI}Ki",
        "pods": str(MAX_PODS),
    }
    return {
        "capacity": resources,
        "allocatable": {**resources, "memory": f"{MEMORY_KI - 102400}Ki"},
        "conditions": [
            cond(
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            cond(
                "DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"
            ),
            cond(
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ],
        "addresses": [
            {"type": "InternalIP", "address": node_ip(i)},
            {"type": "Hostname", "address": name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": _stable_uuid(f"boot/{name}"),
            "containerRuntimeVersion": "containerd://1.7.24",
            "kernelVersion": "6.8.0-48-generic",
            "kubeProxyVersion": KUBELET_VERSION,
            "kubeletVersion": KUBELET_VERSION,
            "machineID": hashlib.blake2b(name.encode(), digest_size=16).hexdigest(),
            "operatingSystem": "linux",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "systemUUID": _stable_uuid(f"system/{name}"),
        },
    }


def ensure_nodes(client: Client, count: int) -> None:
    """Create the nodes that do not exist yet (a restart keeps existing ones as they are)."""
    for i in range(1, count + 1):
        if client.get(NODES, "", node_name(i)) is None:
            created = client.create(NODES, "", node_object(i))
            client.update_status(NODES, created, node_status(i))


def node_index(node: Obj) -> int:
    """The node's number, from its pod CIDR (10.244.<i>.0/24)."""
    cidr = (node.get("spec") or {}).get("podCIDR") or "10.244.1.0/24"
    return int(cidr.split(".")[2])


def node_ready(node: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or []
    )


class NodeLifecycle(Controller):
    """Keeps the unschedulable taint in step with ``spec.unschedulable``."""

    name = "node-lifecycle"
    watches = (NODES,)

    def reconcile(self, key: Key) -> float | None:
        node = self.client.get(NODES, *key)
        if node is None:
            self._collect_orphans(key[1])
            return None
        spec = node.get("spec") or {}
        taints = [t for t in spec.get("taints") or [] if t.get("key") != UNSCHEDULABLE_TAINT]
        if spec.get("unschedulable"):
            old = next(
                (t for t in spec.get("taints") or [] if t.get("key") == UNSCHEDULABLE_TAINT), None
            )
            taints.append(
                old
                or {
                    "key": UNSCHEDULABLE_TAINT,
                    "effect": "NoSchedule",
                    "timeAdded": fmt_time(now_utc()),
                }
            )
        if taints == (spec.get("taints") or []):
            return None
        new = copy.deepcopy(node)
        if taints:
            new["spec"]["taints"] = taints
        else:
            new["spec"].pop("taints", None)
        self.client.update(NODES, new)
        return None

    def _collect_orphans(self, node: str) -> None:
        """The pod garbage collector: pods bound to a node that no longer exists go at once."""
        for pod in self.client.list(PODS):
            if (pod.get("spec") or {}).get("nodeName") == node:
                with contextlib.suppress(KubeError):
                    self.client.delete_now(PODS, pod)
