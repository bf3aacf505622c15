"""The disruption controller: PodDisruptionBudget status from the pods a budget selects.

``currentHealthy`` (ready pods), ``desiredHealthy`` (from ``minAvailable`` or ``maxUnavailable``,
percentages rounded up like the real controller), ``disruptionsAllowed`` and the
``DisruptionAllowed`` condition, which ``kubectl describe pdb`` and dashboards show. Evictions
themselves are decided by the eviction subresource, from the same pods.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubesim.controllers.base import Controller, Key
from kubesim.controllers.client import (
    PODS,
    fmt_time,
    now_utc,
    pod_active,
    pod_ready,
    set_condition,
)
from kubesim.store import Event, Obj

PDB = ("policy", "poddisruptionbudgets")


def _amount(value: object, total: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return -(-total * int(value[:-1]) // 100)
    return int(str(value))


class DisruptionController(Controller):
    name = "disruption"
    watches = (PDB, PODS)

    def keys(self, event: Event) -> Iterable[Key]:
        if event.gr == PDB:
            return super().keys(event)
        ns = event.obj["metadata"]["namespace"]
        return [(ns, p["metadata"]["name"]) for p in self.client.list(PDB, ns)]

    def reconcile(self, key: Key) -> float | None:
        pdb = self.client.get(PDB, *key)
        if pdb is None:
            return None
        spec = pdb.get("spec") or {}
        selector = spec.get("selector")
        pods = (
            [p for p in self.client.list(PODS, key[0], selector) if pod_active(p)]
            if selector
            else []
        )
        expected = len(pods)
        healthy = sum(1 for p in pods if pod_ready(p))
        if "minAvailable" in spec:
            desired = _amount(spec["minAvailable"], expected)
        elif "maxUnavailable" in spec:
            desired = max(0, expected - _amount(spec["maxUnavailable"], expected))
        else:
            desired = expected
        allowed = max(0, healthy - desired)
        old = pdb.get("status") or {}
        ok = allowed > 0
        conditions = set_condition(
            list(old.get("conditions") or []),
            "DisruptionAllowed",
            "True" if ok else "False",
            "SufficientPods" if ok else "InsufficientPods",
            "",
            fmt_time(now_utc()),
        )
        for c in conditions:
            c["observedGeneration"] = pdb["metadata"].get("generation", 1)
        status: Obj = {
            "observedGeneration": pdb["metadata"].get("generation", 1),
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "conditions": conditions,
        }
        self.client.update_status(PDB, pdb, status)
        return None
