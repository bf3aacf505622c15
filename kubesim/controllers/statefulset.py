"""The StatefulSet controller: ordinal pods with stable names, claims and ordered rollouts.

Pods are ``<sts>-0``..``<sts>-N-1`` with ``hostname``/``subdomain`` set for the headless Service,
labelled with their ``controller-revision-hash``; ``OrderedReady`` creates them one at a time, each
waiting for the previous to be Running and Ready, and removes them from the highest ordinal down.
A ``RollingUpdate`` replaces pods from the highest ordinal down to the ``partition``; each
``volumeClaimTemplate`` becomes a PVC ``<template>-<sts>-<ordinal>`` (``controllers.volumes`` binds
it). The status carries the current and update revisions ``kubectl rollout status`` compares.
"""

from __future__ import annotations

import copy

from kubesim.controllers import revisions
from kubesim.controllers.base import Key
from kubesim.controllers.client import (
    PODS,
    owner_ref,
    pod_active,
    pod_from_template,
    pod_ready,
)
from kubesim.controllers.workload import WorkloadController
from kubesim.store import Obj

STS = ("apps", "statefulsets")
PVC = ("", "persistentvolumeclaims")
REV_LABEL = "controller-revision-hash"
COMPONENT = "statefulset-controller"


def _ordinal(sts: Obj, pod: Obj) -> int | None:
    prefix = sts["metadata"]["name"] + "-"
    name = pod["metadata"]["name"]
    tail = name[len(prefix) :]
    return int(tail) if name.startswith(prefix) and tail.isdigit() else None


