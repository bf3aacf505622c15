"""Validation on every write: object metadata, ConfigMap/Secret payloads, then the per-kind rules.

A real cluster refuses a Deployment whose selector does not match its template, a container without
an image, a label value with a slash, or a change to an immutable field; so does the simulator,
with the same 422 ``Invalid`` Status, field paths and wording. The per-kind rules live in
``validation``; this module runs them in the apiserver's order (decode, metadata, kind, update).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from kubesim.api import immutable, validation
from kubesim.api.validation import field
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.status import bad_request, invalid

Obj = dict[str, Any]
Cause = field.Cause
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_CONFIG_KEY_MSG = field.regex_error(
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    "[-._a-zA-Z0-9]+",
    "key.name",
    "KEY_NAME",
    "key-name",
)
# core/v1 validation's limit on ConfigMap and Secret payloads (what etcd can store).
MAX_DATA_BYTES = 1024 * 1024


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
                causes.append(field.required(f"metadata.ownerReferences[{i}].{key}"))
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
        causes.append(
            {
                "reason": "FieldValueTooLong",
                "field": "data",
                "message": f"Too long: must have at most {MAX_DATA_BYTES} bytes",
            }
        )
    for where in ("data", "binaryData"):
        for key in obj.get(where) or {}:
            if len(str(key)) > 253:
                causes.append(field.invalid(f"{where}[{key}]", key, field.max_len(253)))
            if not _CONFIG_KEY.match(str(key)):
                causes.append(field.invalid(f"{where}[{key}]", key, _CONFIG_KEY_MSG))
    return causes


def _new_finalizers(old: Obj, meta: Obj) -> list[Cause]:
    """``ValidateNoNewFinalizers``: an object being deleted may only lose finalizers."""
    if not old["metadata"].get("deletionTimestamp"):
        return []
    before = set(old["metadata"].get("finalizers") or [])
    extra = sorted(set(meta.get("finalizers") or []) - before)
    if not extra:
        return []
    shown = "[]string{" + ", ".join(json.dumps(f) for f in extra) + "}"
    return [
        field.forbidden(
            "metadata.finalizers",
            "no new finalizers can be added if the object is being deleted, found new "
            f"finalizers {shown}",
        )
    ]


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
    """Raise 400 when ``obj`` would not decode, 422 Invalid when it (being created, or replacing
    ``old``) breaks a rule."""
    if rt.group_resource == ("", "secrets"):
        _base64(rt, obj)
    why = validation.decode_error(obj) if rt.crd is None else None
    if why is not None:
        raise bad_request(
            f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {why}'
        )
    meta = obj.get("metadata") or {}
    causes = field.labels(meta.get("labels"), "metadata.labels")
    causes += field.annotation_keys(meta.get("annotations"), "metadata.annotations")
    causes += _metadata(meta)
    if rt.group_resource in (("", "configmaps"), ("", "secrets")):
        causes += _config_map(obj)
    causes += validation.kind_causes(rt.group_resource, obj, old)
    if old is not None:
        causes += _new_finalizers(old, meta)
        causes += immutable.changes(rt, old, obj)
    if causes:
        raise invalid(rt.group, rt.kind, str(meta.get("name", "")), causes)
