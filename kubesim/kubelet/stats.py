"""The kubelet's stats summary (``/stats/summary``, ``k8s.io/kubelet/pkg/apis/stats/v1alpha1``).

What ``kubectl get --raw /api/v1/nodes/<node>/proxy/stats/summary`` shows: the node's CPU, memory,
root filesystem (``fs``) and image filesystem (``runtime.imageFs``), and each running pod on the
node with its containers. CPU and memory come from the same model as ``metrics.k8s.io`` (so the
two agree); disk use is deterministic: the system's own share of the root filesystem, plus a
writable layer and the log bytes of every container, plus the images the node's pods use (each
counted once). Capacity is the node's ``ephemeral-storage``. HTTP-free.
"""

from __future__ import annotations

import calendar
import time
from typing import Any

from kubesim.api.objects import Objects
from kubesim.kubelet import Kubelet, metrics
from kubesim.kubelet.behaviour import flavor_of, image_name
from kubesim.machinery import quantity

Obj = dict[str, Any]
GI = 1024**3
MI = 1024**2
#: What the OS, the kubelet and the runtime use of the root filesystem on a fresh node.
SYSTEM_FS = 9 * GI
#: Images already on every node (pause, kube-proxy, the CNI), as a kind node has them.
SYSTEM_IMAGES = 780 * MI
#: Where the kubelet rotates a container's log (containerLogMaxSize), and how fast ours grow.
LOG_MAX = 10 * MI
LOG_BYTES_PER_SECOND = 40
#: Bytes an inode stands for, on average (ext4's default bytes-per-inode ratio).
BYTES_PER_INODE = 16 * 1024
#: Size of an image by flavor, in MiB (compressed layers unpacked on disk).
IMAGE_MI = {"nginx": 187, "redis": 117, "postgres": 435, "coredns": 53, "klog": 96, "shell": 5}
DEFAULT_IMAGE_MI = 260


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _fs(capacity: int, used: int, now: float) -> Obj:
    inodes = capacity // BYTES_PER_INODE
    inodes_used = used // BYTES_PER_INODE
    return {
        "time": _stamp(now),
        "availableBytes": max(0, capacity - used),
        "capacityBytes": capacity,
        "usedBytes": used,
        "inodesFree": max(0, inodes - inodes_used),
        "inodes": inodes,
        "inodesUsed": inodes_used,
    }


def _usage(nanocores: int, memory: int, started: float, now: float) -> Obj:
    cpu = {
        "time": _stamp(now),
        "usageNanoCores": nanocores,
        "usageCoreNanoSeconds": int(nanocores * max(0.0, now - started)),
    }
    mem = {
        "time": _stamp(now),
        "usageBytes": int(memory * 1.18),
        "workingSetBytes": memory,
        "rssBytes": int(memory * 0.82),
        "pageFaults": int(memory // 4096),
        "majorPageFaults": 0,
    }
    return {"cpu": cpu, "memory": mem}


def _layer(namespace: str, pod: str, name: str) -> int:
    """A container's writable layer: a few MiB, fixed per container."""
    return int((2 + 30 * metrics.unit(f"{namespace}/{pod}/{name}", "rootfs")) * MI)


def _pod_stats(kubelet: Kubelet, pod: Obj, now: float) -> tuple[Obj, int, int, int] | None:
    """A pod's entry and its (nanocores, working set, bytes on the root filesystem)."""
    meta, spec = pod["metadata"], pod.get("spec") or {}
    rt = kubelet.runtime(meta["namespace"], meta["name"])
    if rt is None:
        return None
    containers, cpu_total, mem_total, disk, created = [], 0, 0, 0, now
    for c in spec.get("containers") or []:
        running = rt.container(c["name"])
        usage = metrics.container_usage(kubelet, meta["namespace"], meta["name"], c["name"], c, now)
        if running is None or usage is None or not running.runs:
            continue
        started = running.runs[-1].started
        created = min(created, running.runs[0].started)
        logs = min(LOG_MAX, int((now - started) * LOG_BYTES_PER_SECOND))
        layer = _layer(meta["namespace"], meta["name"], c["name"])
        entry = {
            "name": c["name"],
            "startTime": _stamp(started),
            **_usage(usage[0], usage[1], started, now),
            "rootfs": {"time": _stamp(now), "usedBytes": layer, "inodesUsed": layer // 16384},
            "logs": {"time": _stamp(now), "usedBytes": logs, "inodesUsed": 1},
        }
        containers.append(entry)
        cpu_total, mem_total, disk = cpu_total + usage[0], mem_total + usage[1], disk + layer + logs
    if not containers:
        return None
    body = {
        "podRef": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
        "startTime": _stamp(created),
        "containers": containers,
        **_usage(cpu_total, mem_total, created, now),
        "ephemeral-storage": {"time": _stamp(now), "usedBytes": disk, "inodesUsed": disk // 16384},
        "process_stats": {"process_count": len(containers)},
    }
    return body, cpu_total, mem_total, disk


def _images(objs: Objects, node: str) -> set[str]:
    return {
        str(c.get("image", ""))
        for pod in objs.store.list(("", "pods"))
        if (pod.get("spec") or {}).get("nodeName") == node
        for c in (pod.get("spec") or {}).get("containers") or []
    }


def _image_bytes(image: str) -> int:
    return IMAGE_MI.get(flavor_of(image_name(image)), DEFAULT_IMAGE_MI) * MI


def summary(objs: Objects, kubelet: Kubelet, node: Obj, now: float) -> Obj:
    """The stats summary of ``node`` at ``now``."""
    name = node["metadata"]["name"]
    capacity = quantity.as_int(
        ((node.get("status") or {}).get("capacity") or {}).get("ephemeral-storage", "100Gi")
    )
    pods, pod_disk = [], 0
    for pod in objs.store.list(("", "pods")):
        if (pod.get("spec") or {}).get("nodeName") != name:
            continue
        found = _pod_stats(kubelet, pod, now)
        if found is not None:
            pods.append(found[0])
            pod_disk += found[3]
    image_used = SYSTEM_IMAGES + sum(_image_bytes(i) for i in _images(objs, name))
    booted = _booted(node)
    usage = next(
        (m for m in metrics.node_metrics(objs, kubelet, now) if m["metadata"]["name"] == name),
        None,
    )
    nanocores = quantity.as_int(usage["usage"]["cpu"][:-1]) if usage else 0
    memory = quantity.as_int(usage["usage"]["memory"]) if usage else 0
    root = _fs(capacity, SYSTEM_FS + pod_disk + image_used, now)
    node_stats = {
        "nodeName": name,
        "systemContainers": [
            {"name": "kubelet", "startTime": _stamp(booted), **_usage(0, 64 * MI, booted, now)},
            {"name": "runtime", "startTime": _stamp(booted), **_usage(0, 96 * MI, booted, now)},
        ],
        "startTime": _stamp(booted),
        **_usage(nanocores, memory, booted, now),
        "fs": root,
        "runtime": {
            "imageFs": _fs(capacity, root["usedBytes"], now) | {"usedBytes": image_used},
            "containerFs": root,
        },
        "rlimit": {"time": _stamp(now), "maxpid": 4194304, "curproc": 180 + 12 * len(pods)},
    }
    return {"node": node_stats, "pods": pods}


def _booted(node: Obj) -> float:
    """When the node started: its creation time."""
    created = (node.get("metadata") or {}).get("creationTimestamp")
    if not created:
        return time.time()
    return float(calendar.timegm(time.strptime(created, "%Y-%m-%dT%H:%M:%SZ")))
