"""Custom resources validated against their CRD's ``openAPIV3Schema``, as kube-apiserver does.

Types, required fields, enums, bounds, lengths and patterns are checked with ``jsonschema`` after
translating the Kubernetes extensions (``x-kubernetes-int-or-string``, ``nullable``); failures are
a 422 Invalid naming each field the way the apiserver words it. CEL rules
(``x-kubernetes-validations``) are not evaluated: the simulator cannot run CEL.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import jsonschema

from kubesim.api import crlists
from kubesim.machinery.status import invalid

if TYPE_CHECKING:
    from kubesim.machinery.registry import ResourceType

Obj = dict[str, Any]
_TOP = ("apiVersion", "kind", "metadata")


def _translate(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_translate(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _translate(v) for k, v in schema.items() if k != "x-kubernetes-validations"}
    if out.pop("x-kubernetes-int-or-string", False):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if out.pop("nullable", False) and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _field(path: Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _json_type(value: Any) -> str:
    """The JSON Schema type name of a decoded value (what the real server prints, not Python's)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _cause(error: jsonschema.ValidationError) -> dict[str, str]:
    field = _field(error.absolute_path)
    value, rule = error.instance, str(error.validator)
    limit: Any = error.validator_value
    shown = json.dumps(value) if not isinstance(value, str) else f'"{value}"'
    if rule == "required":
        missing = str(error.message).split("'")[1]
        return {
            "reason": "FieldValueRequired",
            "message": "Required value",
            "field": f"{field}.{missing}" if field else missing,
        }
    if rule == "enum":
        allowed = ", ".join(json.dumps(v) for v in limit)
        return {
            "reason": "FieldValueNotSupported",
            "field": field,
            "message": f"Unsupported value: {shown}: supported values: {allowed}",
        }
    if rule == "type":
        # kube-openapi reports the JSON type found, and apiextensions shows it as the bad value.
        found = _json_type(value)
        wanted = [t for t in (limit if isinstance(limit, list) else [limit]) if t != "null"]
        return {
            "reason": "FieldValueInvalid",
            "field": field,
            "message": f'Invalid value: "{found}": {field} in body must be of type '
            f'{",".join(wanted)}: "{found}"',
        }
    wording = {
        "minimum": f"should be greater than or equal to {limit}",
        "maximum": f"should be less than or equal to {limit}",
        "minLength": f"should be at least {limit} chars long",
        "maxLength": f"may not be more than {limit} bytes long",
        "pattern": f"should match '{limit}'",
        "minItems": f"should have at least {limit} items",
        "maxItems": f"must have at most {limit} items",
    }.get(rule, str(error.message))
    return {
        "reason": "FieldValueInvalid",
        "field": field,
        "message": f"Invalid value: {shown}: {field} in body {wording}",
    }


def validate(rt: ResourceType, obj: Obj, schema: Obj | None) -> None:
    if not schema:
        return
    body = {k: v for k, v in obj.items() if k not in _TOP}
    props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _TOP}
    required = [r for r in schema.get("required") or [] if r not in _TOP]
    root = _translate({**schema, "properties": props, "required": required})
    if not required:
        del root["required"]
    errors = sorted(
        jsonschema.Draft7Validator(root).iter_errors(body),
        key=lambda e: [str(p) for p in e.absolute_path],
    )
    found = [_cause(e) for e in errors] + crlists.causes(root, body)
    if found:
        raise invalid(rt.group, rt.kind, str(obj["metadata"].get("name", "")), found)
