"""OpenAPI schemas of the built-in kinds, derived from the models kubernetes-asyncio generates.

Those models are generated from the real OpenAPI document, so their ``openapi_types``,
``attribute_map`` and setter docstrings carry the real field names, types and descriptions. This
module turns them into OpenAPI v3 component schemas with Kubernetes' definition names, and answers
"which fields of this object are unknown" for ``fieldValidation``. Results are cached per process:
they depend only on the installed kubernetes-asyncio.
"""

from __future__ import annotations

import copy
import functools
import inspect
import pathlib
import re
from typing import Any

from kubernetes_asyncio.client import models

Schema = dict[str, Any]

_MODEL_RE = re.compile(r"^V(\d+)((?:alpha|beta)\d+)?([A-Z]\w*)$")
_LIST_RE = re.compile(r"^list\[(.+)\]$")
_DICT_RE = re.compile(r"^dict\(str, (.+)\)$")
_PRIMITIVES: dict[str, Schema] = {
    "str": {"type": "string"},
    "int": {"type": "integer", "format": "int64"},
    "bool": {"type": "boolean"},
    "float": {"type": "number", "format": "double"},
    "datetime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "object": {"x-kubernetes-preserve-unknown-fields": True},
}
META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_META_TYPES = {
    "ObjectMeta",
    "ListMeta",
    "LabelSelector",
    "LabelSelectorRequirement",
    "OwnerReference",
    "ManagedFieldsEntry",
    "Status",
    "StatusDetails",
    "StatusCause",
    "DeleteOptions",
    "Preconditions",
    "Condition",
    "WatchEvent",
    "APIResource",
    "APIResourceList",
    "APIGroup",
    "GroupVersionForDiscovery",
    "ServerAddressByClientCIDR",
    "APIGroupList",
    "APIVersions",
}
_PACKAGES = {
    "": "io.k8s.api.core",
    "apps": "io.k8s.api.apps",
    "batch": "io.k8s.api.batch",
    "autoscaling": "io.k8s.api.autoscaling",
    "networking.k8s.io": "io.k8s.api.networking",
    "policy": "io.k8s.api.policy",
    "rbac.authorization.k8s.io": "io.k8s.api.rbac",
    "storage.k8s.io": "io.k8s.api.storage",
    "coordination.k8s.io": "io.k8s.api.coordination",
    "discovery.k8s.io": "io.k8s.api.discovery",
    "events.k8s.io": "io.k8s.api.events",
    "apiextensions.k8s.io": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions",
    "authentication.k8s.io": "io.k8s.api.authentication",
    "apiregistration.k8s.io": "io.k8s.kube-aggregator.pkg.apis.apiregistration",
}
_GROUP_PREFIX = {
    "": "Core",
    "events.k8s.io": "Events",
    "discovery.k8s.io": "Discovery",
    "rbac.authorization.k8s.io": "Rbac",
    "storage.k8s.io": "Storage",
    "apiextensions.k8s.io": "Apiextensions",
}


def model_for(group: str, version: str, kind: str) -> Any:
    """The kubernetes-asyncio model class of a built-in kind, if it ships one."""
    v = version[0].upper() + version[1:]
    for name in (f"{_GROUP_PREFIX.get(group, '')}{v}{kind}", f"{v}{kind}"):
        cls = getattr(models, name, None)
        if isinstance(cls, type) and hasattr(cls, "openapi_types"):
            return cls
    return None


def _model(name: str) -> Any:
    cls = getattr(models, name, None)
    return cls if isinstance(cls, type) and hasattr(cls, "openapi_types") else None


def _short(name: str) -> tuple[str, str]:
    """``V1beta1Foo`` -> (``v1beta1``, ``Foo``); group-prefixed names drop their prefix."""
    for prefix in set(_GROUP_PREFIX.values()) | {
        "Admissionregistration",
        "Apiregistration",
        "Authentication",
        "Flowcontrol",
        "Resource",
    }:
        if name.startswith(prefix) and _MODEL_RE.match(name[len(prefix) :]):
            name = name[len(prefix) :]
            break
    m = _MODEL_RE.match(name)
    if not m:
        return ("v1", name)
    return (f"v{m.group(1)}{m.group(2) or ''}", m.group(3))


class Namer:
    """Kubernetes definition names for model classes (``V1Container`` -> ``io.k8s.api.core.v1...``)."""

    def __init__(self, roots: list[tuple[str, str, str]]) -> None:
        self._home: dict[str, str] = {}
        for group, version, kind in roots:  # core first, so shared types land in core
            cls = model_for(group, version, kind)
            if cls is not None:
                self._claim(cls.__name__, _PACKAGES.get(group, "io.k8s.api." + group.split(".")[0]))

    def _claim(self, name: str, package: str) -> None:
        stack = [name]
        while stack:
            current = stack.pop()
            if current in self._home:
                continue
            self._home[current] = package
            cls = _model(current)
            if cls is None:
                continue
            for t in cls.openapi_types.values():
                stack.extend(n for n in re.findall(r"[A-Z]\w+", t) if _model(n) is not None)

    def name(self, model_name: str) -> str:
        version, kind = _short(model_name)
        if kind in _META_TYPES:
            return f"{META}.{kind}"
        return f"{self._home.get(model_name, 'io.k8s.api.core')}.{version}.{kind}"


def _description(cls: type, attr: str) -> str:
    prop = getattr(cls, attr, None)
    doc = getattr(getattr(prop, "fset", None), "__doc__", None) or ""
    parts = doc.split("\n\n")
    if len(parts) < 3:
        return ""
    return parts[1].replace("# noqa: E501", "").strip()


