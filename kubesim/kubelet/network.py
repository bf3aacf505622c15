"""The cluster network as seen from inside a pod: DNS names, Service VIPs and pod IPs.

Resolution follows cluster DNS with the pod's search path (``svc``, ``svc.ns``, ``svc.ns.svc``,
``svc.ns.svc.cluster.local``, ``pod.headless-svc``); a connection to a Service goes to one of its
ready endpoints (from EndpointSlices), and is refused when there is none, as kube-proxy's REJECT
rule does. Answers come from ``podhttp``.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from kubesim.kubelet import podhttp
from kubesim.machinery.status import KubeError
from kubesim.shell.host import HttpReply
from kubesim.store import Store

Obj = dict[str, Any]
API_IP = "10.96.0.1"
REFUSED = "Connection refused"


class ClusterNetwork:
    def __init__(self, store: Store, namespace: str, pod_name: str) -> None:
        self.store, self.namespace, self.pod_name = store, namespace, pod_name

    def _service(self, name: str, ns: str) -> Obj | None:
        return self.store.get(("", "services"), ns, name)

    def _ready_ips(self, svc: Obj) -> list[str]:
        meta = svc["metadata"]
        ips: list[str] = []
        for es in self.store.list(("discovery.k8s.io", "endpointslices"), meta["namespace"]):
            if (es["metadata"].get("labels") or {}).get("kubernetes.io/service-name") != meta[
                "name"
            ]:
                continue
            for ep in es.get("endpoints") or []:
                if (ep.get("conditions") or {}).get("ready"):
                    ips += ep.get("addresses") or []
        return sorted(ips)

    def resolve(self, name: str) -> str | None:
        name = name.lower().rstrip(".")
        try:
            return str(ipaddress.ip_address(name))
        except ValueError:
            pass
        if name in ("localhost", "localhost.localdomain"):
            return "127.0.0.1"
        for suffix in (".svc.cluster.local", ".svc"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        labels = name.split(".")
        if len(labels) <= 2:
            svc = self._service(labels[0], labels[1] if len(labels) == 2 else self.namespace)
            if svc is not None:
                ip = (svc.get("spec") or {}).get("clusterIP")
                if ip and ip != "None":
                    return str(ip)
                ready = self._ready_ips(svc)
                return ready[0] if ready else None
        if len(labels) in (2, 3):
            ns = labels[2] if len(labels) == 3 else self.namespace
            pod = self.store.get(("", "pods"), ns, labels[0])
            if pod is not None and (pod.get("spec") or {}).get("subdomain") == labels[1]:
                return (pod.get("status") or {}).get("podIP")
        return None

    def _pod_by_ip(self, ip: str) -> Obj | None:
        return next(
            (
                p
                for p in self.store.list(("", "pods"))
                if (p.get("status") or {}).get("podIP") == ip
            ),
            None,
        )

    async def http(self, host: str, port: int, path: str) -> HttpReply | str:
        ip = self.resolve(host)
        if ip is None:
            return REFUSED
        headers = {
            "host": f"{host}:{port}" if port != 80 else host,
            "user-agent": "Wget",
            "accept": "*/*",
        }
        if ip == API_IP:
            return _apiserver_forbidden(path)
        if ip == "127.0.0.1":
            pod = self.store.get(("", "pods"), self.namespace, self.pod_name)
            target_port = port
        else:
            pod, target_port = self._target(ip, port)
        if pod is None or podhttp.declared_port(pod, target_port) is None:
            return REFUSED
        files = podhttp.files_of(pod, target_port, self.store.get)
        return podhttp.answer(pod, target_port, "GET", path, headers, address=ip, files=files)

    def _target(self, ip: str, port: int) -> tuple[Obj | None, int]:
        for svc in self.store.list(("", "services")):
            spec = svc.get("spec") or {}
            if spec.get("clusterIP") != ip:
                continue
            sport = next((p for p in spec.get("ports") or [] if p.get("port") == port), None)
            return self.backend(svc, sport) if sport is not None else (None, port)
        return self._pod_by_ip(ip), port

    def backend(self, svc: Obj, sport: Obj) -> tuple[Obj | None, int]:
        """The pod a connection to the Service port ``sport`` reaches (its first ready endpoint;
        None when there is none) and the container port it lands on."""
        port = int(sport.get("port", 0))
        ready = self._ready_ips(svc)
        if not ready:
            return None, port
        pod = self._pod_by_ip(ready[0])
        target = sport.get("targetPort", port)
        if isinstance(target, str) and pod is not None:
            target = next(
                (
                    p.get("containerPort")
                    for c in pod["spec"].get("containers") or []
                    for p in c.get("ports") or []
                    if p.get("name") == target
                ),
                port,
            )
        return pod, int(target)


def _apiserver_forbidden(path: str) -> HttpReply:
    refusal = KubeError(
        403, f'forbidden: User "system:anonymous" cannot get path "{path}"', details={}
    )
    body = json.dumps(refusal.status()).encode()
    return HttpReply(
        403,
        "Forbidden",
        (("Content-Type", "application/json"), ("Content-Length", str(len(body)))),
        body,
        API_IP,
    )
