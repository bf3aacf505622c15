"""The default scheduler: binds pending pods to nodes, or says why it cannot.

Filters as kube-scheduler's default plugins do for the cases a demo meets: cordoned nodes and
untolerated taints, ``nodeSelector`` and required node affinity (``matchExpressions`` and
``matchFields`` on ``metadata.name``, which DaemonSets use), CPU, memory and pod-count fit. A pod
that fits nowhere stays Pending with ``PodScheduled=False/Unschedulable`` and a FailedScheduling
event carrying the real "0/3 nodes are available: ..." message; any node change or pod deletion
gives it another try.
"""

from __future__ import annotations

import collections
import copy
from collections.abc import Iterable

import attrs

from kubesim.controllers.base import Controller, Key
from kubesim.controllers.client import (
    NODES,
    PODS,
    Client,
    condition,
    controller_uid,
    fmt_time,
    now_utc,
    pod_active,
    set_condition,
)
from kubesim.controllers.events import Recorder
from kubesim.controllers.nodes import node_ready
from kubesim.controllers.volumes import CLAIMS, PodClaims, pod_claims, select_node
from kubesim.machinery import quantity
from kubesim.store import Event, Obj

SCHEDULER = "default-scheduler"


@attrs.define
class Usage:
    """What the pods bound to one node request."""

    cpu: int = 0
    mem: int = 0
    pods: int = 0
    owners: list[str | None] = attrs.field(factory=list)


