"""The horizontal pod autoscaler: HPA status, and the target's scale, from the pods' metrics.

Every 15 s (kube-controller-manager's sync period) each HPA reads its target's replicas and the
resource usage of the target's pods from the metrics source, as the real controller reads
metrics.k8s.io: ``currentMetrics`` (average utilization of the requests, average value),
``currentReplicas``, ``desiredReplicas`` and the AbleToScale / ScalingActive / ScalingLimited
conditions. Ratios within the 10% tolerance keep the size; scale-ups apply at once and scale-downs
only to the highest recommendation of the stabilization window (300 s unless the HPA's behavior
says otherwise). Only ``Resource`` metrics are read; the other metric types report ScalingActive
False, as they would on a cluster without a custom or external metrics adapter.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from kubesim.controllers.base import Controller, Key
from kubesim.controllers.client import (
    PODS,
    Client,
    fmt_time,
    now_utc,
    pod_active,
    pod_ready,
    set_condition,
)
from kubesim.controllers.events import Recorder
from kubesim.machinery import quantity
from kubesim.store import Event, Obj

HPA = ("autoscaling", "horizontalpodautoscalers")
SYNC_PERIOD = 15.0
TOLERANCE = 0.1
DOWNSCALE_WINDOW = 300.0
# Scale targets by kind (the scale subresource's group/resource).
_TARGETS = {
    "Deployment": ("apps", "deployments"),
    "ReplicaSet": ("apps", "replicasets"),
    "StatefulSet": ("apps", "statefulsets"),
    "ReplicationController": ("", "replicationcontrollers"),
}
NANO = 1_000_000_000
# A pod's summed container usage: {"cpu": nanocores, "memory": bytes}; None without metrics.
Usage = Callable[[Obj], dict[str, int] | None]


class MetricError(Exception):
    """Why a replica count could not be computed (the ScalingActive False message)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def _requests(pod: Obj, resource: str) -> int:
    total = 0
    for c in (pod.get("spec") or {}).get("containers") or []:
        requested = ((c.get("resources") or {}).get("requests") or {}).get(resource)
        if requested is None:
            name = pod["metadata"]["name"]
            raise MetricError(
                "FailedGetResourceMetric",
                f"failed to get {resource} utilization: missing request for {resource} in "
                f"container {c.get('name')} of Pod {name}",
            )
        parsed = quantity.parse(requested)
        total += int(parsed * NANO) if resource == "cpu" else int(parsed)
    return total


def _shown(resource: str, amount: float) -> str:
    return f"{math.ceil(amount / 1_000_000)}m" if resource == "cpu" else str(math.ceil(amount))


def _resource_metric(metric: Obj, pods: list[Obj], usage: Usage, current: int) -> tuple[int, Obj]:
    """(recommended replicas, currentMetrics entry) for one ``Resource`` metric."""
    source = metric.get("resource") or {}
    resource, target = str(source.get("name", "cpu")), source.get("target") or {}
    measured = [(p, usage(p)) for p in pods]
    with_metrics = [(p, u[resource]) for p, u in measured if u is not None and resource in u]
    if not with_metrics:
        raise MetricError(
            "FailedGetResourceMetric",
            f"failed to get {resource} utilization: unable to get metrics for resource "
            f"{resource}: no metrics returned from resource metrics API",
        )
    used = sum(u for _, u in with_metrics)
    average = used / len(with_metrics)
    current_value: Obj = {"averageValue": _shown(resource, average)}
    if target.get("type") == "Utilization":
        requested = sum(_requests(p, resource) for p, _ in with_metrics)
        utilization = int(used * 100 / requested) if requested else 0
        current_value = {"averageUtilization": utilization, **current_value}
        ratio = utilization / max(1, int(target.get("averageUtilization", 80)))
    else:
        wanted = quantity.parse(target.get("averageValue", "0"))
        wanted_units = float(wanted * NANO) if resource == "cpu" else float(wanted)
        ratio = average / wanted_units if wanted_units else 1.0
    desired = current if abs(ratio - 1.0) <= TOLERANCE else math.ceil(ratio * len(with_metrics))
    entry = {"type": "Resource", "resource": {"name": resource, "current": current_value}}
    return desired, entry


def _metric_label(metric: Obj) -> str:
    source = metric.get("resource") or {}
    kind = "utilization (percentage of request)"
    if (source.get("target") or {}).get("type") != "Utilization":
        kind = "resource"
    return f"{source.get('name', 'cpu')} resource {kind}".replace("resource resource", "resource")


