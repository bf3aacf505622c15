"""Fields a real apiserver refuses to change after creation, per kind (``ValidateXUpdate``).

Changing a Deployment's selector, a Job's template, a Service's clusterIP, an immutable ConfigMap's
data or most of a Pod's spec fails on a real cluster; it must fail here too, or a Helm upgrade that
works against the simulator breaks in production.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kubesim.machinery.registry import ResourceType

Obj = dict[str, Any]
Cause = dict[str, str]
_IMMUTABLE = "field is immutable"
# StatefulSet spec fields an update may change (apps/validation ValidateStatefulSetUpdate).
_STS_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)


def _get(obj: Obj, *path: str) -> Any:
    cur: Any = obj
    for p in path:
        cur = cur.get(p) if isinstance(cur, dict) else None
    return cur


def _changed(old: Obj, new: Obj, *path: str) -> Cause | None:
    before, after = _get(old, *path), _get(new, *path)
    if before is None or before == after:
        return None
    return {
        "reason": "FieldValueInvalid",
        "field": ".".join(path),
        "message": f"Invalid value: {json.dumps(after)}: {_IMMUTABLE}",
    }


def _forbidden(field: str, message: str) -> Cause:
    return {"reason": "FieldValueForbidden", "field": field, "message": f"Forbidden: {message}"}


# ValidatePodUpdate's refusal of a spec change, spec.nodeName's (once set) included.
_POD_FIXED = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
    "set to 1 if it was previously negative)"
)

# batch/v1 ValidateJobSpecUpdate: fields fixed once the Job exists (completions has its own rule).
_JOB_IMMUTABLE = (
    "completionMode",
    "podFailurePolicy",
    "backoffLimitPerIndex",
    "managedBy",
    "successPolicy",
)


def _job_completions(old: Obj, new: Obj) -> Cause | None:
    """Completions is immutable, except that an Indexed Job may scale (ElasticIndexedJob, GA in
    1.31) when completions and parallelism change together."""
    before, after = _get(old, "spec", "completions"), _get(new, "spec", "completions")
    if before == after:
        return None
    if _get(new, "spec", "completionMode") != "Indexed":
        return _changed(old, new, "spec", "completions")
    if after is None or after == _get(new, "spec", "parallelism"):
        return None
    return {
        "reason": "FieldValueInvalid",
        "field": "spec.completions",
        "message": f"Invalid value: {json.dumps(after)}: can only be modified in tandem with "
        "spec.parallelism",
    }


def _pod(old: Obj, new: Obj) -> list[Cause]:
    """A pod's spec may change only images, activeDeadlineSeconds and added tolerations."""

    def comparable(spec: Any) -> Any:
        spec = copy.deepcopy(spec) if isinstance(spec, dict) else {}
        for kind in ("containers", "initContainers"):
            for c in spec.get(kind) or []:
                if isinstance(c, dict):
                    c.pop("image", None)
        for key in (
            "activeDeadlineSeconds",
            "tolerations",
            "terminationGracePeriodSeconds",
            "schedulingGates",
            "nodeName",
        ):
            spec.pop(key, None)
        return spec

    if comparable(old.get("spec")) == comparable(new.get("spec")):
        node = _get(old, "spec", "nodeName")
        if node and node != _get(new, "spec", "nodeName"):
            return [_forbidden("spec.nodeName", _POD_FIXED)]
        return []
    return [_forbidden("spec", _POD_FIXED)]


def _statefulset(old: Obj, new: Obj) -> list[Cause]:
    a = {k: v for k, v in (old.get("spec") or {}).items() if k not in _STS_MUTABLE}
    b = {k: v for k, v in (new.get("spec") or {}).items() if k not in _STS_MUTABLE}
    if a == b:
        return []
    return [
        _forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
            "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
            "'minReadySeconds' are forbidden",
        )
    ]


def _immutable_data(old: Obj, new: Obj) -> list[Cause]:
    if not old.get("immutable"):
        return []
    causes = []
    for field in ("data", "binaryData", "immutable"):
        if old.get(field) != new.get(field):
            causes.append(_forbidden(field, "field is immutable when `immutable` is set"))
    return causes


def changes(rt: ResourceType, old: Obj, new: Obj) -> list[Cause]:
    """Causes for every immutable field ``new`` changes relative to ``old``."""
    gr = rt.group_resource
    found: list[Cause | None] = []
    if gr in (
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("apps", "daemonsets"),
        ("apps", "statefulsets"),
        ("batch", "jobs"),
    ):
        found.append(_changed(old, new, "spec", "selector"))
    if gr == ("batch", "jobs"):
        found.append(_changed(old, new, "spec", "template"))
        for field in _JOB_IMMUTABLE:
            found.append(_changed(old, new, "spec", field))
        found.append(_job_completions(old, new))
    if gr == ("", "services"):
        found.append(_changed(old, new, "spec", "clusterIP"))
    if gr == ("", "secrets"):
        found.append(_changed(old, new, "type"))
    if gr == ("", "persistentvolumeclaims"):
        for field in ("accessModes", "storageClassName", "volumeMode", "selector"):
            found.append(_changed(old, new, "spec", field))
    causes = [c for c in found if c is not None]
    if gr in (("", "configmaps"), ("", "secrets")):
        causes += _immutable_data(old, new)
    if gr == ("", "pods"):
        causes += _pod(old, new)
    if gr == ("apps", "statefulsets"):
        causes += _statefulset(old, new)
    return causes
