"""The DaemonSet controller: one pod on every node the template fits, rolled one node at a time.

A node is eligible when the pod template's ``nodeSelector``/required node affinity match it and its
taints are tolerated (DaemonSet pods get the controller's standard tolerations, so cordoned nodes
keep their daemons). Each pod is pinned with the ``matchFields metadata.name`` node affinity the
real controller uses and is bound by the scheduler. ``RollingUpdate`` replaces up to
``maxUnavailable`` out-of-date pods while the rest are ready; ControllerRevisions keep the history.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from kubesim.controllers import revisions
from kubesim.controllers.base import Key
from kubesim.controllers.client import (
    NODES,
    PODS,
    Client,
    pod_active,
    pod_from_template,
    pod_ready,
)
from kubesim.controllers.events import Recorder
from kubesim.controllers.replicaset import PodNamer
from kubesim.controllers.scheduler import affinity_matches, tolerates
from kubesim.controllers.workload import WorkloadController
from kubesim.store import Event, Obj

DS = ("apps", "daemonsets")
COMPONENT = "daemonset-controller"
TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def _pinned(template: Obj, node: str) -> Obj:
    spec = copy.deepcopy(template.get("spec") or {})
    tolerations = list(spec.get("tolerations") or [])
    for t in TOLERATIONS:
        if t not in tolerations:
            tolerations.append(t)
    spec["tolerations"] = tolerations
    affinity = spec.setdefault("affinity", {})
    affinity.setdefault("nodeAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        ]
    }
    return {**template, "spec": spec}


def _pod_node(pod: Obj) -> str:
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    terms = (
        ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms") or []
    for term in terms:
        for f in term.get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("values"):
                return str(f["values"][0])
    return ""


class DaemonSetController(WorkloadController):
    name = "daemonset"
    watches = (DS, PODS, NODES)
    resource, kind, component = DS, "DaemonSet", COMPONENT

    def __init__(self, client: Client, recorder: Recorder) -> None:
        super().__init__(client, recorder)
        self.namer = PodNamer(client)

    def keys(self, event: Event) -> Iterable[Key]:
        if event.gr == NODES:
            return [
                (d["metadata"]["namespace"], d["metadata"]["name"]) for d in self.client.list(DS)
            ]
        return super().keys(event)

    def eligible(self, ds: Obj, node: Obj) -> bool:
        probe = {
            "spec": _pinned(ds["spec"].get("template") or {}, node["metadata"]["name"])["spec"]
        }
        taints = (node.get("spec") or {}).get("taints") or []
        return affinity_matches(probe, node) and all(
            tolerates(probe["spec"]["tolerations"], t)
            for t in taints
            if t.get("effect") in ("NoSchedule", "NoExecute")
        )

    def sync(self, key: Key, ds: Obj) -> float | None:
        update, history = revisions.sync(self.client, ds)
        h = revisions.revision_hash(update)
        nodes = {n["metadata"]["name"]: n for n in self.client.list(NODES)}
        wanted = {name for name, n in nodes.items() if self.eligible(ds, n)}
        by_node: dict[str, list[Obj]] = {}
        for p in self.client.owned(PODS, ds):
            if pod_active(p):
                by_node.setdefault(_pod_node(p), []).append(p)
        for node, pods in by_node.items():
            for extra in pods[0 if node not in wanted else 1 :]:
                self.delete_owned(ds, PODS, extra, f"Deleted pod: {extra['metadata']['name']}")
        for node in sorted(wanted - set(by_node)):
            self._create(ds, node, h)
        self._roll(ds, by_node, wanted, h)
        revisions.prune(self.client, ds, history, {update["metadata"]["name"]})
        self._status(key, wanted, h)
        return None

    def _create(self, ds: Obj, node: str, h: str) -> None:
        generation = str(ds["metadata"].get("generation", 1))
        labels = {"controller-revision-hash": h, "pod-template-generation": generation}
        name = self.namer.next(ds)
        pod = pod_from_template(_pinned(ds["spec"].get("template") or {}, node), ds, name, labels)
        self.client.create(PODS, ds["metadata"]["namespace"], pod)
        self.recorder.normal(ds, "SuccessfulCreate", f"Created pod: {name}", component=COMPONENT)

    def _roll(self, ds: Obj, by_node: dict[str, list[Obj]], wanted: set[str], h: str) -> None:
        strategy = ds["spec"].get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        raw = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1)
        budget = (
            max(1, len(wanted) * int(raw[:-1]) // 100) if isinstance(raw, str) else int(raw or 1)
        )
        pods = [ps[0] for n, ps in by_node.items() if n in wanted and ps]
        unavailable = sum(1 for p in pods if not pod_ready(p)) + len(wanted - set(by_node))
        for p in sorted(pods, key=lambda p: p["metadata"]["name"]):
            if unavailable >= budget:
                return
            if (p["metadata"].get("labels") or {}).get(
                "controller-revision-hash"
            ) != h and pod_ready(p):
                self.client.delete(PODS, p)
                unavailable += 1

    def _status(self, key: Key, wanted: set[str], h: str) -> None:
        ds = self.client.get(DS, *key)
        if ds is None:
            return
        pods = [p for p in self.client.owned(PODS, ds) if pod_active(p)]
        on = {_pod_node(p): p for p in pods}
        current = [on[n] for n in wanted if n in on]
        ready = [p for p in current if pod_ready(p)]
        updated = [
            p
            for p in current
            if (p["metadata"].get("labels") or {}).get("controller-revision-hash") == h
        ]
        status: Obj = {
            "currentNumberScheduled": len(current),
            "numberMisscheduled": len([n for n in on if n not in wanted]),
            "desiredNumberScheduled": len(wanted),
            "numberReady": len(ready),
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": len(updated),
            "numberAvailable": len(ready),
            "numberUnavailable": len(wanted) - len(ready),
        }
        status = {
            k: v
            for k, v in status.items()
            if v
            or k
            in (
                "currentNumberScheduled",
                "numberMisscheduled",
                "desiredNumberScheduled",
                "numberReady",
            )
        }
        self.client.update_status(DS, ds, status)
