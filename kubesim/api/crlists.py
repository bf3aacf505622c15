"""``x-kubernetes-list-type`` rules of custom resources: no duplicate items in a ``set``, no two
items of a ``map`` with the same keys, every key present -- what the apiextensions-apiserver's
listtype validation reports, on every write, with the real field paths.
"""

from __future__ import annotations

import json
from typing import Any

Obj = dict[str, Any]
Cause = dict[str, str]


def _go(value: Any) -> str:
    """An item as ``field.Duplicate`` prints an ``interface{}`` (JSON-ish ``%#v`` for maps)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        body = ", ".join(f"{json.dumps(k)}:{_go(v)}" for k, v in sorted(value.items()))
        return f"map[string]interface {{}}{{{body}}}"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _duplicate(path: str, shown: str) -> Cause:
    return {"reason": "FieldValueDuplicate", "message": f"Duplicate value: {shown}", "field": path}


def _list(schema: Obj, items: list[Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    kind = schema.get("x-kubernetes-list-type")
    if kind == "set":
        seen: set[str] = set()
        for i, item in enumerate(items):
            key = json.dumps(item, sort_keys=True)
            if key in seen:
                causes.append(_duplicate(f"{path}[{i}]", _go(item)))
            seen.add(key)
    elif kind == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen = set()
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            missing = [k for k in keys if k not in item]
            for k in missing:
                causes.append(
                    {
                        "reason": "FieldValueRequired",
                        "message": "Required value",
                        "field": f"{path}[{i}].{k}",
                    }
                )
            if missing:
                continue
            values = {k: item[k] for k in keys}
            key = json.dumps(values, sort_keys=True)
            if key in seen:
                causes.append(_duplicate(f"{path}[{i}]", _go(values)))
            seen.add(key)
    return causes


def causes(schema: Any, value: Any, path: str = "") -> list[Cause]:
    """Every list-type violation in ``value`` under ``schema`` (an ``openAPIV3Schema`` node)."""
    if not isinstance(schema, dict):
        return []
    found: list[Cause] = []
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, child in value.items():
            sub = props.get(key, extra if isinstance(extra, dict) else None)
            found += causes(sub, child, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        found += _list(schema, value, path)
        for i, item in enumerate(value):
            found += causes(schema.get("items"), item, f"{path}[{i}]")
    return found
