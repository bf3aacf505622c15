"""Kubernetes protobuf bodies of any built-in kind, decoded with the real field tables.

``protobuf_schemas.json`` holds the field tables of the k8s.io/api and apimachinery messages, taken
by ``scripts/gen_kubesim_protobuf.py`` from the protobuf descriptors embedded in kubectl 1.32. A
body is decoded into the JSON a JSON client would have sent: Go's ``omitempty`` is approximated by
dropping zero scalars, except for the optional (pointer) fields where zero is meaningful
(``replicas: 0``, ``automountServiceAccountToken: false``...). A field number the tables do not
know is refused (``ProtobufError``, answered 415), never skipped.
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
import struct
from importlib import resources
from typing import Any

from kubesim.encoding.protobuf import (
    BYTES,
    ProtobufError,
    as_bytes,
    fields,
    int64,
    read_varint,
    timestamp,
)

Obj = dict[str, Any]
META = "k8s.io.apimachinery.pkg.apis.meta.v1"
_PACKAGES = {
    "": "core",
    "apps": "apps",
    "batch": "batch",
    "autoscaling": "autoscaling",
    "networking.k8s.io": "networking",
    "policy": "policy",
    "rbac.authorization.k8s.io": "rbac",
    "storage.k8s.io": "storage",
    "coordination.k8s.io": "coordination",
    "scheduling.k8s.io": "scheduling",
    "discovery.k8s.io": "discovery",
    "events.k8s.io": "events",
    "authentication.k8s.io": "authentication",
    "authorization.k8s.io": "authorization",
}
# Optional (pointer) scalars whose zero value means something and must survive decoding.
_POINTER_INTS = frozenset(
    {
        "replicas",
        "terminationGracePeriodSeconds",
        "activeDeadlineSeconds",
        "backoffLimit",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
        "completions",
        "parallelism",
        "ttlSecondsAfterFinished",
        "startingDeadlineSeconds",
        "successfulJobsHistoryLimit",
        "failedJobsHistoryLimit",
        "revisionHistoryLimit",
        "progressDeadlineSeconds",
        "runAsUser",
        "runAsGroup",
        "fsGroup",
        "priority",
        "defaultMode",
        "mode",
        "expirationSeconds",
        "minReplicas",
        "partition",
        "deletionGracePeriodSeconds",
        "gracePeriodSeconds",
        "tolerationSeconds",
        "stabilizationWindowSeconds",
    }
)
_POINTER_BOOLS = frozenset(
    {
        "automountServiceAccountToken",
        "enableServiceLinks",
        "hostUsers",
        "setHostnameAsFQDN",
        "shareProcessNamespace",
        "privileged",
        "allowPrivilegeEscalation",
        "readOnlyRootFilesystem",
        "runAsNonRoot",
        "optional",
        "suspend",
        "manualSelector",
        "immutable",
        "controller",
        "blockOwnerDeletion",
        "allocateLoadBalancerNodePorts",
        "ready",
        "serving",
        "terminating",
        "allowVolumeExpansion",
        "orphanDependents",
    }
)
_POINTER_STRINGS = frozenset({"storageClassName", "volumeAttributesClassName"})
# Go structs embedded with ``json:",inline"``: a field in protobuf, flattened into the parent in JSON.
INLINE = frozenset(
    {
        "volumeSource",
        "persistentVolumeSource",
        "handler",
        "ephemeralContainerCommon",
        "ingressRuleValue",
        "localObjectReference",  # the name of a key selector, an env or volume source
    }
)
VARINTS = (3, 4, 5, 8, 13)  # int64 uint64 int32 bool uint32


@functools.cache
def messages() -> dict[str, dict[str, Any]]:
    text = resources.files("kubesim.encoding").joinpath("protobuf_schemas.json").read_text()
    messages: dict[str, dict[str, Any]] = json.loads(text)["messages"]
    return messages


def message_for(api_version: str, kind: str) -> str | None:
    group, _, version = api_version.rpartition("/")
    package = _PACKAGES.get(group)
    if package is None:
        return None
    name = f"k8s.io.api.{package}.{version}.{kind}"
    return name if name in messages() else None


def decode_object(api_version: str, kind: str, raw: bytes) -> Obj:
    name = message_for(api_version, kind)
    if name is None:
        raise ProtobufError(f"cannot decode {api_version}/{kind} from protobuf")
    return {"kind": kind, "apiVersion": api_version, **decode_message(name, raw)}


def decode_message(name: str, data: bytes) -> Obj:
    table = messages()[name]
    out: Obj = {}
    for number, wire, value in fields(data):
        entry = table.get(str(number))
        if entry is None:
            raise ProtobufError(f"{name} has no field {number} in Kubernetes 1.32")
        field, kind, label, type_name = entry
        items = (
            _packed(kind, value) if label == 3 and wire == BYTES and kind in VARINTS else [value]
        )
        for item in items:
            decoded = _value(kind, type_name, item)
            if kind == 11 and field in INLINE and isinstance(decoded, dict):
                out.update(decoded)
            elif label != 3:
                out[field] = decoded
            elif messages().get(type_name, {}).get("map"):
                key, val = decoded
                out.setdefault(field, {})[key] = val
            else:
                out.setdefault(field, []).append(decoded)
    return {k: v for k, v in out.items() if not _omitted(k, v)}


def _omitted(field: str, value: Any) -> bool:
    if value is None:
        return True
    if value is False:
        return field not in _POINTER_BOOLS
    if value == "" and isinstance(value, str):
        return field not in _POINTER_STRINGS
    if isinstance(value, int) and not isinstance(value, bool) and value == 0:
        return field not in _POINTER_INTS
    return False


def _packed(kind: int, value: int | bytes) -> list[int | bytes]:
    data = value if isinstance(value, bytes) else b""
    out: list[int | bytes] = []
    pos = 0
    while pos < len(data):  # a run of varints
        result, pos = read_varint(data, pos)
        out.append(result)
    return out


def _value(kind: int, type_name: str, value: int | bytes) -> Any:
    if kind == 11:
        if not isinstance(value, bytes):
            raise ProtobufError(f"expected an embedded {type_name}")
        special = _SPECIAL.get(type_name)
        if special is not None:
            return special(value)
        if messages()[type_name].get("map"):
            return _map_entry(type_name, value)
        return decode_message(type_name, value)
    if kind == 9:
        return as_bytes(value).decode("utf-8", errors="replace")
    if kind == 12:
        return base64.b64encode(as_bytes(value)).decode()
    if kind in (1, 2):
        raw = as_bytes(value)
        return struct.unpack("<d" if kind == 1 else "<f", raw)[0]
    if kind in VARINTS:
        if not isinstance(value, int):
            raise ProtobufError("expected a varint")
        if kind == 8:
            return bool(value)
        return int64(value)
    raise ProtobufError(f"unsupported protobuf field type {kind}")


def _map_entry(type_name: str, data: bytes) -> tuple[str, Any]:
    """A map entry: key 1, value 2; a missing value is its type's zero (Go decodes it so)."""
    table = messages()[type_name]
    key: Any = ""
    _, kind, _, value_type = table["2"]
    value: Any = {} if kind == 11 else ("" if kind in (9, 12) else 0)
    for number, _wire, raw in fields(data):
        if number == 1:
            key = _value(table["1"][1], table["1"][3], raw)
        elif number == 2:
            value = _value(kind, value_type, raw)
    return str(key), value


