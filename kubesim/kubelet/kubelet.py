"""The kubelet of every simulated node: runs bound pods and reports their status.

A controller on pods: a pod bound to a node gets a :class:`PodRuntime` (an IP from the node's pod
CIDR, its containers' state machines); each reconcile advances it to now, records the events it
produced and writes the rendered status when it changed, then asks to be woken when the next
transition is due. Script programs wake it when they exit. Deleting a pod stops its programs and
ends its logs. Exec, attach, logs and port-forward find containers through :meth:`runtime`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from kubesim.controllers.base import Controller, Key
from kubesim.controllers.client import NODES, PODS, Client
from kubesim.controllers.events import Recorder
from kubesim.controllers.nodes import node_index
from kubesim.kubelet import programs
from kubesim.kubelet.env import container_env
from kubesim.kubelet.image import build_fs
from kubesim.kubelet.model import Container, Run
from kubesim.kubelet.network import ClusterNetwork
from kubesim.kubelet.podstatus import render
from kubesim.kubelet.runtime import PodRuntime
from kubesim.machinery.timings import Timings
from kubesim.shell import Host, Shell
from kubesim.store import Event, Obj


class Kubelet(Controller):
    name = "kubelet"
    watches = (PODS,)

    def __init__(self, client: Client, recorder: Recorder, timings: Timings) -> None:
        super().__init__(client)
        self.recorder, self.timings = recorder, timings
        self.pods: dict[Key, PodRuntime] = {}
        self.images: dict[str, set[str]] = {}
        self._ips: dict[str, set[int]] = {}
        self._pending: list[tuple[str, str, str, str]] = []

    def keys(self, event: Event) -> Iterable[Key]:
        meta = event.obj["metadata"]
        key = (meta["namespace"], meta["name"])
        if (
            event.type == "DELETED"
            or key in self.pods
            or (event.obj.get("spec") or {}).get("nodeName")
        ):
            return [key]
        return []

    def runtime(self, namespace: str, name: str) -> PodRuntime | None:
        return self.pods.get((namespace, name))

    # -- reconcile ------------------------------------------------------------------------------
    def reconcile(self, key: Key) -> float | None:
        pod = self.client.get(PODS, *key)
        rt = self.pods.get(key)
        if rt is not None and (pod is None or pod["metadata"]["uid"] != rt.uid):
            self._forget(key)
            rt = None
        if pod is None or not (pod.get("spec") or {}).get("nodeName"):
            return None
        if rt is None:
            if pod["metadata"].get("deletionTimestamp"):
                self._remove(pod)
                return None
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                return None
            rt = self._admit(pod)
        now = time.time()
        if pod["metadata"].get("deletionTimestamp"):
            grace = float(pod["metadata"].get("deletionGracePeriodSeconds") or 0)
            rt.terminate(now, grace)
        wake = rt.step(now)
        events, self._pending = self._pending, []
        for type_, reason, message, field_path in events:
            self.recorder.record(
                pod,
                type_,
                reason,
                message,
                component="kubelet",
                host=rt.node,
                field_path=field_path,
            )
        pod = self.client.update_status(PODS, pod, render(rt, pod, now))
        if rt.stop_at is not None and wake is None:
            self._remove(pod)
            return None
        return None if wake is None else max(0.0, wake - time.time())

    def _remove(self, pod: Obj) -> None:
        """Containers are down: finish the graceful deletion, as the kubelet's status manager does."""
        self.client.delete_now(PODS, pod)

    def _admit(self, pod: Obj) -> PodRuntime:
        node_name = pod["spec"]["nodeName"]
        node = self.client.get(NODES, "", node_name)
        index = node_index(node) if node is not None else 1
        host_ip = next(
            (
                a["address"]
                for a in ((node or {}).get("status") or {}).get("addresses") or []
                if a.get("type") == "InternalIP"
            ),
            "172.18.0.2",
        )
        used = self._ips.setdefault(node_name, set())
        host = next(n for n in range(2, 255 * 255) if n not in used)
        used.add(host)
        rt = PodRuntime(
            pod,
            time.time(),
            self.timings,
            ip=f"10.244.{index}.{host}" if host < 255 else f"10.244.{index}.{host % 253 + 2}",
            host_ip=host_ip,
            node_images=self.images.setdefault(node_name, set()),
            start=self._start,
            emit=lambda *e: self._pending.append(e),
        )
        self.pods[(rt.namespace, rt.name)] = rt
        return rt

    def _start(self, rt: PodRuntime, c: Container, at: float) -> Run:
        return programs.start(self, rt, c, at)

    def _forget(self, key: Key) -> None:
        rt = self.pods.pop(key)
        now = time.time()
        for c in rt.containers:
            for run in c.runs:
                if run.task is not None:
                    run.task.cancel()
                run.log.end(now)
        last = int(rt.ip.rsplit(".", 1)[1])
        self._ips.get(rt.node, set()).discard(last)

    def stop(self) -> None:
        for key in list(self.pods):
            self._forget(key)

    # -- services for programs and exec --------------------------------------------------------
    def wake(self, rt: PodRuntime) -> None:
        self.queue.add((rt.namespace, rt.name))

    def shell_for(self, rt: PodRuntime, c: Container, *, pid: int) -> Shell:
        pod = self.client.get(PODS, rt.namespace, rt.name) or {
            "metadata": {"name": rt.name, "namespace": rt.namespace}
        }
        flavor = c.behaviour.flavor
        store = self.client.store
        if c.fs is None:
            c.fs = build_fs(
                pod, c.spec, flavor, store.get, c.current.started if c.current else time.time()
            )
        env = container_env(
            pod, c.spec, flavor, store.get, store.list(("", "services"), rt.namespace)
        )
        main = " ".join(c.behaviour.argv) or {
            "nginx": "nginx: master process nginx -g daemon off;",
            "redis": "redis-server *:6379",
            "postgres": "postgres",
        }.get(flavor, "/app/server")
        host = Host(
            hostname=str((pod.get("spec") or {}).get("hostname") or rt.name),
            namespace=rt.namespace,
            pod_ip=rt.ip,
            sleep_scale=self.timings.sleep_scale,
            pid=pid,
            network=ClusterNetwork(store, rt.namespace, rt.name),
            processes=lambda: [(1, main)] + ([(pid, "sh")] if pid != 1 else []),
        )
        return Shell(c.fs, env, host, cwd=str(c.spec.get("workingDir") or "/"))