class AutoscalerController(Controller):
    name = "horizontal-pod-autoscaler"
    watches = (HPA,)

    def __init__(self, client: Client, recorder: Recorder, usage: Usage) -> None:
        super().__init__(client)
        self.recorder = recorder
        self.usage = usage
        self._recommendations: dict[Key, list[tuple[float, int]]] = {}

    def keys(self, event: Event) -> Iterable[Key]:
        """A spec change is looked at now; the controller's own status writes wait for the sync."""
        if event.old is not None and event.old.get("spec") == event.obj.get("spec"):
            return []
        return super().keys(event)

    def reconcile(self, key: Key) -> float | None:
        hpa = self.client.get(HPA, *key)
        if hpa is None:
            self._recommendations.pop(key, None)
            return None
        spec, old = hpa.get("spec") or {}, hpa.get("status") or {}
        now = now_utc()
        stamp = fmt_time(now)
        conditions = list(old.get("conditions") or [])
        ref = spec.get("scaleTargetRef") or {}
        gr = _TARGETS.get(str(ref.get("kind")))
        target = self.client.get(gr, key[0], str(ref.get("name"))) if gr else None
        if gr is None or target is None:
            plural = gr[1] if gr else str(ref.get("kind", "")).lower() + "s"
            group = f".{gr[0]}" if gr and gr[0] else ""
            why = (
                "the HPA controller was unable to get the target's current scale: "
                f'{plural}/scale{group} "{ref.get("name")}" not found'
            )
            conditions = set_condition(
                conditions, "AbleToScale", "False", "FailedGetScale", why, stamp
            )
            missing = {"currentReplicas": 0, "desiredReplicas": 0, "conditions": conditions}
            self.client.update_status(HPA, hpa, missing)
            return SYNC_PERIOD
        current = int((target.get("spec") or {}).get("replicas", 1))
        desired, metrics, label, conditions = self._recommend(
            key, hpa, target, current, conditions, stamp
        )
        status: Obj = {}
        if old.get("lastScaleTime"):
            status["lastScaleTime"] = old["lastScaleTime"]
        if desired != current:
            self.client.update(gr, {**target, "spec": {**target["spec"], "replicas": desired}})
            status["lastScaleTime"] = stamp
            why = label + " above target" if desired > current else "All metrics below target"
            self.recorder.normal(
                hpa,
                "SuccessfulRescale",
                f"New size: {desired}; reason: {why}",
                component="horizontal-pod-autoscaler",
            )
            message = f"the HPA controller was able to update the target scale to {desired}"
            conditions = set_condition(
                conditions, "AbleToScale", "True", "SucceededRescale", message, stamp
            )
        else:
            conditions = set_condition(
                conditions,
                "AbleToScale",
                "True",
                "ReadyForNewScale",
                "recommended size matches current size",
                stamp,
            )
        status.update({"currentReplicas": current, "desiredReplicas": desired})
        if metrics:
            status["currentMetrics"] = metrics
        status["conditions"] = _ordered(conditions)
        self.client.update_status(HPA, hpa, status)
        return SYNC_PERIOD

    def _recommend(
        self, key: Key, hpa: Obj, target: Obj, current: int, conditions: list[Obj], stamp: str
    ) -> tuple[int, list[Obj], str, list[Obj]]:
        spec = hpa.get("spec") or {}
        low, high = int(spec.get("minReplicas", 1)), int(spec.get("maxReplicas", 1))
        if current == 0:
            message = "scaling is disabled since the replica count of the target is zero"
            conditions = set_condition(
                conditions, "ScalingActive", "False", "ScalingDisabled", message, stamp
            )
            return 0, [], "", conditions
        selector = (target.get("spec") or {}).get("selector") or {}
        pods = [
            p for p in self.client.list(PODS, key[0], selector) if pod_active(p) and pod_ready(p)
        ]
        recommended, metrics, label = 0, [], ""
        try:
            for metric in spec.get("metrics") or []:
                if metric.get("type") != "Resource":
                    raise MetricError(
                        "FailedGetExternalMetric"
                        if metric.get("type") == "External"
                        else "FailedGetPodsMetric",
                        f"the HPA was unable to compute the replica count: unable to get metric "
                        f"{metric.get('type')}: no custom or external metrics API is served",
                    )
                count, entry = _resource_metric(metric, pods, self.usage, current)
                metrics.append(entry)
                if count >= recommended:
                    recommended, label = count, _metric_label(metric)
        except MetricError as exc:
            conditions = set_condition(
                conditions, "ScalingActive", "False", exc.reason, exc.message, stamp
            )
            return current, metrics, "", conditions
        message = f"the HPA was able to successfully calculate a replica count from {label}"
        conditions = set_condition(
            conditions, "ScalingActive", "True", "ValidMetricFound", message, stamp
        )
        desired = self._stabilized(key, hpa, recommended, current)
        if desired > high:
            desired, limited = (
                high,
                (
                    "True",
                    "TooManyReplicas",
                    "the desired replica count is more than the maximum replica count",
                ),
            )
        elif desired < low:
            desired, limited = (
                low,
                (
                    "True",
                    "TooFewReplicas",
                    "the desired replica count is less than the minimum replica count",
                ),
            )
        else:
            limited = (
                "False",
                "DesiredWithinRange",
                "the desired count is within the acceptable range",
            )
        conditions = set_condition(conditions, "ScalingLimited", *limited, stamp)
        return desired, metrics, label, conditions

    def _stabilized(self, key: Key, hpa: Obj, recommended: int, current: int) -> int:
        """Scale down no further than the highest recommendation within the window."""
        behavior = ((hpa.get("spec") or {}).get("behavior") or {}).get("scaleDown") or {}
        window = float(behavior.get("stabilizationWindowSeconds", DOWNSCALE_WINDOW))
        now = now_utc().timestamp()
        history = self._recommendations.setdefault(key, [(now, current)])
        history.append((now, recommended))
        history[:] = [(t, r) for t, r in history if now - t <= window]
        return max(r for _, r in history) if recommended < current else recommended


def _ordered(conditions: list[Obj]) -> list[Obj]:
    order = {"AbleToScale": 0, "ScalingActive": 1, "ScalingLimited": 2}
    return sorted(conditions, key=lambda c: order.get(str(c.get("type")), 9))
