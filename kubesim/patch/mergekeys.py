"""Merge keys and list semantics of the built-in kinds, as data.

Strategic merge patch and server-side apply both need to know, for a field of a built-in kind, how
its lists merge. Upstream that knowledge lives in Go struct tags (``patchStrategy``,
``patchMergeKey``) and in ``+listType``/``+listMapKey``/``+mapType``/``+structType`` markers, and
reaches clients as ``x-kubernetes-patch-strategy`` / ``x-kubernetes-list-type`` in OpenAPI. This
module copies those markers for the kinds the simulator serves into one table per kind, keyed by
the field's path in the object (``spec.template.spec.containers[].ports``; ``[]`` is a list item).
The PodSpec and ObjectMeta rows are written once and embedded wherever a kind carries them.

Lists absent from the table are atomic (SSA) and replaced (SMP); maps absent are merged. This
module holds data and lookups only: it must not merge, patch or know about HTTP.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Rules = Mapping[str, "ListRule | MapRule"]


@dataclass(frozen=True)
class ListRule:
    """How one list merges: ``patch_*`` for strategic merge patch, the rest for apply."""

    patch_strategy: str = ""  # "merge", or "" for replace
    patch_merge_key: str = ""
    list_type: str = "atomic"  # "atomic" | "set" | "map"
    map_keys: tuple[str, ...] = ()
    # Key fields the schema defaults (protocol: TCP): apply fills them in to build the item key.
    key_defaults: tuple[tuple[str, Any], ...] = field(default=())


@dataclass(frozen=True)
class MapRule:
    """A map or struct that is not merged field by field."""

    patch_strategy: str = ""  # "replace" replaces on SMP; "retainKeys" merges (the directive does)
    atomic: bool = False  # SSA ``+mapType=atomic`` / ``+structType=atomic``


def _merge_by(key: str, *ssa_keys: str, defaults: tuple[tuple[str, Any], ...] = ()) -> ListRule:
    return ListRule("merge", key, "map", ssa_keys or (key,), defaults)


_TCP = (("protocol", "TCP"),)
MERGE_SET = ListRule("merge", "", "set")
ATOMIC = MapRule(atomic=True)
BY_TYPE = _merge_by("type")

OBJECT_META: Rules = {
    "finalizers": MERGE_SET,
    "ownerReferences": _merge_by("uid"),
}

_CONTAINER: Rules = {
    "ports": _merge_by("containerPort", "containerPort", "protocol", defaults=_TCP),
    "env": _merge_by("name"),
    "volumeMounts": _merge_by("mountPath"),
    "volumeDevices": _merge_by("devicePath"),
    "resources.claims": ListRule(list_type="map", map_keys=("name",)),
}

POD_SPEC: Rules = {
    "volumes": _merge_by("name"),  # upstream: merge,retainKeys
    "containers": _merge_by("name"),
    "initContainers": _merge_by("name"),
    "ephemeralContainers": _merge_by("name"),
    "imagePullSecrets": _merge_by("name"),
    "hostAliases": _merge_by("ip"),
    "topologySpreadConstraints": _merge_by("topologyKey", "topologyKey", "whenUnsatisfiable"),
    "schedulingGates": _merge_by("name"),
    "resourceClaims": _merge_by("name"),  # upstream: merge,retainKeys
    "nodeSelector": ATOMIC,
    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution": ATOMIC,
    **{
        f"{containers}[].{path}": rule
        for containers in ("containers", "initContainers", "ephemeralContainers")
        for path, rule in _CONTAINER.items()
    },
}

POD_STATUS: Rules = {
    "conditions": BY_TYPE,
    "podIPs": _merge_by("ip"),
    "hostIPs": _merge_by("ip"),
    "resourceClaimStatuses": _merge_by("name"),
}


def _embed(prefix: str, rules: Rules) -> dict[str, ListRule | MapRule]:
    return {f"{prefix}.{path}": rule for path, rule in rules.items()}


def _template(prefix: str) -> dict[str, ListRule | MapRule]:
    """A PodTemplateSpec at ``prefix``."""
    return {**_embed(f"{prefix}.metadata", OBJECT_META), **_embed(f"{prefix}.spec", POD_SPEC)}


def _workload(*, conditions: ListRule = BY_TYPE, **extra: ListRule | MapRule) -> Rules:
    return {
        **_template("spec.template"),
        "spec.selector": ATOMIC,
        "status.conditions": conditions,
        **{path.replace("__", "."): rule for path, rule in extra.items()},
    }


_JOB_CONDITIONS = ListRule("merge", "type", "atomic")  # patchMergeKey=type but +listType=atomic

_CRONJOB: Rules = {
    **_embed("spec.jobTemplate.metadata", OBJECT_META),
    **_template("spec.jobTemplate.spec.template"),
    "spec.jobTemplate.spec.selector": ATOMIC,
}

_SERVICE: Rules = {
    "spec.ports": _merge_by("port", "port", "protocol", defaults=_TCP),
    "spec.selector": ATOMIC,
    "status.conditions": BY_TYPE,
}

_NODE: Rules = {
    "spec.podCIDRs": MERGE_SET,
    "status.conditions": BY_TYPE,
    "status.addresses": ListRule("merge", "type", "atomic"),
}

_PLAIN: Rules = {}

# (group, kind) -> rules relative to the object root. Every built-in kind the simulator serves is
# here, even with no rows: presence is what makes strategic merge patch acceptable for it.
KINDS: Mapping[tuple[str, str], Rules] = {
    ("", "Pod"): {**_embed("spec", POD_SPEC), **_embed("status", POD_STATUS)},
    ("", "PodTemplate"): _template("template"),
    ("", "ReplicationController"): {**_template("spec.template"), "status.conditions": BY_TYPE},
    ("", "Service"): _SERVICE,
    ("", "Namespace"): {"status.conditions": BY_TYPE},
    ("", "Node"): _NODE,
    ("", "PersistentVolumeClaim"): {"status.conditions": BY_TYPE},
    ("", "ServiceAccount"): {"secrets": _merge_by("name")},
    **{
        ("", kind): _PLAIN
        for kind in [
            "ConfigMap",
            "Secret",
            "Endpoints",
            "Event",
            "LimitRange",
            "ResourceQuota",
            "PersistentVolume",
            "ComponentStatus",
            "Binding",
        ]
    },
    ("apps", "Deployment"): _workload(spec__strategy=MapRule(patch_strategy="retainKeys")),
    ("apps", "ReplicaSet"): _workload(),
    ("apps", "StatefulSet"): _workload(),
    ("apps", "DaemonSet"): _workload(),
    ("apps", "ControllerRevision"): _PLAIN,
    ("batch", "Job"): _workload(conditions=_JOB_CONDITIONS),
    ("batch", "CronJob"): _CRONJOB,
    ("autoscaling", "HorizontalPodAutoscaler"): {"status.conditions": BY_TYPE},
    ("policy", "PodDisruptionBudget"): {"spec.selector": ATOMIC, "status.conditions": BY_TYPE},
    ("policy", "Eviction"): _PLAIN,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): {
        "status.conditions": ListRule(list_type="map", map_keys=("type",)),
    },
    **{
        (group, kind): _PLAIN
        for group, kinds in (
            ("networking.k8s.io", "Ingress IngressClass NetworkPolicy"),
            ("rbac.authorization.k8s.io", "Role ClusterRole RoleBinding ClusterRoleBinding"),
            (
                "storage.k8s.io",
                "StorageClass CSIDriver CSINode VolumeAttachment CSIStorageCapacity",
            ),
            ("coordination.k8s.io", "Lease"),
            ("discovery.k8s.io", "EndpointSlice"),
            ("events.k8s.io", "Event"),
        )
        for kind in kinds.split()
    },
}

# Struct fields that exist in a kind's Go zero value (non-pointer structs), so that creating an
# object does not count them as added by the creator (real managedFields show no ``.`` on them).
_TEMPLATE_ZERO = ("template", "template.metadata", "template.spec")
ZERO_STRUCTS: Mapping[tuple[str, str], tuple[str, ...]] = {
    ("apps", "Deployment"): ("spec.strategy", *(f"spec.{p}" for p in _TEMPLATE_ZERO)),
    ("apps", "ReplicaSet"): tuple(f"spec.{p}" for p in _TEMPLATE_ZERO),
    ("apps", "StatefulSet"): ("spec.updateStrategy", *(f"spec.{p}" for p in _TEMPLATE_ZERO)),
    ("apps", "DaemonSet"): ("spec.updateStrategy", *(f"spec.{p}" for p in _TEMPLATE_ZERO)),
    ("batch", "Job"): tuple(f"spec.{p}" for p in _TEMPLATE_ZERO),
    ("batch", "CronJob"): (
        "spec.jobTemplate",
        "spec.jobTemplate.metadata",
        "spec.jobTemplate.spec",
        *(f"spec.jobTemplate.spec.{p}" for p in _TEMPLATE_ZERO),
    ),
    ("", "ReplicationController"): (),
    ("", "Service"): ("status.loadBalancer",),
}


def rules_for(group: str, kind: str) -> Rules | None:
    """The rules of a built-in kind, or None for a kind this table does not know (a CRD's)."""
    return KINDS.get((group, kind))


# Lists without ``omitempty`` upstream: the zero value holds ``null`` there, not nothing.
NULL_LISTS: Mapping[tuple[str, str], tuple[str, ...]] = {
    ("", "Pod"): ("spec.containers",),
    ("", "PodTemplate"): ("template.spec.containers",),
    **dict.fromkeys(
        (
            ("", "ReplicationController"),
            ("apps", "Deployment"),
            ("apps", "ReplicaSet"),
            ("apps", "StatefulSet"),
            ("apps", "DaemonSet"),
            ("batch", "Job"),
        ),
        ("spec.template.spec.containers",),
    ),
    ("batch", "CronJob"): ("spec.jobTemplate.spec.template.spec.containers",),
    ("rbac.authorization.k8s.io", "Role"): ("rules",),
    ("rbac.authorization.k8s.io", "ClusterRole"): ("rules",),
}


def zero_value(group: str, kind: str) -> dict[str, Any]:
    """The kind's Go zero value as JSON: what exists before a create sets anything.

    Empty for kinds this table does not know: a custom resource starts as an empty object.
    """
    if (group, kind) not in KINDS:
        return {}
    zero: dict[str, Any] = {}
    structs = ("metadata", "spec", "status", *ZERO_STRUCTS.get((group, kind), ()))
    for dotted in (*structs, *NULL_LISTS.get((group, kind), ())):
        node = zero
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node.setdefault(leaf, {} if dotted in structs else None)
    return zero


def lookup(rules: Rules | None, path: str) -> ListRule | MapRule | None:
    """The rule at ``path`` (``metadata.finalizers`` is shared by every kind)."""
    if path.startswith("metadata."):
        return OBJECT_META.get(path[len("metadata.") :])
    return rules.get(path) if rules is not None else None


def list_rule(rules: Rules | None, path: str) -> ListRule:
    rule = lookup(rules, path)
    return rule if isinstance(rule, ListRule) else ListRule()


def map_rule(rules: Rules | None, path: str) -> MapRule:
    rule = lookup(rules, path)
    return rule if isinstance(rule, MapRule) else MapRule()


def rules_from_openapi(schema: Mapping[str, Any]) -> dict[str, ListRule | MapRule]:
    """The apply rules a CRD's ``openAPIV3Schema`` declares with ``x-kubernetes-list-type``,
    ``x-kubernetes-list-map-keys`` and ``x-kubernetes-map-type``. Map values under
    ``additionalProperties`` are not followed: their keys are data, not field names."""
    rules: dict[str, ListRule | MapRule] = {}
    _walk_openapi(schema, "", rules)
    return rules


def _walk_openapi(
    schema: Mapping[str, Any], path: str, rules: dict[str, ListRule | MapRule]
) -> None:
    if schema.get("x-kubernetes-map-type") in ("atomic", "granular") and path:
        rules[path] = MapRule(atomic=schema["x-kubernetes-map-type"] == "atomic")
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, Mapping):
            _walk_openapi(sub, f"{path}.{name}" if path else name, rules)
    items = schema.get("items")
    if not isinstance(items, Mapping):
        return
    list_type = schema.get("x-kubernetes-list-type", "atomic")
    keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
    if list_type == "map" and keys:
        props = items.get("properties") or {}
        defaults = tuple((k, props[k]["default"]) for k in keys if "default" in props.get(k, {}))
        rules[path] = ListRule(list_type="map", map_keys=keys, key_defaults=defaults)
    elif list_type == "set":
        rules[path] = ListRule(list_type="set")
    _walk_openapi(items, f"{path}[]", rules)
