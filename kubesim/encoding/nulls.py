"""JSON nulls in a written object, as decoding into the API types leaves them.

kube-apiserver decodes every body (POST, PUT, the result of a JSON or merge patch, an apply
configuration) before it stores anything, so nulls never reach etcd verbatim. A built-in kind is
decoded into its Go struct: a null field takes its zero value and is omitted when encoded again;
a null value in a map of strings becomes ``""`` (``"0"`` in a map of quantities); an empty map is
omitted (every map field is ``omitempty``); a null list item
becomes its zero value; a ``RawExtension`` (``ControllerRevision.data``, a CRD's defaults and
examples) keeps its JSON as sent. A custom resource loses the nulls of the fields its structural
schema does not declare ``nullable``, unless the field has a default, which replaces the null
afterwards (``api.crdefaults``). This is what lets ``kubectl rollout undo`` (a JSON patch carrying
``creationTimestamp: null``) find the old ReplicaSet's template equal to the Deployment's.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesim.encoding import schemas

Schema = dict[str, Any]
# Maps whose values are resource.Quantity: a null quantity decodes to zero.
_QUANTITY_MAPS = frozenset(
    {
        "limits",
        "requests",
        "capacity",
        "allocatable",
        "hard",
        "used",
        "overhead",
        "default",
        "defaultRequest",
        "max",
        "min",
        "maxLimitRequestRatio",
    }
)
_TOP = ("apiVersion", "kind", "metadata")


def has_null(value: Any) -> bool:
    """Whether decoding changes ``value``: a null, or an empty map (every map of the API types is
    ``omitempty``, so an empty one is not encoded again)."""
    if value is None:
        return True
    if isinstance(value, dict):
        return not value or any(has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(has_null(v) for v in value)
    return False


def decoded_model(value: Any, type_name: str | None) -> Any:
    """``value`` as decoding into the model ``type_name`` (a kubernetes-asyncio name) leaves it;
    ``None``: a kind without a model, whose nulls are all dropped. Unchanged when null-free."""
    if not has_null(value):
        return value
    value = copy.deepcopy(value)
    if type_name is None:
        _drop_all(value)
    else:
        _model(value, type_name, "")
    return value


def decoded_custom(value: Any, schema: Schema | None) -> Any:
    """The same for a custom resource with the structural schema ``schema`` (None: no schema, the
    object is kept as sent, as ``x-kubernetes-preserve-unknown-fields`` keeps it)."""
    if not isinstance(value, dict) or not has_null(value):
        return value
    value = copy.deepcopy(value)
    if value.get("metadata") is None:
        value.pop("metadata", None)
    else:
        _model(value["metadata"], "V1ObjectMeta", "metadata")
    for key in ("apiVersion", "kind"):
        if key in value and value[key] is None:
            del value[key]
    if schema is not None:
        props = schema.get("properties") or {}
        _custom({k: v for k, v in value.items() if k not in _TOP}, schema, value, props)
    return value


def _zero(type_name: str, field: str) -> Any:
    """What a null element of a list or map decodes to; ``...`` when it has no JSON form."""
    if type_name == "str":
        return "0" if field in _QUANTITY_MAPS else ""
    if type_name in ("int", "float"):
        return 0
    if type_name == "bool":
        return False
    if schemas.fields_of(type_name):
        return {}
    return ...


def _model(value: Any, type_name: str, field: str) -> None:
    if type_name == "object":  # RawExtension and JSON: kept as sent
        return
    container = schemas.element(type_name)
    if container is not None:
        kind, item = container
        if kind == "list" and isinstance(value, list):
            value[:] = [e for e in (_element(v, item, field) for v in value) if e is not ...]
        elif kind == "dict" and isinstance(value, dict):
            for key, v in list(value.items()):
                e = _element(v, item, field)
                if e is ...:
                    del value[key]
                else:
                    value[key] = e
        return
    if not isinstance(value, dict):
        return
    fields = schemas.fields_of(type_name)
    if not fields:
        _drop_all(value)
        return
    for key in list(value):
        if value[key] is None:
            del value[key]
        elif key in fields:
            if value[key] == {} and (schemas.element(fields[key]) or ("",))[0] == "dict":
                del value[key]  # an empty map: omitempty
                continue
            _model(value[key], fields[key], key)


def _element(value: Any, type_name: str, field: str) -> Any:
    if value is None:
        return _zero(type_name, field)
    _model(value, type_name, field)
    return value


def _drop_all(value: Any) -> None:
    if isinstance(value, dict):
        for key in list(value):
            if value[key] is None:
                del value[key]
            else:
                _drop_all(value[key])
    elif isinstance(value, list):
        value[:] = [v for v in value if v is not None]
        for v in value:
            _drop_all(v)


def _custom(value: Any, schema: Schema, target: Any, props: Schema) -> None:
    """PruneNonNullableNullsWithoutDefaults: walk ``value`` along ``schema``, deleting from
    ``target`` (the same node, or the object when ``value`` is its top-level view)."""
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for v in value:
                _custom(v, items, v, items.get("properties") or {})
        return
    if not isinstance(value, dict):
        return
    extra = schema.get("additionalProperties")
    for key, v in list(value.items()):
        sub = props.get(key, extra)
        if not isinstance(sub, dict):
            continue
        if v is None:
            if not sub.get("nullable") and "default" not in sub:
                del target[key]
        else:
            _custom(v, sub, v, sub.get("properties") or {})
