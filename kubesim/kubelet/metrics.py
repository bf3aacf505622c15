"""``metrics.k8s.io/v1beta1``: NodeMetrics and PodMetrics as metrics-server would report them.

Usage is computed when asked, from what runs: each running container gets a baseline from its
flavor (an nginx idles lighter than a database) and its requests, a slow sine wave with a
per-container phase and a little deterministic noise per 15-second window; an OOM-bound container's
memory climbs towards its limit. A node reports its pods plus the system's own overhead. Pods that
are not running have no metrics, as with metrics-server. HTTP-free.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

from kubesim.api.objects import Objects
from kubesim.kubelet import Kubelet
from kubesim.machinery import quantity

Obj = dict[str, Any]
API_VERSION = "metrics.k8s.io/v1beta1"
WINDOW = 15.0
PERIOD = 600.0
MI = 1024 * 1024
# Idle usage per flavor: (millicores, MiB).
BASELINE = {
    "nginx": (2, 9),
    "redis": (6, 14),
    "postgres": (14, 62),
    "coredns": (3, 18),
    "klog": (8, 38),
    "shell": (0, 1),
    "app": (22, 96),
}
SYSTEM = (180, 1100)


def unit(seed: str, salt: str) -> float:
    return (
        int.from_bytes(hashlib.blake2b(f"{seed}/{salt}".encode(), digest_size=4).digest(), "big")
        / 2**32
    )


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def container_usage(
    kubelet: Kubelet, namespace: str, pod: str, name: str, spec: Obj, now: float
) -> tuple[int, int] | None:
    """(nanocores, bytes) of a running container, None when it is not running."""
    rt = kubelet.runtime(namespace, pod)
    c = rt.container(name) if rt is not None else None
    if c is None or c.phase != "running" or not c.runs:
        return None
    seed = f"{namespace}/{pod}/{name}"
    cpu_m, mem_mi = BASELINE.get(c.behaviour.flavor, BASELINE["app"])
    req_cpu, req_mem = quantity.container_requests(spec)
    cpu = max(float(cpu_m), req_cpu * 0.35)
    mem = max(float(mem_mi * MI), req_mem * 0.55)
    phase = unit(seed, "phase") * 2 * math.pi
    wave = math.sin(2 * math.pi * now / PERIOD + phase)
    bucket = str(int(now // WINDOW))
    cpu *= 1 + 0.45 * wave + 0.3 * (unit(seed, bucket) - 0.5)
    mem *= 1 + 0.04 * wave + 0.02 * unit(seed, "m" + bucket)
    if c.behaviour.mode == "oom":
        limit = quantity.as_int(
            ((spec.get("resources") or {}).get("limits") or {}).get("memory", 256 * MI)
        )
        progress = min(1.0, (now - c.runs[-1].started) / max(kubelet.timings.crash_after, 0.001))
        mem = limit * (0.45 + 0.55 * progress)
        cpu = max(cpu, 150.0)
    return max(0, int(cpu * 1_000_000)), max(0, int(mem))


def pod_metrics(objs: Objects, kubelet: Kubelet, namespace: str | None, now: float) -> list[Obj]:
    out = []
    for pod in objs.store.list(("", "pods"), namespace):
        meta, spec = pod["metadata"], pod.get("spec") or {}
        if (pod.get("status") or {}).get("phase") != "Running":
            continue
        containers = []
        for c in spec.get("containers") or []:
            usage = container_usage(kubelet, meta["namespace"], meta["name"], c["name"], c, now)
            if usage is not None:
                containers.append(
                    {
                        "name": c["name"],
                        "usage": {
                            "cpu": quantity.cpu_nanocores(usage[0]),
                            "memory": quantity.memory_ki(usage[1]),
                        },
                    }
                )
        if containers:
            out.append(
                {
                    "kind": "PodMetrics",
                    "apiVersion": API_VERSION,
                    "metadata": {
                        "name": meta["name"],
                        "namespace": meta["namespace"],
                        "creationTimestamp": _stamp(now),
                        "labels": dict(meta.get("labels") or {}),
                    },
                    "timestamp": _stamp(now - now % WINDOW),
                    "window": f"{WINDOW:g}s",
                    "containers": containers,
                }
            )
    return out


def node_metrics(objs: Objects, kubelet: Kubelet, now: float) -> list[Obj]:
    per_node: dict[str, tuple[int, int]] = {}
    for pm in pod_metrics(objs, kubelet, None, now):
        pod = objs.store.get(("", "pods"), pm["metadata"]["namespace"], pm["metadata"]["name"])
        node = ((pod or {}).get("spec") or {}).get("nodeName", "")
        cpu, mem = per_node.get(node, (0, 0))
        for c in pm["containers"]:
            cpu += quantity.as_int(c["usage"]["cpu"][:-1]) if c["usage"]["cpu"].endswith("n") else 0
            mem += quantity.as_int(c["usage"]["memory"])
        per_node[node] = (cpu, mem)
    out = []
    for node in objs.store.list(("", "nodes")):
        name = node["metadata"]["name"]
        base_cpu, base_mem = SYSTEM
        jitter = 1 + 0.2 * (unit(name, str(int(now // WINDOW))) - 0.5)
        cpu, mem = per_node.get(name, (0, 0))
        cpu += int(base_cpu * jitter * 1_000_000)
        mem += int(base_mem * MI * (1 + 0.01 * math.sin(now / PERIOD)))
        out.append(
            {
                "kind": "NodeMetrics",
                "apiVersion": API_VERSION,
                "metadata": {
                    "name": name,
                    "creationTimestamp": _stamp(now),
                    "labels": dict(node["metadata"].get("labels") or {}),
                },
                "timestamp": _stamp(now - now % WINDOW),
                "window": "20.05s",
                "usage": {"cpu": quantity.cpu_nanocores(cpu), "memory": quantity.memory_ki(mem)},
            }
        )
    return out