def _micro_time(value: bytes) -> str | None:
    parts = {n: v for n, _w, v in fields(value)}
    if not value:
        return None
    moment = datetime.datetime.fromtimestamp(int(parts.get(1, 0)), datetime.UTC)
    micros = int(parts.get(2, 0)) // 1000
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{micros:06d}Z"


def _duration(value: bytes) -> str:
    """metav1.Duration: nanoseconds, written as Go's time.Duration.String()."""
    nanos = int({n: v for n, _w, v in fields(value)}.get(1, 0))
    if nanos == 0:
        return "0s"
    seconds, rest = divmod(nanos, 1_000_000_000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    frac = f"{seconds}.{rest:09d}".rstrip("0").rstrip(".") if rest else str(seconds)
    if hours:
        return f"{hours}h{minutes}m{frac}s"
    if minutes:
        return f"{minutes}m{frac}s"
    return f"{frac}s"


def _int_or_string(value: bytes) -> int | str:
    parts = {n: v for n, _w, v in fields(value)}
    if parts.get(1, 0) == 1:
        return as_bytes(parts.get(3, b"")).decode()
    return int64(int(parts.get(2, 0)))


def _quantity(value: bytes) -> str:
    return as_bytes({n: v for n, _w, v in fields(value)}.get(1, b"")).decode()


def _raw_json(value: bytes) -> Any:
    raw = as_bytes({n: v for n, _w, v in fields(value)}.get(1, b""))
    try:
        return json.loads(raw) if raw else {}
    except ValueError as exc:
        raise ProtobufError(f"embedded raw object is not JSON: {exc}") from exc


_SPECIAL = {
    f"{META}.Time": timestamp,
    f"{META}.MicroTime": _micro_time,
    f"{META}.Duration": _duration,
    f"{META}.FieldsV1": _raw_json,
    "k8s.io.apimachinery.pkg.runtime.RawExtension": _raw_json,
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": _int_or_string,
    "k8s.io.apimachinery.pkg.api.resource.Quantity": _quantity,
}
