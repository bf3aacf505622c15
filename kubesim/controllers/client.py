"""How controllers read and write: the apiserver core called directly, as a named field manager.

Controllers write through :class:`~kubesim.api.objects.Objects` exactly like an HTTP client would
(defaulting, managedFields, resourceVersion conflicts, watch events), only without the HTTP hop.
Besides the client, this module holds the helpers every workload controller shares: label-selector
matching, owner references, pod readiness and the hash-based names real controllers give objects.
"""

from __future__ import annotations

import builtins
import copy
import datetime
import hashlib
import json
from typing import Any

from kubesim.api import deletion
from kubesim.api.objects import Objects
from kubesim.machinery.meta import WriteOptions
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.selectors import matches_label_selector as selector_matches
from kubesim.store import GroupResource, Obj

PODS: GroupResource = ("", "pods")
NODES: GroupResource = ("", "nodes")
SAFE = "bcdfghjklmnpqrstvwxz2456789"


class Client:
    """Reads from the store and writes through the apiserver core under one manager name."""

    def __init__(self, objs: Objects, manager: str) -> None:
        self.objs = objs
        self.store = objs.store
        self.opts = WriteOptions(manager=manager)
        self.status_opts = WriteOptions(manager=manager, subresource="status")

    def rt(self, gr: GroupResource) -> ResourceType:
        rt = self.objs.registry.by_group_resource(*gr)
        assert rt is not None, gr
        return rt

    def get(self, gr: GroupResource, namespace: str, name: str) -> Obj | None:
        return self.store.get(gr, namespace, name)

    def list(
        self, gr: GroupResource, namespace: str | None = None, selector: Obj | None = None
    ) -> builtins.list[Obj]:
        items = self.store.list(gr, namespace)
        if selector is None:
            return items
        return [o for o in items if selector_matches(selector, labels_of(o))]

    def owned(self, gr: GroupResource, owner: Obj) -> builtins.list[Obj]:
        """Objects in the owner's namespace whose controller reference points at it."""
        uid = owner["metadata"]["uid"]
        return [
            o
            for o in self.store.list(gr, owner["metadata"].get("namespace", ""))
            if controller_uid(o) == uid
        ]

    def create(self, gr: GroupResource, namespace: str, body: Obj) -> Obj:
        return self.objs.create(self.rt(gr), namespace, body, self.opts)

    def update(self, gr: GroupResource, obj: Obj) -> Obj:
        meta = obj["metadata"]
        return self.objs.update(
            self.rt(gr), meta.get("namespace", ""), meta["name"], obj, self.opts
        )

    def update_status(self, gr: GroupResource, obj: Obj, status: Obj) -> Obj:
        """Write ``status`` unless it is what the object already has."""
        if obj.get("status") == status:
            return obj
        body = {**obj, "status": status}
        meta = obj["metadata"]
        return self.objs.update(
            self.rt(gr), meta.get("namespace", ""), meta["name"], body, self.status_opts
        )

    def delete(self, gr: GroupResource, obj: Obj, policy: str = "Background") -> None:
        self._delete(gr, obj, {"propagationPolicy": policy})

    def delete_now(self, gr: GroupResource, obj: Obj) -> None:
        """Delete with no grace period: the object goes at once (a pod whose containers are down)."""
        self._delete(gr, obj, {"gracePeriodSeconds": 0})

    def _delete(self, gr: GroupResource, obj: Obj, options: Obj) -> None:
        """Delete this very object (its uid as precondition), never a namesake created since."""
        meta = obj["metadata"]
        body = {**options, "preconditions": {"uid": meta["uid"]}}
        deletion.delete(
            self.objs, self.rt(gr), meta.get("namespace", ""), meta["name"], body, self.opts
        )


# -- labels and selectors -------------------------------------------------------------------------
def labels_of(obj: Obj) -> dict[str, str]:
    return dict(obj["metadata"].get("labels") or {})


