"""``autoscaling/v1`` HorizontalPodAutoscalers are a view of the ``autoscaling/v2`` objects.

A real server stores HPAs in v2 and converts on the way in and out: v1's
``targetCPUUtilizationPercentage`` is v2's CPU ``Utilization`` resource metric, and
``currentCPUUtilizationPercentage`` its current value. Metrics v1 cannot express ride along in the
``autoscaling.alpha.kubernetes.io/metrics`` annotation so a round trip through v1 keeps them.
"""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

Obj = dict[str, Any]
API_VERSION = "autoscaling/v1"
OTHER_METRICS = "autoscaling.alpha.kubernetes.io/metrics"
_COPIED = ("scaleTargetRef", "minReplicas", "maxReplicas")
_STATUS = ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas")


def _is_cpu_utilization(metric: Any) -> bool:
    resource = metric.get("resource") if isinstance(metric, dict) else None
    return (
        isinstance(resource, dict)
        and metric.get("type") == "Resource"
        and resource.get("name") == "cpu"
        and (resource.get("target") or {}).get("type") == "Utilization"
    )


def to_v2(obj: Obj) -> Obj:
    """An ``autoscaling/v1`` body in the stored (v2) form."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = "autoscaling/v2"
    meta = out.setdefault("metadata", {})
    annotations = meta.get("annotations") or {}
    metrics: list[Any] = []
    spec = out.get("spec")
    if isinstance(spec, dict):
        target = spec.pop("targetCPUUtilizationPercentage", None)
        if target is not None:
            utilization = {"type": "Utilization", "averageUtilization": target}
            metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": utilization}})
        if OTHER_METRICS in annotations:
            with contextlib.suppress(ValueError):
                metrics += json.loads(annotations.pop(OTHER_METRICS))
        if metrics:
            spec["metrics"] = metrics
    if not annotations:
        meta.pop("annotations", None)
    status = out.get("status")
    if isinstance(status, dict):
        current = status.pop("currentCPUUtilizationPercentage", None)
        if current is not None:
            value = {"averageUtilization": current}
            status["currentMetrics"] = [
                {"type": "Resource", "resource": {"name": "cpu", "current": value}}
            ]
    return out


def to_v1(obj: Obj) -> Obj:
    """A stored HPA as ``autoscaling/v1`` serves it."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    out: Obj = {"kind": obj.get("kind", "HorizontalPodAutoscaler"), "apiVersion": API_VERSION}
    out["metadata"] = copy.deepcopy(obj.get("metadata") or {})
    v1_spec: Obj = {k: copy.deepcopy(spec[k]) for k in _COPIED if k in spec}
    others = []
    for metric in spec.get("metrics") or []:
        if _is_cpu_utilization(metric) and "targetCPUUtilizationPercentage" not in v1_spec:
            target = metric["resource"]["target"].get("averageUtilization")
            v1_spec["targetCPUUtilizationPercentage"] = target
        else:
            others.append(metric)
    if others:
        annotations = out["metadata"].setdefault("annotations", {})
        annotations[OTHER_METRICS] = json.dumps(others, separators=(",", ":"))
    out["spec"] = v1_spec
    v1_status: Obj = {k: copy.deepcopy(status[k]) for k in _STATUS if k in status}
    for metric in status.get("currentMetrics") or []:
        resource = metric.get("resource") if isinstance(metric, dict) else None
        if isinstance(resource, dict) and resource.get("name") == "cpu":
            current = (resource.get("current") or {}).get("averageUtilization")
            if current is not None:
                v1_status["currentCPUUtilizationPercentage"] = current
    out["status"] = v1_status
    return out