class StatefulSetController(WorkloadController):
    name = "statefulset"
    watches = (STS, PODS)
    resource, kind, component = STS, "StatefulSet", COMPONENT

    def sync(self, key: Key, sts: Obj) -> float | None:
        spec = sts.get("spec") or {}
        update, history = revisions.sync(self.client, sts)
        current_name = (sts.get("status") or {}).get("currentRevision") or update["metadata"][
            "name"
        ]
        current = next((r for r in history if r["metadata"]["name"] == current_name), update)
        pods = {o: p for p in self.client.owned(PODS, sts) if (o := _ordinal(sts, p)) is not None}
        replicas = int(spec.get("replicas", 1))
        ordered = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        strategy = spec.get("updateStrategy") or {}
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        self._scale(sts, pods, replicas, ordered, update, current, partition)
        if strategy.get("type", "RollingUpdate") == "RollingUpdate":
            self._roll(sts, pods, replicas, partition, update)
        revisions.prune(
            self.client, sts, history, {update["metadata"]["name"], current["metadata"]["name"]}
        )
        self._status(sts, update, current)
        return None

    def _scale(
        self,
        sts: Obj,
        pods: dict[int, Obj],
        replicas: int,
        ordered: bool,
        update: Obj,
        current: Obj,
        partition: int,
    ) -> None:
        for i in range(replicas):
            pod = pods.get(i)
            if pod is not None and not pod_active(pod):
                self.client.delete(PODS, pod)
                del pods[i]
                pod = None
            if pod is None:
                if ordered and any(
                    not (
                        pod_ready(pods[j])
                        and (pods[j].get("status") or {}).get("phase") == "Running"
                    )
                    for j in range(i)
                    if j in pods
                ):
                    return
                revision = update if i >= partition else current
                pods[i] = self._create(sts, i, revision)
                if ordered:
                    return
            elif ordered and not pod_ready(pod):
                return
        extra = sorted((o for o in pods if o >= replicas), reverse=True)
        for o in extra:
            if ordered and any(not pod_ready(pods[j]) for j in pods if j < o):
                return
            self._delete(sts, pods, o)
            if ordered:
                return

    def _delete(self, sts: Obj, pods: dict[int, Obj], ordinal: int) -> None:
        name = sts["metadata"]["name"]
        self.delete_owned(
            sts,
            PODS,
            pods.pop(ordinal),
            f"delete Pod {name}-{ordinal} in StatefulSet {name} successful",
        )

    def _create(self, sts: Obj, i: int, revision: Obj) -> Obj:
        meta, spec = sts["metadata"], sts["spec"]
        name = f"{meta['name']}-{i}"
        labels = {
            REV_LABEL: revision["metadata"]["name"],
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(i),
        }
        pod = pod_from_template(
            revisions.template_of(revision) or spec.get("template") or {}, sts, name, labels
        )
        pod["spec"]["hostname"] = name
        if spec.get("serviceName"):
            pod["spec"]["subdomain"] = spec["serviceName"]
        volumes = pod["spec"].setdefault("volumes", [])
        for vct in spec.get("volumeClaimTemplates") or []:
            claim = f"{vct['metadata']['name']}-{name}"
            self._claim(sts, vct, claim)
            volumes[:] = [v for v in volumes if v.get("name") != vct["metadata"]["name"]]
            volumes.append(
                {"name": vct["metadata"]["name"], "persistentVolumeClaim": {"claimName": claim}}
            )
        if not volumes:
            del pod["spec"]["volumes"]
        created = self.client.create(PODS, meta["namespace"], pod)
        self.recorder.normal(
            sts,
            "SuccessfulCreate",
            f"create Pod {name} in StatefulSet {meta['name']} successful",
            component=COMPONENT,
        )
        return created

    def _claim(self, sts: Obj, vct: Obj, claim: str) -> None:
        ns = sts["metadata"]["namespace"]
        if self.client.get(PVC, ns, claim) is not None:
            return
        spec = copy.deepcopy(vct.get("spec") or {})
        labels = dict((((sts.get("spec") or {}).get("selector") or {}).get("matchLabels")) or {})
        body: Obj = {"metadata": {"name": claim, "labels": labels}, "spec": spec}
        if (
            (sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}).get("whenDeleted")
        ) == "Delete":
            body["metadata"]["ownerReferences"] = [{**owner_ref(sts), "controller": True}]
        self.client.create(PVC, ns, body)  # the volume controller binds it
        self.recorder.normal(
            sts,
            "SuccessfulCreate",
            f"create Claim {claim} Pod {claim.split('-', 1)[-1]} in StatefulSet {sts['metadata']['name']} success",
            component=COMPONENT,
        )

    def _roll(
        self, sts: Obj, pods: dict[int, Obj], replicas: int, partition: int, update: Obj
    ) -> None:
        if len([o for o in pods if o < replicas]) < replicas or not all(
            pod_ready(p) for p in pods.values()
        ):
            return
        name = update["metadata"]["name"]
        for o in sorted(pods, reverse=True):
            if o >= partition and (pods[o]["metadata"].get("labels") or {}).get(REV_LABEL) != name:
                self._delete(sts, pods, o)
                return

    def _status(self, sts: Obj, update: Obj, current: Obj) -> None:
        live = self.client.get(STS, sts["metadata"]["namespace"], sts["metadata"]["name"])
        if live is None:
            return
        pods = [p for p in self.client.owned(PODS, live) if pod_active(p)]
        replicas = int(live["spec"].get("replicas", 1))
        update_name, current_name = update["metadata"]["name"], current["metadata"]["name"]

        def at(rev: str) -> int:
            return sum(1 for p in pods if (p["metadata"].get("labels") or {}).get(REV_LABEL) == rev)

        ready = sum(1 for p in pods if pod_ready(p))
        if at(update_name) == replicas and ready == replicas:
            current_name = update_name
        status: Obj = {
            "observedGeneration": live["metadata"].get("generation", 1),
            "replicas": len(pods),
            "readyReplicas": ready,
            "currentReplicas": at(current_name),
            "updatedReplicas": at(update_name),
            "currentRevision": current_name,
            "updateRevision": update_name,
            "collisionCount": 0,
            "availableReplicas": ready,
        }
        status = {
            k: v
            for k, v in status.items()
            if v or k in ("replicas", "collisionCount", "availableReplicas", "observedGeneration")
        }
        self.client.update_status(STS, live, status)
