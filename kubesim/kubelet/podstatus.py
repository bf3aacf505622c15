"""The pod ``status`` the kubelet reports: phase, conditions, container statuses, IPs, QoS class.

A pure function of the kubelet's runtime state and the clock, so the kubelet can render it on every
look and write it only when something changed. Field for field what a 1.32 kubelet writes (the
``PodReadyToStartContainers`` condition, ``started``, ``lastState``, ``imageID`` after the pull).
"""

from __future__ import annotations

import copy
import hashlib
import time
from typing import Any

from kubesim.controllers.client import set_condition
from kubesim.kubelet.behaviour import normalize_image
from kubesim.kubelet.model import Container, Run
from kubesim.kubelet.runtime import PodRuntime
from kubesim.machinery import quantity

Obj = dict[str, Any]


def stamp(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _terminated(run: Run) -> Obj:
    return {
        "terminated": {
            "exitCode": run.exit_code,
            "reason": run.reason,
            "startedAt": stamp(run.started),
            "finishedAt": stamp(run.finished or run.started),
            "containerID": f"containerd://{run.container_id}",
        }
    }


def container_status(rt: PodRuntime, c: Container, now: float) -> Obj:
    run = c.current
    waiting_reason = c.reason or "ContainerCreating"
    if not c.init and not rt.initialized and not c.runs:
        waiting_reason = "PodInitializing"
    if c.phase == "running" and run is not None:
        state: Obj = {"running": {"startedAt": stamp(run.started)}}
        last = c.runs[-2] if len(c.runs) > 1 else None
    elif c.phase in ("exited", "done") and run is not None:
        state, last = _terminated(run), (c.runs[-2] if len(c.runs) > 1 else None)
    else:
        waiting: Obj = {"reason": waiting_reason}
        if c.message:
            waiting["message"] = c.message
        state, last = {"waiting": waiting}, run
    ready = (
        c.phase == "running"
        and run is not None
        and run.ready_at is not None
        and run.ready_at <= now
    )
    out: Obj = {
        "name": c.name,
        "state": state,
        "lastState": _terminated(last) if last is not None and last.finished is not None else {},
        "ready": ready,
        "restartCount": c.restarts,
        "image": normalize_image(c.image),
        "imageID": _image_id(c.image) if c.runs else "",
        "started": c.phase == "running",
    }
    if run is not None:
        out["containerID"] = f"containerd://{run.container_id}"
    return out


def _image_id(image: str) -> str:
    ref = normalize_image(image).rsplit(":", 1)[0]
    return f"{ref}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def phase(rt: PodRuntime) -> str:
    if rt.init_failed:
        return "Failed"
    if not rt.sandbox_ready or not rt.initialized or any(not c.runs for c in rt.apps):
        return "Pending"
    if rt.apps and all(c.phase == "done" for c in rt.apps):
        return "Succeeded" if all(c.succeeded() for c in rt.apps) else "Failed"
    return "Running"


def render(rt: PodRuntime, pod: Obj, now: float) -> Obj:
    old = pod.get("status") or {}
    status: Obj = copy.deepcopy(old)
    when = stamp(now)
    current_phase = phase(rt)
    statuses = [container_status(rt, c, now) for c in rt.apps]
    conditions = list(old.get("conditions") or [])

    def cond(kind: str, ok: bool, reason: str = "", message: str = "") -> None:
        nonlocal conditions
        conditions = set_condition(
            conditions, kind, "True" if ok else "False", reason, message, when
        )
        for c in conditions:
            if c["type"] == kind:
                c["lastProbeTime"] = None
                if ok:
                    c.pop("reason", None)
                    c.pop("message", None)

    cond("PodReadyToStartContainers", rt.sandbox_ready)
    pending_inits = [c.name for c in rt.inits if not c.succeeded()]
    cond(
        "Initialized",
        not pending_inits,
        "ContainersNotInitialized",
        f"containers with incomplete status: [{' '.join(pending_inits)}]",
    )
    unready = [s["name"] for s in statuses if not s["ready"]]
    done = current_phase in ("Succeeded", "Failed")
    reason = "PodCompleted" if done else "ContainersNotReady"
    message = "" if done else f"containers with unready status: [{' '.join(unready)}]"
    cond("ContainersReady", not unready and not done, reason, message)
    cond("Ready", not unready and not done, reason, message)
    order = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    status["conditions"] = sorted(
        conditions, key=lambda c: order.index(c["type"]) if c["type"] in order else 99
    )
    status["phase"] = current_phase
    status["hostIP"] = rt.host_ip
    status["hostIPs"] = [{"ip": rt.host_ip}]
    if rt.sandbox_ready:
        status["podIP"] = rt.ip
        status["podIPs"] = [{"ip": rt.ip}]
    status["startTime"] = stamp(rt.accepted)
    status["containerStatuses"] = statuses
    if rt.inits:
        status["initContainerStatuses"] = [container_status(rt, c, now) for c in rt.inits]
    status["qosClass"] = quantity.qos_class(pod.get("spec") or {})
    return status
