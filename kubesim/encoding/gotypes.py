"""Does a body decode into the Go types of its kind? The first place it does not, in Go's words.

A real kube-apiserver decodes a built-in kind's JSON into its Go struct before anything else, so a
number where a string belongs (``data: {port: 8080}`` in a ConfigMap, ``labels: {a: 1}``), a string
where an integer belongs (``replicas: "2"``) or a scalar where a list or map belongs
(``args: "notalist"``, ``data: "notamap"``) is a 400 that names the innermost struct, the path of
JSON field names from the root, and the Go type (encoding/json's ``UnmarshalTypeError``:
``json: cannot unmarshal number into Go struct field ConfigMap.data of type string``). The types
come from the kubernetes-asyncio models (``schemas``), generated from the real OpenAPI document.

What the models do not say, kept here: which integers are ``int32`` (the models say ``int``; the
rest are ``int64``), and which strings are ``resource.Quantity``, which also takes a JSON number.
"""

from __future__ import annotations

from typing import Any

from kubesim.encoding import schemas

#: JSON names of int32 fields among the built-in kinds' commonly written fields.
INT32 = frozenset(
    {
        "replicas", "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds",
        "containerPort", "hostPort", "port", "nodePort", "parallelism", "completions",
        "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "failedJobsHistoryLimit",
        "successfulJobsHistoryLimit", "initialDelaySeconds", "timeoutSeconds", "periodSeconds",
        "successThreshold", "failureThreshold", "minReplicas", "maxReplicas", "defaultMode",
        "mode", "weight", "priority", "maxSkew", "minDomains", "availableReplicas",
        "readyReplicas", "updatedReplicas", "currentReplicas", "restartCount", "exitCode",
        "number", "partition", "maxUnavailable", "averageUtilization", "value",
    }
)  # fmt: skip
#: Fields of type resource.Quantity (a string or a number in JSON).
QUANTITY = frozenset(
    {
        "limits", "requests", "capacity", "allocatable", "hard", "used", "sizeLimit",
        "default", "defaultRequest", "max", "min", "maxLimitRequestRatio", "overhead",
        "averageValue",
    }
)  # fmt: skip


class TypeMismatch(Exception):
    """Where a body does not decode: the innermost struct, the field path, the JSON value's kind,
    and the Go type it was to become."""

    def __init__(
        self, struct: str, path: tuple[str, ...], got: str, want: str, where: str = ""
    ) -> None:
        super().__init__(f"{struct}.{'.'.join(path)}")
        self.struct, self.path, self.got, self.want = struct, path, got, want
        #: The whole path, map keys and list indices too (``.data.port``, ``.args[0]``).
        self.where = where

    def message(self) -> str:
        if not self.path:
            return f"json: cannot unmarshal {self.got} into Go value of type {self.want}"
        field = f"{self.struct}.{'.'.join(self.path)}"
        return f"json: cannot unmarshal {self.got} into Go struct field {field} of type {self.want}"


def check(value: Any, model: str) -> None:
    """Raise ``TypeMismatch`` at the first place ``value`` cannot decode into ``model``."""
    _model(value, model, (), schemas_kind(model), "")


def schemas_kind(model: str) -> str:
    return schemas._short(model)[1]


def json_kind(value: Any, *, integer: bool = False) -> str:
    """The JSON kind encoding/json names in a type error (``number``, ``string``, ``array``...)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        if integer and isinstance(value, float):
            return f"number {value:g}"
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def go_type(type_name: str, field: str = "") -> str:
    container = schemas.element(type_name)
    if container is not None:
        kind, item = container
        return ("[]" if kind == "list" else "map[string]") + go_type(item, field)
    if type_name == "str":
        return "resource.Quantity" if field in QUANTITY else "string"
    if type_name == "int":
        return "int32" if field in INT32 else "int64"
    simple = {"bool": "bool", "float": "float64", "datetime": "v1.Time", "date": "v1.Time"}
    if type_name in simple:
        return simple[type_name]
    version, kind = schemas._short(type_name)
    return f"{version}.{kind}"


def _value(
    value: Any, type_name: str, path: tuple[str, ...], struct: str, field: str, where: str
) -> None:
    if value is None or type_name == "object":
        return  # null decodes to the zero value; object is any JSON (IntOrString, RawExtension)
    container = schemas.element(type_name)
    if container is not None:
        kind, item = container
        wanted = list if kind == "list" else dict
        if not isinstance(value, wanted):
            raise TypeMismatch(struct, path, json_kind(value), go_type(type_name, field), where)
        items = enumerate(value) if isinstance(value, list) else value.items()
        for key, each in items:
            step = f"[{key}]" if isinstance(key, int) else f".{key}"
            _value(each, item, path, struct, field, where + step)
        return
    if type_name in ("str", "datetime", "date"):
        quantity = field in QUANTITY and isinstance(value, int | float)
        if not isinstance(value, str) and not (quantity and not isinstance(value, bool)):
            raise TypeMismatch(struct, path, json_kind(value), go_type(type_name, field), where)
        return
    if type_name == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            got = json_kind(value, integer=True)
            raise TypeMismatch(struct, path, got, go_type("int", field), where)
        return
    if type_name == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeMismatch(struct, path, json_kind(value), "float64", where)
        return
    if type_name == "bool":
        if not isinstance(value, bool):
            raise TypeMismatch(struct, path, json_kind(value), "bool", where)
        return
    if not schemas.fields_of(type_name):
        return  # not a model we know: nothing to check
    if not isinstance(value, dict):
        raise TypeMismatch(struct, path, json_kind(value), go_type(type_name, field), where)
    _model(value, type_name, path, schemas_kind(type_name), where)


def _model(value: Any, model: str, path: tuple[str, ...], struct: str, where: str) -> None:
    fields = schemas.fields_of(model)
    if not isinstance(value, dict):
        raise TypeMismatch(struct, path, json_kind(value), go_type(model), where)
    for key, item in value.items():
        type_name = fields.get(key)
        if type_name is not None:  # unknown fields are fieldValidation's business
            _value(item, type_name, (*path, key), struct, key, f"{where}.{key}")
