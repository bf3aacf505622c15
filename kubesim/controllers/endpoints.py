"""The endpoints controllers: a Service's selected pods as an EndpointSlice and a v1 Endpoints.

For every Service with a selector, the pods it selects that have an IP become endpoints with the
``ready``/``serving``/``terminating`` conditions and the target ports resolved (named ports by the
pod's container ports). ``discovery.k8s.io`` EndpointSlices are what kube-proxy and the in-pod
network read; ``v1`` Endpoints (with ``notReadyAddresses``) are what ``kubectl describe service``
and many dashboards still read. The ``kubernetes`` Service points at the API server.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from kubesim.controllers.base import Controller, Key
from kubesim.controllers.client import (
    NODES,
    PODS,
    owner_ref,
    pod_ready,
    suffix,
)
from kubesim.machinery.selectors import matches_label_selector as selector_matches
from kubesim.store import Event, Obj

SERVICES = ("", "services")
ENDPOINTS = ("", "endpoints")
SLICES = ("discovery.k8s.io", "endpointslices")
MANAGED_BY = "endpointslice-controller.k8s.io"
APISERVER_IP = "172.18.0.1"


def _target_port(port: Obj, pod: Obj | None) -> int | None:
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for c in (pod or {}).get("spec", {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == target:
                return int(p["containerPort"])
    return None


class EndpointsController(Controller):
    name = "endpoints"
    watches = (SERVICES, PODS)

    def keys(self, event: Event) -> Iterable[Key]:
        if event.gr == SERVICES:
            return super().keys(event)
        ns = event.obj["metadata"]["namespace"]
        labels = event.obj["metadata"].get("labels") or {}
        old = (event.old or {}).get("metadata", {}).get("labels") or {}
        return [
            (ns, s["metadata"]["name"])
            for s in self.client.list(SERVICES, ns)
            if (sel := (s.get("spec") or {}).get("selector"))
            and (
                selector_matches({"matchLabels": sel}, labels)
                or selector_matches({"matchLabels": sel}, old)
            )
        ]

    def reconcile(self, key: Key) -> float | None:
        svc = self.client.get(SERVICES, *key)
        if svc is None or svc["metadata"].get("deletionTimestamp"):
            return None
        spec = svc.get("spec") or {}
        if key == ("default", "kubernetes"):
            self._apiserver(svc)
            return None
        if not spec.get("selector") or spec.get("type") == "ExternalName":
            return None
        pods = [
            p
            for p in self.client.list(PODS, key[0], {"matchLabels": spec["selector"]})
            if (p.get("status") or {}).get("phase") in ("Pending", "Running")
            and (p.get("status") or {}).get("podIP")
        ]
        pods.sort(key=lambda p: p["metadata"]["name"])
        publish = bool(spec.get("publishNotReadyAddresses"))
        ports = [
            {"name": p.get("name", ""), "port": t, "protocol": p.get("protocol", "TCP")}
            for p in spec.get("ports") or []
            if (t := _target_port(p, pods[0] if pods else None)) is not None
        ]
        zones = {
            n["metadata"]["name"]: (n["metadata"].get("labels") or {}).get(
                "topology.kubernetes.io/zone"
            )
            for n in self.client.list(NODES)
        }
        endpoints = []
        for pod in pods:
            terminating = bool(pod["metadata"].get("deletionTimestamp"))
            serving = pod_ready(pod) or publish
            ep: Obj = {
                "addresses": [pod["status"]["podIP"]],
                "conditions": {
                    "ready": serving and not terminating,
                    "serving": serving,
                    "terminating": terminating,
                },
                "nodeName": pod["spec"].get("nodeName"),
                "targetRef": {
                    "kind": "Pod",
                    "namespace": key[0],
                    "name": pod["metadata"]["name"],
                    "uid": pod["metadata"]["uid"],
                },
            }
            if zones.get(pod["spec"].get("nodeName")):
                ep["zone"] = zones[pod["spec"]["nodeName"]]
            endpoints.append(ep)
        self._slice(svc, endpoints, ports)
        self._endpoints(svc, endpoints, ports)
        return None

    def _slice(self, svc: Obj, endpoints: list[Obj], ports: list[Obj]) -> None:
        meta = svc["metadata"]
        name = f"{meta['name']}-{suffix(meta['namespace'] + '/' + meta['name'])}"
        body: Obj = {
            "metadata": {
                "name": name,
                "labels": {
                    **(meta.get("labels") or {}),
                    "kubernetes.io/service-name": meta["name"],
                    "endpointslice.kubernetes.io/managed-by": MANAGED_BY,
                },
                "ownerReferences": [owner_ref(svc)],
            },
            "addressType": "IPv4",
            "endpoints": endpoints or None,
            "ports": ports or None,
        }
        self._put(SLICES, meta["namespace"], name, body, ("addressType", "endpoints", "ports"))

    def _endpoints(self, svc: Obj, endpoints: list[Obj], ports: list[Obj]) -> None:
        meta = svc["metadata"]

        def address(ep: Obj) -> Obj:
            return {
                "ip": ep["addresses"][0],
                "nodeName": ep["nodeName"],
                "targetRef": ep["targetRef"],
            }

        subset: Obj = {}
        live = [e for e in endpoints if not e["conditions"]["terminating"]]
        ready = [address(e) for e in live if e["conditions"]["ready"]]
        unready = [address(e) for e in live if not e["conditions"]["ready"]]
        if ready:
            subset["addresses"] = ready
        if unready:
            subset["notReadyAddresses"] = unready
        if subset and ports:
            subset["ports"] = [{k: v for k, v in p.items() if v != ""} for p in ports]
        body: Obj = {"metadata": {"name": meta["name"], "labels": dict(meta.get("labels") or {})}}
        if subset:
            body["subsets"] = [subset]
        self._put(ENDPOINTS, meta["namespace"], meta["name"], body, ("subsets",))

    def _apiserver(self, svc: Obj) -> None:
        port = {"name": "https", "port": 6443, "protocol": "TCP"}
        body = {
            "metadata": {
                "name": "kubernetes",
                "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
            },
            "subsets": [{"addresses": [{"ip": APISERVER_IP}], "ports": [port]}],
        }
        self._put(ENDPOINTS, "default", "kubernetes", body, ("subsets",))
        slice_body = {
            "metadata": {
                "name": "kubernetes",
                "labels": {"kubernetes.io/service-name": "kubernetes"},
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": [APISERVER_IP], "conditions": {"ready": True}}],
            "ports": [port],
        }
        self._put(
            SLICES, "default", "kubernetes", slice_body, ("addressType", "endpoints", "ports")
        )

    def _put(
        self, gr: tuple[str, str], ns: str, name: str, body: Obj, fields: tuple[str, ...]
    ) -> None:
        body = {k: v for k, v in body.items() if v is not None}
        live = self.client.get(gr, ns, name)
        if live is None:
            self.client.create(gr, ns, body)
            return
        same = all(live.get(f) == body.get(f) for f in fields)
        if same and (live["metadata"].get("labels") or {}) == body["metadata"].get("labels", {}):
            return
        new = copy.deepcopy(live)
        for f in fields:
            new.pop(f, None)
            if f in body:
                new[f] = body[f]
        new["metadata"]["labels"] = body["metadata"].get("labels", {})
        self.client.update(gr, new)