def selector_string(selector: Obj) -> str:
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        vals = ",".join(expr.get("values") or [])
        op = expr.get("operator")
        parts.append(
            {
                "In": f"{expr['key']} in ({vals})",
                "NotIn": f"{expr['key']} notin ({vals})",
                "Exists": expr["key"],
            }.get(op or "", f"!{expr['key']}")
        )
    return ",".join(parts)


# -- ownership ------------------------------------------------------------------------------------
def owner_ref(owner: Obj, *, block: bool = True) -> Obj:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": block,
    }


def controller_ref(obj: Obj) -> Obj | None:
    return next(
        (r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")), None
    )


def controller_uid(obj: Obj) -> str | None:
    ref = controller_ref(obj)
    return ref.get("uid") if ref else None


def owner_key(obj: Obj, kind: str) -> list[tuple[str, str]]:
    """The (namespace, name) of the controlling owner of ``kind``, for event → key mapping."""
    ref = controller_ref(obj)
    if ref is None or ref.get("kind") != kind:
        return []
    return [(obj["metadata"].get("namespace", ""), ref["name"])]


# -- pods -----------------------------------------------------------------------------------------
def condition(obj: Obj, kind: str) -> Obj | None:
    return next(
        (c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind),
        None,
    )


def pod_ready(pod: Obj) -> bool:
    cond = condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def pod_active(pod: Obj) -> bool:
    """Neither finished nor being deleted: what ReplicaSets and Jobs count."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def pod_available(pod: Obj, min_ready_seconds: int, now: datetime.datetime) -> bool:
    cond = condition(pod, "Ready")
    if cond is None or cond.get("status") != "True":
        return False
    if min_ready_seconds <= 0:
        return True
    since = parse_time(cond.get("lastTransitionTime"))
    return since is not None and (now - since).total_seconds() >= min_ready_seconds


def pod_from_template(template: Obj, owner: Obj, name: str, extra_labels: dict[str, str]) -> Obj:
    tmeta = template.get("metadata") or {}
    meta: Obj = {
        "name": name,
        "labels": {**(tmeta.get("labels") or {}), **extra_labels},
        "ownerReferences": [owner_ref(owner)],
    }
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        meta["finalizers"] = list(tmeta["finalizers"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


# -- names and hashes -----------------------------------------------------------------------------
def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    """apimachinery's rand.SafeEncodeString: no vowels, no look-alike characters."""
    return "".join(SAFE[ord(c) % len(SAFE)] for c in text)


def template_hash(template: Obj, collisions: int = 0) -> str:
    """The ``pod-template-hash`` / ``controller-revision-hash`` of a template."""
    raw = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collisions:
        raw += str(collisions).encode()
    return safe_encode(str(fnv32a(raw)))


def suffix(seed: str, n: int = 5) -> str:
    """A stable random-looking name suffix, so scenarios come out the same on every start."""
    digest = hashlib.blake2b(seed.encode(), digest_size=8).digest()
    return "".join(SAFE[b % len(SAFE)] for b in digest[:n])


def now_utc() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def fmt_time(t: datetime.datetime) -> str:
    return t.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any) -> datetime.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def set_condition(
    conditions: list[Obj],
    kind: str,
    status: str,
    reason: str,
    message: str,
    now: str,
    *,
    update_time: bool = False,
) -> list[Obj]:
    """Replace or add a condition in place; ``lastTransitionTime`` moves only on a status change.

    ``update_time`` adds ``lastUpdateTime`` (Deployments), moved whenever reason or message change.
    """
    old = next((c for c in conditions if c.get("type") == kind), None)
    if old is not None and (old.get("status"), old.get("reason"), old.get("message")) == (
        status,
        reason,
        message,
    ):
        return conditions
    new: Obj = {"type": kind, "status": status}
    if update_time:
        new["lastUpdateTime"] = now
    new["lastTransitionTime"] = (
        old["lastTransitionTime"] if old and old.get("status") == status else now
    )
    new.update({"reason": reason, "message": message})
    if old is None:
        return [*conditions, new]
    return [new if c is old else c for c in conditions]
