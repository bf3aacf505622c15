"""Per-kind object validation: the apiserver's ``ValidateX`` rules for the mistakes users make most.

A real cluster refuses a Deployment whose selector does not match its template, a container without
an image, a label value with a slash, or a change to an immutable field; so does the simulator,
with the same 422 ``Invalid`` Status and field paths. The rules here are a subset, chosen for what
clients visibly hit (Helm upgrades that change selectors, typos in manifests); kinds and fields not
listed are accepted as the real server would accept a valid object.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from typing import Any

from common.kubesim.api import immutable
from common.kubesim.machinery import quantity
from common.kubesim.machinery.registry import ResourceType
from common.kubesim.machinery.status import bad_request, invalid

Obj = dict[str, Any]
Cause = dict[str, str]
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
# core/v1 validation's limit on ConfigMap and Secret payloads (what etcd can store).
MAX_DATA_BYTES = 1024 * 1024


def _required(field: str, detail: str = "") -> Cause:
    message = "Required value" + (f": {detail}" if detail else "")
    return {"reason": "FieldValueRequired", "message": message, "field": field}


def _bad(field: str, value: Any, detail: str) -> Cause:
    shown = json.dumps(value) if not isinstance(value, str) else f'"{value}"'
    return {
        "reason": "FieldValueInvalid",
        "message": f"Invalid value: {shown}: {detail}",
        "field": field,
    }


def _forbidden(field: str, detail: str) -> Cause:
    return {"reason": "FieldValueForbidden", "message": f"Forbidden: {detail}", "field": field}


def _labels(labels: Any, field: str) -> list[Cause]:
    causes: list[Cause] = []
    if not isinstance(labels, dict):
        return causes
    for key, value in labels.items():
        prefix, _, name = str(key).rpartition("/")
        if (prefix and (len(prefix) > 253 or not _SUBDOMAIN.match(prefix))) or not (
            len(name) <= 63 and _LABEL_NAME.match(name)
        ):
            causes.append(
                _bad(
                    field,
                    key,
                    "name part must consist of alphanumeric characters, "
                    "'-', '_' or '.', and must start and end with an alphanumeric "
                    "character",
                )
            )
        if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.match(value):
            causes.append(
                _bad(
                    field,
                    value,
                    "a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an "
                    "alphanumeric character",
                )
            )
    return causes


_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")


def _resources(resources: Any, field: str) -> list[Cause]:
    """Quantities must parse (400, as decoding fails) and requests may not exceed limits."""
    if not isinstance(resources, dict):
        return []
    limits = resources.get("limits") or {}
    causes: list[Cause] = []
    for kind in ("limits", "requests"):
        for name, value in (resources.get(kind) or {}).items():
            if not _QUANTITY.match(str(value)):
                raise bad_request(
                    f"quantities must match the regular expression '{_QUANTITY.pattern}'"
                )
            if (
                kind == "requests"
                and name in limits
                and quantity.parse(value) > quantity.parse(limits[name])
            ):
                causes.append(
                    _bad(
                        f"{field}.requests",
                        str(value),
                        f"must be less than or equal to {name} limit of {limits[name]}",
                    )
                )
    return causes


# apimachinery's ValidateObjectMeta limit on all annotations together.
MAX_ANNOTATION_BYTES = 256 * 1024


def _metadata(meta: Obj) -> list[Cause]:
    """Annotation size (the classic over-long last-applied-configuration) and owner references."""
    causes: list[Cause] = []
    annotations = meta.get("annotations") or {}
    if isinstance(annotations, dict):
        size = sum(len(str(k)) + len(str(v)) for k, v in annotations.items())
        if size > MAX_ANNOTATION_BYTES:
            causes.append(
                {
                    "reason": "FieldValueTooLong",
                    "field": "metadata.annotations",
                    "message": f"Too long: must have at most {MAX_ANNOTATION_BYTES} bytes",
                }
            )
    for i, ref in enumerate(meta.get("ownerReferences") or []):
        for key in ("apiVersion", "kind", "name", "uid"):
            if not isinstance(ref, dict) or not ref.get(key):
                causes.append(_required(f"metadata.ownerReferences[{i}].{key}"))
    return causes


def _pod_spec(spec: Any, field: str, *, restart: tuple[str, ...] = ()) -> list[Cause]:
    if not isinstance(spec, dict):
        return [_required(field)]
    causes: list[Cause] = []
    containers = spec.get("containers")
    if not containers:
        causes.append(_required(f"{field}.containers"))
    seen: set[str] = set()
    for kind in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(kind) or []):
            path = f"{field}.{kind}[{i}]"
            name = c.get("name") if isinstance(c, dict) else None
            if not name:
                causes.append(_required(f"{path}.name"))
            elif not _DNS_LABEL.match(str(name)) or len(str(name)) > 63:
                causes.append(
                    _bad(
                        f"{path}.name",
                        name,
                        "a lowercase RFC 1123 label must "
                        "consist of lower case alphanumeric characters or '-'",
                    )
                )
            elif name in seen:
                causes.append(
                    {
                        "reason": "FieldValueDuplicate",
                        "message": f'Duplicate value: "{name}"',
                        "field": f"{path}.name",
                    }
                )
            seen.add(str(name))
            if isinstance(c, dict) and not c.get("image"):
                causes.append(_required(f"{path}.image"))
            if isinstance(c, dict):
                causes += _resources(c.get("resources"), f"{path}.resources")
            for j, port in enumerate((c or {}).get("ports") or []):
                number = port.get("containerPort") if isinstance(port, dict) else None
                if not isinstance(number, int) or not 0 < number < 65536:
                    causes.append(
                        _bad(
                            f"{path}.ports[{j}].containerPort",
                            number,
                            "must be between 1 and 65535, inclusive",
                        )
                    )
    policy = spec.get("restartPolicy")
    if restart and policy not in restart:
        allowed = ", ".join(f'"{r}"' for r in restart)
        causes.append(
            {
                "reason": "FieldValueNotSupported",
                "message": f'Unsupported value: "{policy}": supported values: {allowed}',
                "field": f"{field}.restartPolicy",
            }
        )
    return causes


def _selector_matches(selector: Any, labels: Any) -> bool:
    if not isinstance(selector, dict):
        return False
    labels = labels if isinstance(labels, dict) else {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        op, key, values = expr.get("operator"), expr.get("key"), expr.get("values") or []
        if (
            (op == "In" and labels.get(key) not in values)
            or (op == "NotIn" and labels.get(key) in values)
            or (op == "Exists" and key not in labels)
            or (op == "DoesNotExist" and key in labels)
        ):
            return False
    return True


def _workload(obj: Obj, *, restart: tuple[str, ...] = ("Always",)) -> list[Cause]:
    spec = obj.get("spec") or {}
    causes: list[Cause] = []
    selector = spec.get("selector")
    template = spec.get("template") or {}
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        causes.append(_required("spec.selector"))
    elif not _selector_matches(selector, (template.get("metadata") or {}).get("labels")):
        causes.append(
            _bad(
                "spec.template.metadata.labels",
                (template.get("metadata") or {}).get("labels") or {},
                "`selector` does not match template `labels`",
            )
        )
    replicas = spec.get("replicas", 0)
    if isinstance(replicas, int) and replicas < 0:
        causes.append(_bad("spec.replicas", replicas, "must be greater than or equal to 0"))
    causes += _labels(
        (template.get("metadata") or {}).get("labels"), "spec.template.metadata.labels"
    )
    causes += _pod_spec(template.get("spec"), "spec.template.spec", restart=restart)
    return causes


def _daemonset(obj: Obj) -> list[Cause]:
    return _workload(obj)


def _job(obj: Obj) -> list[Cause]:
    template = (obj.get("spec") or {}).get("template") or {}
    return _pod_spec(template.get("spec"), "spec.template.spec", restart=("OnFailure", "Never"))


def _cronjob(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") or {}
    causes = [] if spec.get("schedule") else [_required("spec.schedule")]
    template = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    return causes + _pod_spec(
        template.get("spec"), "spec.jobTemplate.spec.template.spec", restart=("OnFailure", "Never")
    )


def _pod(obj: Obj) -> list[Cause]:
    return _pod_spec(obj.get("spec"), "spec", restart=("Always", "OnFailure", "Never"))


def _service(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") or {}
    kind = spec.get("type", "ClusterIP")
    causes: list[Cause] = []
    if kind not in ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"):
        causes.append(
            {
                "reason": "FieldValueNotSupported",
                "field": "spec.type",
                "message": f'Unsupported value: "{kind}": supported values: "ClusterIP", '
                '"ExternalName", "LoadBalancer", "NodePort"',
            }
        )
    ports = spec.get("ports") or []
    if not ports and kind != "ExternalName" and spec.get("clusterIP") != "None":
        causes.append(_required("spec.ports"))
    for i, port in enumerate(ports):
        number = port.get("port") if isinstance(port, dict) else None
        if not isinstance(number, int) or not 0 < number < 65536:
            causes.append(
                _bad(f"spec.ports[{i}].port", number, "must be between 1 and 65535, inclusive")
            )
        if len(ports) > 1 and isinstance(port, dict) and not port.get("name"):
            causes.append(_required(f"spec.ports[{i}].name"))
    return causes


def _config_map(obj: Obj) -> list[Cause]:
    """Keys must be config keys; the payload must fit etcd (ValidateConfigMap/ValidateSecret)."""
    causes = []
    size = sum(
        len(str(k)) + len(str(v))
        for f in ("data", "binaryData")
        for k, v in (obj.get(f) or {}).items()
    )
    if obj.get("kind") == "Secret":  # data is base64 on the wire; the limit counts bytes
        size = sum(len(str(k)) + len(str(v)) * 3 // 4 for k, v in (obj.get("data") or {}).items())
    if size > MAX_DATA_BYTES:
        field = "data"
        causes.append(
            {
                "reason": "FieldValueTooLong",
                "field": field,
                "message": f"Too long: must have at most {MAX_DATA_BYTES} bytes",
            }
        )
    for field in ("data", "binaryData"):
        for key in obj.get(field) or {}:
            if not _CONFIG_KEY.match(str(key)) or len(str(key)) > 253:
                causes.append(
                    _bad(
                        f"{field}[{key}]",
                        key,
                        "a valid config key must consist of "
                        "alphanumeric characters, '-', '_' or '.'",
                    )
                )
    return causes


_RULES: dict[tuple[str, str], Callable[[Obj], list[Cause]]] = {
    ("", "pods"): _pod,
    ("", "services"): _service,
    ("", "configmaps"): _config_map,
    ("", "secrets"): _config_map,
    ("apps", "deployments"): _workload,
    ("apps", "replicasets"): _workload,
    ("apps", "statefulsets"): _workload,
    ("apps", "daemonsets"): _daemonset,
    ("batch", "jobs"): _job,
    ("batch", "cronjobs"): _cronjob,
}


def _base64(rt: ResourceType, obj: Obj) -> None:
    """Secret data is []byte in Go: JSON that is not base64 fails to decode (400, not 422)."""
    for key, value in (obj.get("data") or {}).items():
        try:
            base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            raise bad_request(
                f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                f"illegal base64 data in data[{key}]"
            ) from None


def validate(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
    """Raise 422 Invalid when ``obj`` (being created, or replacing ``old``) breaks a rule."""
    if rt.group_resource == ("", "secrets"):
        _base64(rt, obj)
    meta = obj.get("metadata") or {}
    causes = _labels(meta.get("labels"), "metadata.labels") + _metadata(meta)
    rule = _RULES.get(rt.group_resource)
    if rule is not None:
        causes += rule(obj)
    if old is not None:
        causes += immutable.changes(rt, old, obj)
    if causes:
        raise invalid(rt.group, rt.kind, str(meta.get("name", "")), causes)
