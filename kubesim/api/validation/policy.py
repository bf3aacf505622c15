"""Claims, autoscalers, disruption budgets and RBAC objects (``ValidatePersistentVolumeClaimSpec``,
``validateHorizontalPodAutoscalerSpec``, ``ValidatePodDisruptionBudgetSpec``, ``rbac/validation``).
"""

from __future__ import annotations

from typing import Any

from kubesim.api.validation import field as f
from kubesim.api.validation.workloads import int_or_percent
from kubesim.machinery import quantity

Cause = f.Cause
Obj = f.Obj
RBAC = "rbac.authorization.k8s.io"
_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")


def pvc_spec(spec: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    modes = f.items(f.get(spec, "accessModes"))
    if not modes:
        causes.append(f.required(f"{path}.accessModes", "at least 1 access mode is required"))
    for mode in modes:
        if mode not in _ACCESS_MODES:
            causes.append(f.not_supported(f"{path}.accessModes", mode, _ACCESS_MODES))
    causes += f.label_selector(f.get(spec, "selector"), f"{path}.selector")
    storage = f.get(spec, "resources", "requests", "storage")
    at = f"{path}.resources[storage]"
    if storage is None:
        causes.append(f.required(at))
    elif quantity.parse(storage) <= 0:
        causes.append(f.invalid(at, str(storage), "must be greater than zero"))
    causes += f.one_of(spec, "volumeMode", path, ("Block", "Filesystem"))
    return causes


def pvc(obj: Obj) -> list[Cause]:
    return pvc_spec(f.mapping(obj.get("spec")), "spec")


def _scale_target(ref: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for key in ("kind", "name"):
        value = f.get(ref, key)
        if not value:
            causes.append(f.required(f"{path}.{key}"))
        elif "/" in str(value) or "%" in str(value) or value in (".", ".."):
            causes.append(f.invalid(f"{path}.{key}", value, "may not contain '/' or '%'"))
    return causes


def hpa(obj: Obj) -> list[Cause]:
    spec = f.mapping(obj.get("spec"))
    causes: list[Cause] = []
    low, high = spec.get("minReplicas"), spec.get("maxReplicas", 0)
    if isinstance(low, int) and low < 1:
        causes.append(f.invalid("spec.minReplicas", low, "must be greater than or equal to 1"))
    if not isinstance(high, int) or high < 1:
        causes.append(f.invalid("spec.maxReplicas", high, "must be greater than 0"))
    if isinstance(low, int) and isinstance(high, int) and high < low:
        causes.append(
            f.invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`")
        )
    causes += _scale_target(spec.get("scaleTargetRef"), "spec.scaleTargetRef")
    target = spec.get("targetCPUUtilizationPercentage")
    if isinstance(target, int) and target < 1:
        causes.append(
            f.invalid("spec.targetCPUUtilizationPercentage", target, "must be greater than 0")
        )
    return causes


def _pdb_spec(spec: Obj) -> f.Go:
    """``policy.PodDisruptionBudgetSpec`` in ``%#v`` form: pointers print as addresses."""
    fields = (
        ("MinAvailable", "intstr.IntOrString", "minAvailable"),
        ("Selector", "v1.LabelSelector", "selector"),
        ("MaxUnavailable", "intstr.IntOrString", "maxUnavailable"),
        ("UnhealthyPodEvictionPolicy", "policy.UnhealthyPodEvictionPolicyType", "x"),
    )
    parts = [
        f"{name}:(*{kind})({'0xc000a%05x' % (i * 32) if spec.get(key) is not None else 'nil'})"
        for i, (name, kind, key) in enumerate(fields)
    ]
    return f.Go("policy.PodDisruptionBudgetSpec{" + ", ".join(parts) + "}")


def pdb(obj: Obj) -> list[Cause]:
    spec = f.mapping(obj.get("spec"))
    causes: list[Cause] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        causes.append(
            f.invalid("spec", _pdb_spec(spec), "minAvailable and maxUnavailable cannot be both set")
        )
    for key in ("minAvailable", "maxUnavailable"):
        if spec.get(key) is not None:
            causes += int_or_percent(spec[key], f"spec.{key}")
    causes += f.label_selector(spec.get("selector"), "spec.selector")
    causes += f.one_of(
        spec, "unhealthyPodEvictionPolicy", "spec", ("AlwaysAllow", "IfHealthyBudget")
    )
    return causes


def _rule(rule: Any, path: str, *, namespaced: bool) -> list[Cause]:
    causes: list[Cause] = []
    if not f.items(f.get(rule, "verbs")):
        causes.append(f.required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = f.items(f.get(rule, "nonResourceURLs"))
    if urls:
        shown = f.Go("[]string{" + ", ".join(f.shown(str(u)) for u in urls) + "}")
        if namespaced:
            causes.append(
                f.invalid(
                    f"{path}.nonResourceURLs",
                    shown,
                    "namespaced rules cannot apply to non-resource URLs",
                )
            )
        if any(f.items(f.get(rule, k)) for k in ("apiGroups", "resources", "resourceNames")):
            causes.append(
                f.invalid(
                    f"{path}.nonResourceURLs",
                    shown,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return causes
    if not f.items(f.get(rule, "apiGroups")):
        causes.append(
            f.required(f"{path}.apiGroups", "resource rules must supply at least one api group")
        )
    if not f.items(f.get(rule, "resources")):
        causes.append(
            f.required(f"{path}.resources", "resource rules must supply at least one resource")
        )
    return causes


def role(obj: Obj) -> list[Cause]:
    namespaced = obj.get("kind") == "Role"
    return [
        c
        for i, rule in enumerate(f.items(obj.get("rules")))
        for c in _rule(rule, f"rules[{i}]", namespaced=namespaced)
    ]


def _subject(subject: Any, path: str, *, namespaced: bool) -> list[Cause]:
    causes: list[Cause] = []
    name, kind, group = f.get(subject, "name"), f.get(subject, "kind"), f.get(subject, "apiGroup")
    if not name:
        causes.append(f.required(f"{path}.name"))
    if kind == "ServiceAccount":
        if name:
            causes += f.invalid_each(f"{path}.name", name, f.dns1123_subdomain(str(name)))
        if group:
            causes.append(f.not_supported(f"{path}.apiGroup", group, ("",)))
        if not namespaced and not f.get(subject, "namespace"):
            causes.append(f.required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if group != RBAC:
            causes.append(f.not_supported(f"{path}.apiGroup", group or "", (RBAC,)))
    else:
        causes.append(
            f.not_supported(f"{path}.kind", kind or "", ("ServiceAccount", "User", "Group"))
        )
    return causes


def binding(obj: Obj) -> list[Cause]:
    namespaced = obj.get("kind") == "RoleBinding"
    ref = f.mapping(obj.get("roleRef"))
    causes: list[Cause] = []
    if ref.get("apiGroup") != RBAC:
        causes.append(f.not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", (RBAC,)))
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if ref.get("kind") not in kinds:
        causes.append(f.not_supported("roleRef.kind", ref.get("kind") or "", kinds))
    name = ref.get("name")
    if not name:
        causes.append(f.required("roleRef.name"))
    elif "/" in str(name) or "%" in str(name):
        causes.append(f.invalid("roleRef.name", name, "may not contain '/' or '%'"))
    for i, subject in enumerate(f.items(obj.get("subjects"))):
        causes += _subject(subject, f"subjects[{i}]", namespaced=namespaced)
    return causes


def binding_update(old: Obj, new: Obj) -> list[Cause]:
    """A binding's roleRef cannot change (``ValidateRoleBindingUpdate``)."""
    if old.get("roleRef") == new.get("roleRef"):
        return []
    ref = f.mapping(new.get("roleRef"))
    value = f.Go(
        f"rbac.RoleRef{{APIGroup:{f.shown(str(ref.get('apiGroup', '')))}, "
        f"Kind:{f.shown(str(ref.get('kind', '')))}, Name:{f.shown(str(ref.get('name', '')))}}}"
    )
    return [f.invalid("roleRef", value, "cannot change roleRef")]


# scheduling.SystemPriorityClasses: the only classes whose names may start with "system-".
SYSTEM_PRIORITIES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
_HIGHEST_USER_PRIORITY = 1000000000


def priority_class(obj: Obj) -> list[Cause]:
    name, value = str(f.get(obj, "metadata", "name") or ""), obj.get("value", 0)
    causes: list[Cause] = []
    if name.startswith("system-"):
        known = SYSTEM_PRIORITIES.get(name)
        why = (
            f"{name} is not a known system priority class"
            if known is None
            else (f"value of {name} PriorityClass must be {known}" if known != value else "")
        )
        if why:
            causes.append(
                f.forbidden(
                    "metadata.name",
                    "priority class names with 'system-' prefix are reserved for system use "
                    f"only. error: {why}",
                )
            )
    elif isinstance(value, int) and value > _HIGHEST_USER_PRIORITY:
        causes.append(
            f.forbidden(
                "value",
                f"maximum allowed value of a user defined priority is {_HIGHEST_USER_PRIORITY}",
            )
        )
    return causes + f.one_of(obj, "preemptionPolicy", "", ("Never", "PreemptLowerPriority"))


def priority_class_update(old: Obj, new: Obj) -> list[Cause]:
    causes: list[Cause] = []
    for key in ("value", "preemptionPolicy"):
        if old.get(key) != new.get(key):
            causes.append(f.forbidden(key, "may not be changed in an update."))
    return causes


def api_service(obj: Obj) -> list[Cause]:
    """``ValidateAPIService``'s name rule: an APIService is named ``version.group``."""
    required_name = f"{f.get(obj, 'spec', 'version') or ''}.{f.get(obj, 'spec', 'group') or ''}"
    name = f.get(obj, "metadata", "name")
    if name == required_name:
        return []
    why = f'must be `spec.version+"."+spec.group`: {f.shown(required_name)}'
    return [f.invalid("metadata.name", name, why)]
