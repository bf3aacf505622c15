"""Structural-schema defaults of custom resources (``default:`` in a CRD's ``openAPIV3Schema``).

kube-apiserver fills them in when it decodes a request (create, update, every patch) and when it
reads an object from storage, so an object written before its CRD gained a default is served
with it. The walk is apiextensions' ``Default``: a property with a default that is absent, or null
while not ``nullable``, gets a copy of the default, then every property (and
``additionalProperties``/``items``) is walked again, defaults included. ``apiVersion``, ``kind``
and ``metadata`` are never defaulted.
"""

from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]
Schema = dict[str, Any]
_TOP = ("apiVersion", "kind", "metadata")
# Schemas already scanned for defaults, by identity (the schema is kept so the id stays its own).
_SCANNED: dict[int, tuple[Schema, bool]] = {}
_SCANNED_MAX = 256


def has_defaults(schema: Schema) -> bool:
    """Whether ``schema`` declares any default (cached: reads call this for every object)."""
    hit = _SCANNED.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_SCANNED) >= _SCANNED_MAX:
        _SCANNED.clear()
    found = _declares_default(schema)
    _SCANNED[id(schema)] = (schema, found)
    return found


def _declares_default(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if "default" in schema:
        return True
    subs = [*(schema.get("properties") or {}).values()]
    subs += [schema.get("additionalProperties"), schema.get("items")]
    return any(_declares_default(s) for s in subs)


def apply(schema: Schema | None, obj: Obj) -> None:
    """Default ``obj`` in place."""
    if schema is not None and has_defaults(schema):
        _default(obj, schema, top=True)


def defaulted(schema: Schema | None, obj: Obj) -> Obj:
    """``obj`` with its defaults, as read from storage: the same object when nothing is missing."""
    if schema is None or not has_defaults(schema) or not _needs(obj, schema, top=True):
        return obj
    out = copy.deepcopy(obj)
    _default(out, schema, top=True)
    return out


def _missing(value: Obj, key: str, prop: Schema) -> bool:
    return key not in value or (value[key] is None and not prop.get("nullable"))


def _subschemas(value: Obj, schema: Schema, *, top: bool) -> list[tuple[Any, Schema]]:
    props: Schema = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    out = []
    for key, v in value.items():
        sub = props.get(key, extra)
        if isinstance(sub, dict) and not (top and key in _TOP):
            out.append((v, sub))
    return out


def _needs(value: Any, schema: Schema, *, top: bool = False) -> bool:
    if isinstance(value, list):
        items = schema.get("items")
        return isinstance(items, dict) and any(_needs(v, items) for v in value)
    if not isinstance(value, dict):
        return False
    for key, prop in (schema.get("properties") or {}).items():
        if top and key in _TOP:
            continue
        if isinstance(prop, dict) and "default" in prop and _missing(value, key, prop):
            return True
    return any(_needs(v, sub) for v, sub in _subschemas(value, schema, top=top))


def _default(value: Any, schema: Schema, *, top: bool = False) -> None:
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for v in value:
                _default(v, items)
        return
    if not isinstance(value, dict):
        return
    for key, prop in (schema.get("properties") or {}).items():
        if top and key in _TOP:
            continue
        if isinstance(prop, dict) and "default" in prop and _missing(value, key, prop):
            value[key] = copy.deepcopy(prop["default"])
    for v, sub in _subschemas(value, schema, top=top):
        _default(v, sub)
