"""Is a live object ready, and if not, why: the rules of kstatus (sigs.k8s.io/cli-utils), in short.

kstatus is what ``helm install --wait=watcher`` and kubectl-style tooling use to call an object
*Current* (ready), *InProgress*, *Failed* or *Terminating*. The rules kept here: a deleting object is
terminating; a controller that has not observed the latest generation is in progress; the standard
``Stalled`` / ``Reconciling`` conditions; then per kind: workload replica counts
(Deployment, StatefulSet, DaemonSet, ReplicaSet), Pod phase and readiness, Job completion, a
LoadBalancer Service's address, a PVC's binding, a CRD's establishment; other kinds are current
once they exist, unless their ``Ready`` condition says otherwise. Pure functions over the object as
the API returned it; nothing here reads the cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

CURRENT = "Current"
IN_PROGRESS = "InProgress"
FAILED = "Failed"
TERMINATING = "Terminating"
NOT_FOUND = "NotFound"

Obj = dict[str, Any]


@attrs.frozen
class Readiness:
    status: str
    message: str

    @property
    def ready(self) -> bool:
        return self.status == CURRENT


def readiness(obj: Obj | None) -> Readiness:
    if obj is None:
        return Readiness(NOT_FOUND, "not found in the cluster")
    meta, status = obj.get("metadata") or {}, obj.get("status") or {}
    if meta.get("deletionTimestamp"):
        return Readiness(TERMINATING, "being deleted")
    generation, observed = meta.get("generation"), status.get("observedGeneration")
    if generation is not None and observed is not None and observed < generation:
        return Readiness(IN_PROGRESS, f"generation {generation} not yet observed ({observed})")
    generic = _conditions(status)
    if generic is not None:
        return generic
    rule = _RULES.get(obj.get("kind", ""))
    if rule is not None:
        return rule(obj.get("spec") or {}, status)
    if _is(status, "Ready", "False"):
        return Readiness(IN_PROGRESS, _why(status, "Ready", "not ready"))
    return Readiness(CURRENT, "exists")


def _condition(status: Obj, kind: str) -> Obj | None:
    for cond in status.get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def _is(status: Obj, kind: str, value: str = "True") -> bool:
    cond = _condition(status, kind)
    return cond is not None and cond.get("status") == value


def _why(status: Obj, kind: str, fallback: str) -> str:
    cond = _condition(status, kind) or {}
    return str(cond.get("message") or cond.get("reason") or fallback)


def _conditions(status: Obj) -> Readiness | None:
    if _is(status, "Stalled"):
        return Readiness(FAILED, _why(status, "Stalled", "stalled"))
    if _is(status, "Reconciling"):
        return Readiness(IN_PROGRESS, _why(status, "Reconciling", "reconciling"))
    return None


def _replicas(want: int, status: Obj, **counts: str) -> Readiness | None:
    """The first of ``counts`` (its label = its status field) still short of ``want``."""
    for label, field in counts.items():
        have = status.get(field, 0)
        if have < want:
            return Readiness(IN_PROGRESS, f"{label}: {have}/{want}")
    return None


def _deployment(spec: Obj, status: Obj) -> Readiness:
    progressing = _condition(status, "Progressing") or {}
    if progressing.get("reason") == "ProgressDeadlineExceeded":
        return Readiness(FAILED, "progress deadline exceeded")
    want = int(spec.get("replicas", 1))
    pending = _replicas(
        want,
        status,
        replicas="replicas",
        updated="updatedReplicas",
        ready="readyReplicas",
        available="availableReplicas",
    )
    if pending is not None:
        return pending
    if status.get("replicas", 0) > want:
        return Readiness(IN_PROGRESS, f"pending termination: {status['replicas'] - want}")
    if want and not _is(status, "Available"):
        return Readiness(IN_PROGRESS, _why(status, "Available", "deployment not available"))
    return Readiness(CURRENT, f"available, {want} replicas")


def _statefulset(spec: Obj, status: Obj) -> Readiness:
    want = int(spec.get("replicas", 1))
    pending = _replicas(
        want, status, replicas="replicas", ready="readyReplicas", current="currentReplicas"
    )
    if pending is not None:
        return pending
    if status.get("updateRevision") and status.get("currentRevision") != status["updateRevision"]:
        return Readiness(IN_PROGRESS, "rolling out a new revision")
    return Readiness(CURRENT, f"{want} replicas ready")


def _daemonset(spec: Obj, status: Obj) -> Readiness:
    want = int(status.get("desiredNumberScheduled", 0))
    return _replicas(
        want,
        status,
        scheduled="currentNumberScheduled",
        updated="updatedNumberScheduled",
        available="numberAvailable",
        ready="numberReady",
    ) or Readiness(CURRENT, f"{want} pods ready")


def _replicaset(spec: Obj, status: Obj) -> Readiness:
    if _is(status, "ReplicaFailure"):
        return Readiness(FAILED, _why(status, "ReplicaFailure", "replica failure"))
    want = int(spec.get("replicas", 1))
    return _replicas(
        want, status, replicas="replicas", ready="readyReplicas", available="availableReplicas"
    ) or Readiness(CURRENT, f"{want} replicas ready")


def _pod(spec: Obj, status: Obj) -> Readiness:
    phase = status.get("phase", "Pending")
    if phase == "Succeeded":
        return Readiness(CURRENT, "completed")
    if phase == "Failed":
        return Readiness(FAILED, str(status.get("message") or status.get("reason") or "failed"))
    for container in status.get("containerStatuses") or []:
        waiting = (container.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in ("CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull"):
            return Readiness(FAILED, f"container {container.get('name')}: {waiting['reason']}")
    if phase == "Running" and _is(status, "Ready"):
        return Readiness(CURRENT, "running and ready")
    return Readiness(IN_PROGRESS, _why(status, "Ready", f"pod is {phase.lower()}"))


def _job(spec: Obj, status: Obj) -> Readiness:
    if _is(status, "Failed"):
        return Readiness(FAILED, _why(status, "Failed", "job failed"))
    if _is(status, "Complete"):
        return Readiness(CURRENT, f"completed, {status.get('succeeded', 0)} succeeded")
    return Readiness(IN_PROGRESS, f"running, {status.get('active', 0)} active")


def _service(spec: Obj, status: Obj) -> Readiness:
    if spec.get("type") == "LoadBalancer" and not (status.get("loadBalancer") or {}).get("ingress"):
        return Readiness(IN_PROGRESS, "waiting for a load balancer address")
    return Readiness(CURRENT, "exists")


def _pvc(spec: Obj, status: Obj) -> Readiness:
    phase = status.get("phase", "Pending")
    if phase == "Bound":
        return Readiness(CURRENT, "bound")
    return Readiness(IN_PROGRESS, f"claim is {phase.lower()}")


def _crd(spec: Obj, status: Obj) -> Readiness:
    if _is(status, "NamesAccepted", "False"):
        return Readiness(FAILED, _why(status, "NamesAccepted", "names not accepted"))
    if _is(status, "Established"):
        return Readiness(CURRENT, "established")
    return Readiness(IN_PROGRESS, "not yet established")


def _namespace(spec: Obj, status: Obj) -> Readiness:
    phase = status.get("phase", "Active")
    if phase == "Active":
        return Readiness(CURRENT, "active")
    return Readiness(TERMINATING, f"namespace is {phase.lower()}")


_RULES: dict[str, Callable[[Obj, Obj], Readiness]] = {
    "Deployment": _deployment,
    "StatefulSet": _statefulset,
    "DaemonSet": _daemonset,
    "ReplicaSet": _replicaset,
    "Pod": _pod,
    "Job": _job,
    "Service": _service,
    "PersistentVolumeClaim": _pvc,
    "CustomResourceDefinition": _crd,
    "Namespace": _namespace,
}