def type_schema(type_name: str, namer: Namer, refs: set[str]) -> Schema:
    if type_name in _PRIMITIVES:
        return dict(_PRIMITIVES[type_name])
    m = _LIST_RE.match(type_name)
    if m:
        return {"type": "array", "items": type_schema(m.group(1), namer, refs)}
    m = _DICT_RE.match(type_name)
    if m:
        return {"type": "object", "additionalProperties": type_schema(m.group(1), namer, refs)}
    if _model(type_name) is None:
        return {}
    refs.add(type_name)
    return {"allOf": [{"$ref": f"#/components/schemas/{namer.name(type_name)}"}]}


@functools.cache
def _model_schema_cached(name: str) -> tuple[tuple[str, str, str], ...]:
    """(json name, type name, description) for every field of a model."""
    cls = _model(name)
    assert cls is not None
    return tuple(
        (cls.attribute_map[attr], t, _description(cls, attr))
        for attr, t in cls.openapi_types.items()
    )


def model_schema(name: str, namer: Namer, refs: set[str]) -> Schema:
    props: dict[str, Schema] = {}
    for json_name, t, desc in _model_schema_cached(name):
        prop = type_schema(t, namer, refs)
        if desc:
            prop["description"] = desc
        props[json_name] = prop
    schema: Schema = {"type": "object", "properties": props}
    required = _required(name)
    if required:
        schema["required"] = required
    return schema


_REQUIRED_RE = re.compile(r"Invalid value for `(\w+)`, must not be `None`")


@functools.cache
def _required(name: str) -> list[str]:
    """Fields the model refuses to leave unset: the spec's ``required`` list, in field order."""
    cls = _model(name)
    try:
        source = pathlib.Path(inspect.getfile(cls)).read_text()
    except (OSError, TypeError):
        return []
    attrs = set(_REQUIRED_RE.findall(source))
    return [cls.attribute_map[a] for a in cls.openapi_types if a in attrs]


def components(roots: list[str], namer: Namer) -> dict[str, Schema]:
    """Schemas for ``roots`` and everything they reference, keyed by definition name, in name
    order (as Go writes a map), so a document and its hash are the same from run to run."""
    out: dict[str, Schema] = {}
    todo, seen = list(roots), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        refs: set[str] = set()
        out[namer.name(name)] = model_schema(name, namer, refs)
        todo.extend(sorted(refs - seen))
    return dict(sorted(out.items()))


@functools.cache
def fields_of(name: str) -> dict[str, str]:
    """JSON field name -> type name of a model (empty for a name that is not a model)."""
    cls = _model(name)
    if cls is None:
        return {}
    return {cls.attribute_map[a]: t for a, t in cls.openapi_types.items()}


Path = tuple[str | int, ...]


def element(type_name: str) -> tuple[str, str] | None:
    """``("list", item)`` or ``("dict", value)`` for a container type name, else None."""
    m = _LIST_RE.match(type_name)
    if m:
        return ("list", m.group(1))
    m = _DICT_RE.match(type_name)
    return ("dict", m.group(1)) if m else None


def format_path(path: Path) -> str:
    """``("spec", "containers", 0, "foo")`` -> ``spec.containers[0].foo``, as the apiserver writes."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def unknown_fields_model(value: Any, type_name: str, path: Path = ()) -> list[Path]:
    """Paths of the fields in ``value`` that the model ``type_name`` does not declare."""
    m = _LIST_RE.match(type_name)
    if m:
        if not isinstance(value, list):
            return []
        item = m.group(1)
        return [p for i, v in enumerate(value) for p in unknown_fields_model(v, item, (*path, i))]
    m = _DICT_RE.match(type_name)
    if m:
        if not isinstance(value, dict):
            return []
        item = m.group(1)
        return [p for k, v in value.items() for p in unknown_fields_model(v, item, (*path, k))]
    if type_name in _PRIMITIVES or not isinstance(value, dict):
        return []
    fields = fields_of(type_name)
    if not fields:
        return []
    out: list[Path] = []
    for key, v in value.items():
        if key not in fields:
            out.append((*path, key))
        else:
            out.extend(unknown_fields_model(v, fields[key], (*path, key)))
    return out


def unknown_fields_schema(value: Any, schema: Schema, path: Path = ()) -> list[Path]:
    """The same for a CRD's structural schema."""
    if not isinstance(schema, dict) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return []
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        return [p for i, v in enumerate(value) for p in unknown_fields_schema(v, items, (*path, i))]
    if not isinstance(value, dict):
        return []
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    if props is None:
        if isinstance(extra, dict):
            return [
                p for k, v in value.items() for p in unknown_fields_schema(v, extra, (*path, k))
            ]
        return []
    out: list[Path] = []
    for key, v in value.items():
        if key in props:
            out.extend(unknown_fields_schema(v, props[key], (*path, key)))
        elif not path and key in ("apiVersion", "kind", "metadata"):
            if key == "metadata":
                out.extend(unknown_fields_model(v, "V1ObjectMeta", (key,)))
        else:
            out.append((*path, key))
    return out


def prune(value: Any, paths: list[Path]) -> Any:
    """A copy of ``value`` without the fields at ``paths`` (what decoding drops)."""
    out = copy.deepcopy(value)
    for path in sorted(paths, key=len, reverse=True):
        node = out
        for part in path[:-1]:
            node = node[part]
        del node[path[-1]]
    return out
