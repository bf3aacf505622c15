"""The ReplicaSet controller: keeps ``spec.replicas`` pods of the template alive and counts them.

Creates missing pods (named ``<rs>-<suffix>``, owned by the ReplicaSet), deletes surplus ones in the
order the real controller ranks them (unscheduled, pending, not ready, most restarts, newest
first), and reports ``replicas``, ``fullyLabeledReplicas``, ``readyReplicas``,
``availableReplicas`` (honouring ``minReadySeconds``) and ``observedGeneration``. A pod that
admission refuses (a quota, a LimitRange) gives a ``FailedCreate`` warning event and the
``ReplicaFailure`` condition, and is tried again shortly.
"""

from __future__ import annotations

from kubesim.controllers.base import ERROR_RETRY, Key
from kubesim.controllers.client import (
    PODS,
    Client,
    fmt_time,
    labels_of,
    now_utc,
    parse_time,
    pod_active,
    pod_available,
    pod_from_template,
    pod_ready,
    suffix,
)
from kubesim.controllers.events import Recorder
from kubesim.controllers.workload import WorkloadController
from kubesim.machinery.status import KubeError
from kubesim.store import Obj

RS = ("apps", "replicasets")
BURST = 500
COMPONENT = "replicaset-controller"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def deletion_rank(pod: Obj) -> tuple[int, int, int, int, float]:
    """Sort key: the pods a controller should delete first come first."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    created = parse_time(pod["metadata"].get("creationTimestamp"))
    restarts = sum(c.get("restartCount", 0) for c in status.get("containerStatuses") or [])
    return (
        1 if spec.get("nodeName") else 0,
        _PHASE_RANK.get(status.get("phase", "Pending"), 0),
        1 if pod_ready(pod) else 0,
        -restarts,
        -(created.timestamp() if created else 0.0),
    )


class PodNamer:
    """Stable pod names per owner, so a scenario's pods are named the same on every start."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._serial: dict[str, int] = {}

    def next(self, owner: Obj) -> str:
        meta = owner["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        while True:
            n = self._serial.get(key, 0)
            self._serial[key] = n + 1
            name = f"{meta['name']}-{suffix(f'{key}/{n}')}"
            if self.client.get(PODS, meta["namespace"], name) is None:
                return name


class ReplicaSetController(WorkloadController):
    name = "replicaset"
    watches = (RS, PODS)
    resource, kind, component = RS, "ReplicaSet", COMPONENT

    def __init__(self, client: Client, recorder: Recorder) -> None:
        super().__init__(client, recorder)
        self.namer = PodNamer(client)

    def sync(self, key: Key, rs: Obj) -> float | None:
        spec = rs.get("spec") or {}
        pods = [p for p in self.client.owned(PODS, rs) if pod_active(p)]
        diff = int(spec.get("replicas", 1)) - len(pods)
        failure = ""
        if diff > 0:
            for _ in range(min(diff, BURST)):
                name = self.namer.next(rs)
                pod = pod_from_template(spec.get("template") or {}, rs, name, {})
                try:
                    created = self.client.create(PODS, key[0], pod)
                except KubeError as exc:
                    if exc.code not in (403, 422):
                        raise
                    failure = exc.message
                    self.recorder.warning(
                        rs, "FailedCreate", f"Error creating: {failure}", component=COMPONENT
                    )
                    break
                self.recorder.normal(
                    rs, "SuccessfulCreate", f"Created pod: {name}", component=COMPONENT
                )
                pods.append(created)
        elif diff < 0:
            for pod in sorted(pods, key=deletion_rank)[:-diff]:
                self.delete_owned(rs, PODS, pod, f"Deleted pod: {pod['metadata']['name']}")
                pods.remove(pod)
        wake = self._status(rs, pods, failure)
        return ERROR_RETRY if failure else wake

    def _status(self, rs: Obj, pods: list[Obj], failure: str) -> float | None:
        spec = rs.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = now_utc()
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        status: Obj = {
            "replicas": len(pods),
            "fullyLabeledReplicas": sum(
                1 for p in pods if all(labels_of(p).get(k) == v for k, v in template_labels.items())
            ),
            "readyReplicas": sum(1 for p in pods if pod_ready(p)),
            "availableReplicas": sum(1 for p in pods if pod_available(p, min_ready, now)),
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        for field in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
            if not status[field]:
                del status[field]
        conditions = [
            c
            for c in (rs.get("status") or {}).get("conditions") or []
            if failure or c.get("type") != "ReplicaFailure"
        ]
        if failure and not any(c.get("type") == "ReplicaFailure" for c in conditions):
            # set once, as the real controller does: the message names a pod that never was
            conditions.append(
                {
                    "lastTransitionTime": fmt_time(now),
                    "message": failure,
                    "reason": "FailedCreate",
                    "status": "True",
                    "type": "ReplicaFailure",
                }
            )
        if conditions:
            status["conditions"] = conditions
        self.client.update_status(RS, rs, status)
        if min_ready and status.get("readyReplicas", 0) > status.get("availableReplicas", 0):
            return float(min_ready) / 4
        return None