def _pending(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return (
        not spec.get("nodeName")
        and spec.get("schedulerName", SCHEDULER) == SCHEDULER
        and pod_active(pod)
    )


def tolerates(tolerations: list[Obj], taint: Obj) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t["key"] == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def _requirement(expr: Obj, value: str | None) -> bool:
    op, values = expr.get("operator"), expr.get("values") or []
    if op == "In":
        return value in values
    if op == "NotIn":
        return value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and values:
        try:
            diff = int(value) - int(values[0])
        except ValueError:
            return False
        return diff > 0 if op == "Gt" else diff < 0
    return False


def affinity_matches(pod: Obj, node: Obj) -> bool:
    spec = pod.get("spec") or {}
    labels = node["metadata"].get("labels") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    required = (
        ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms")
    if not required:
        return True
    fields = {"metadata.name": node["metadata"]["name"]}
    return any(
        all(
            _requirement(e, labels.get(e.get("key", "")))
            for e in term.get("matchExpressions") or []
        )
        and all(
            _requirement(e, fields.get(e.get("key", ""))) for e in term.get("matchFields") or []
        )
        for term in required
    )


class Scheduler(Controller):
    name = "scheduler"
    watches = (PODS, NODES, CLAIMS)

    def __init__(self, client: Client, recorder: Recorder) -> None:
        super().__init__(client)
        self.recorder = recorder

    def keys(self, event: Event) -> Iterable[Key]:
        obj = event.obj
        if event.gr == CLAIMS:  # a claim bound or created: the pods of its namespace try again
            ns = obj["metadata"]["namespace"]
            return [(ns, p["metadata"]["name"]) for p in self.client.list(PODS, ns) if _pending(p)]
        freed = event.gr == NODES or (
            event.type == "DELETED" and (obj.get("spec") or {}).get("nodeName")
        )
        if freed:
            return [
                (p["metadata"]["namespace"], p["metadata"]["name"])
                for p in self.client.list(PODS)
                if _pending(p)
            ]
        if event.type != "DELETED" and _pending(obj):
            return [(obj["metadata"]["namespace"], obj["metadata"]["name"])]
        return []

    def reconcile(self, key: Key) -> float | None:
        pod = self.client.get(PODS, *key)
        if pod is None or not _pending(pod):
            return None
        nodes = self.client.list(NODES)
        claims = pod_claims(self.client, pod)
        if claims.failure:
            self._unschedulable(pod, nodes, collections.Counter(), failure=claims.failure)
            return None
        usage = self._usage()
        fits: list[tuple[tuple[int, float, int, str], Obj]] = []
        reasons: collections.Counter[str] = collections.Counter()
        need = quantity.pod_requests(pod["spec"])
        owner = controller_uid(pod)
        for node in nodes:
            why = self._filter(pod, node, need, usage) or _volume_conflict(claims, node)
            if why:
                reasons[why] += 1
                continue
            name = node["metadata"]["name"]
            alloc = (node.get("status") or {}).get("allocatable") or {}
            cpu_share = (usage[name].cpu + need[0]) / max(
                1, quantity.millicores(alloc.get("cpu", 1))
            )
            siblings = sum(1 for o in usage[name].owners if o == owner and owner)
            fits.append(((siblings, round(cpu_share, 3), usage[name].pods, name), node))
        if fits and claims.waiting:  # bound once the claims are (a claim event brings it back)
            select_node(
                self.client, claims.waiting, min(fits, key=lambda f: f[0])[1]["metadata"]["name"]
            )
        elif fits:
            self._bind(pod, min(fits, key=lambda f: f[0])[1])
        else:
            self._unschedulable(pod, nodes, reasons)
        return None

    def _usage(self) -> dict[str, Usage]:
        usage: dict[str, Usage] = collections.defaultdict(Usage)
        for p in self.client.list(PODS):
            node = (p.get("spec") or {}).get("nodeName")
            if node and pod_active(p):
                cpu, mem = quantity.pod_requests(p["spec"])
                u = usage[node]
                u.cpu, u.mem, u.pods = u.cpu + cpu, u.mem + mem, u.pods + 1
                u.owners.append(controller_uid(p))
        return usage

    @staticmethod
    def _filter(pod: Obj, node: Obj, need: tuple[int, int], usage: dict[str, Usage]) -> str:
        spec = node.get("spec") or {}
        tolerations = (pod.get("spec") or {}).get("tolerations") or []
        for taint in spec.get("taints") or []:
            if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(
                tolerations, taint
            ):
                return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
        if spec.get("unschedulable") and not tolerates(
            tolerations, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
        ):
            return "node(s) were unschedulable"
        if not node_ready(node):
            return "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"
        if not affinity_matches(pod, node):
            return "node(s) didn't match Pod's node affinity/selector"
        alloc = (node.get("status") or {}).get("allocatable") or {}
        used = usage[node["metadata"]["name"]]
        if used.pods + 1 > quantity.as_int(alloc.get("pods", 110)):
            return "Too many pods"
        if need[0] and used.cpu + need[0] > quantity.millicores(alloc.get("cpu", 0)):
            return "Insufficient cpu"
        if need[1] and used.mem + need[1] > quantity.as_int(alloc.get("memory", 0)):
            return "Insufficient memory"
        return ""

    def _bind(self, pod: Obj, node: Obj) -> None:
        name = node["metadata"]["name"]
        bound = copy.deepcopy(pod)
        bound["spec"]["nodeName"] = name
        bound = self.client.update(PODS, bound)
        status = copy.deepcopy(bound.get("status") or {})
        status["conditions"] = set_condition(
            status.get("conditions") or [], "PodScheduled", "True", "", "", fmt_time(now_utc())
        )
        for c in status["conditions"]:
            if c["type"] == "PodScheduled":
                c.pop("reason", None)
                c.pop("message", None)
                c["lastProbeTime"] = None
        self.client.update_status(PODS, bound, status)
        meta = pod["metadata"]
        self.recorder.normal(
            bound,
            "Scheduled",
            f"Successfully assigned {meta['namespace']}/{meta['name']} to {name}",
            component=SCHEDULER,
        )

    def _unschedulable(
        self,
        pod: Obj,
        nodes: list[Obj],
        reasons: collections.Counter[str],
        *,
        failure: str = "",
    ) -> None:
        """``failure``: a PreFilter's verdict, which holds for every node alike."""
        if not nodes:
            message = "no nodes available to schedule pods"
        elif failure:
            message = (
                f"0/{len(nodes)} nodes are available: {failure}. preemption: 0/{len(nodes)} nodes "
                f"are available: {len(nodes)} Preemption is not helpful for scheduling."
            )
        else:
            parts = ", ".join(f"{n} {why}" for why, n in sorted(reasons.items()))
            resource = sum(
                n for why, n in reasons.items() if why.startswith(("Insufficient", "Too many"))
            )
            other = len(nodes) - resource
            pre = []
            if resource:
                pre.append(f"{resource} No preemption victims found for incoming pod")
            if other:
                pre.append(f"{other} Preemption is not helpful for scheduling")
            message = (
                f"0/{len(nodes)} nodes are available: {parts}. preemption: 0/{len(nodes)} nodes are "
                f"available: {', '.join(pre)}."
            )
        old = condition(pod, "PodScheduled")
        if old is not None and old.get("message") == message:
            return
        status = copy.deepcopy(pod.get("status") or {})
        status["conditions"] = set_condition(
            status.get("conditions") or [],
            "PodScheduled",
            "False",
            "Unschedulable",
            message,
            fmt_time(now_utc()),
        )
        for c in status["conditions"]:
            if c["type"] == "PodScheduled":
                c["lastProbeTime"] = None
        self.client.update_status(PODS, pod, status)
        self.recorder.warning(pod, "FailedScheduling", message, component=SCHEDULER)


def _volume_conflict(claims: PodClaims, node: Obj) -> str:
    """VolumeBinding's Filter: a bound volume's node affinity must admit the node."""
    for required in claims.terms:
        held = {
            "spec": {
                "affinity": {
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
                }
            }
        }
        if not affinity_matches(held, node):
            return "node(s) had volume node affinity conflict"
    return ""
