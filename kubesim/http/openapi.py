"""``/openapi/v3``: the index and one document per served group/version.

kubectl and Helm read these to decide whether they may delegate validation to the server: each
write operation must carry the ``fieldValidation`` query parameter and
``x-kubernetes-group-version-kind``, or the clients fall back to OpenAPI v2 protobuf and fail.
Component schemas are the real ones (see ``schemas``; CRDs bring their own ``openAPIV3Schema``),
which also makes ``kubectl explain`` work; the built-in kinds' list markers (``listmarkers``) let
kubectl's client-side apply delete list items. Documents are cached until the registry changes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kubesim.api import crds
from kubesim.encoding import bodies, listmarkers, schemas
from kubesim.http import openapiv2
from kubesim.machinery.registry import Registry, ResourceType

Doc = dict[str, Any]
_QUERY = {"in": "query", "schema": {"type": "string", "uniqueItems": True}}
_PARAMS = {
    "dryRun": "When present, indicates that modifications should not be persisted.",
    "fieldManager": "fieldManager is a name associated with the actor or entity that is making "
    "these changes.",
    "fieldValidation": "fieldValidation instructs the server on how to handle objects in the "
    "request containing unknown or duplicate fields. Valid values are: Ignore, "
    "Warn (the default), Strict.",
    "force": 'Force is going to "force" Apply requests.',
    "pretty": "If 'true', then the output is pretty printed.",
}


def _param(name: str, kind: str = "string") -> Doc:
    schema = {"type": kind, "uniqueItems": True}
    return {"name": name, "description": _PARAMS[name], **_QUERY, "schema": schema}


def gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


class OpenAPI:
    """Builds and caches the v3 documents for one registry."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._docs: dict[str, tuple[bytes, str]] = {}
        self._namer: schemas.Namer | None = None
        self._v2: tuple[bytes, bytes, str] | None = None
        registry.on_change(self._reset)

    def _reset(self) -> None:
        self._docs.clear()
        self._v2 = None

    def v2(self) -> tuple[bytes, bytes, str]:
        """(JSON body, protobuf body, hash) of ``/openapi/v2``, rebuilt (and cached) with the v3
        documents."""
        if self._v2 is None:
            keys = [gv_path(g, v) for g, v in self._registry.group_versions()]
            doc = openapiv2.build([json.loads(self.document(k)[0]) for k in keys])
            body = json.dumps(doc, separators=(",", ":")).encode()
            digest = hashlib.sha512(body).hexdigest().upper()
            self._v2 = (body, openapiv2.to_protobuf(doc), digest)
        return self._v2

    def namer(self) -> schemas.Namer:
        if self._namer is None:
            self._namer = schemas.Namer(
                [
                    (rt.group, rt.version, rt.kind)
                    for rt in sorted(self._registry, key=lambda r: r.group != "")
                ]
            )
        return self._namer

    def index(self) -> Doc:
        paths = {}
        for group, version in self._registry.group_versions():
            key = gv_path(group, version)
            _, digest = self.document(key)
            paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
        return {"paths": paths}

    def document(self, key: str) -> tuple[bytes, str]:
        """(JSON body, hash) for ``api/v1`` or ``apis/{group}/{version}``; KeyError if unserved."""
        if key not in self._docs:
            parts = key.split("/")
            if parts[0] == "api" and len(parts) == 2:
                group, version = "", parts[1]
            elif parts[0] == "apis" and len(parts) == 3:
                group, version = parts[1], parts[2]
            else:
                raise KeyError(key)
            types = self._registry.in_group_version(group, version)
            if not types:
                raise KeyError(key)
            body = json.dumps(self._build(group, version, types), separators=(",", ":")).encode()
            self._docs[key] = (body, hashlib.sha512(body).hexdigest().upper())
        return self._docs[key]

    def _build(self, group: str, version: str, types: list[ResourceType]) -> Doc:
        namer = self.namer()
        roots: list[str] = ["V1Status", "V1DeleteOptions", "V1ObjectMeta"]
        component: dict[str, Doc] = {}
        paths: dict[str, Doc] = {}
        for rt in sorted(types, key=lambda r: r.plural):
            ref = self._kind_schema(rt, namer, roots, component)
            paths.update(_paths(rt, ref))
        component.update(schemas.components(roots, namer))
        listmarkers.annotate(
            component, namer, [(rt.group, rt.version, rt.kind) for rt in self._registry]
        )
        for rt in types:
            cls = schemas.model_for(rt.group, rt.version, rt.kind)
            if cls is not None:
                component[namer.name(cls.__name__)]["x-kubernetes-group-version-kind"] = [
                    {"group": rt.group, "kind": rt.kind, "version": rt.version}
                ]
        return {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": "v1.32.4"},
            "paths": paths,
            "components": {"schemas": component},
        }

    def _kind_schema(
        self, rt: ResourceType, namer: schemas.Namer, roots: list[str], component: dict[str, Doc]
    ) -> str:
        if rt.crd is not None:
            name = f"{'.'.join(reversed(rt.group.split('.')))}.{rt.version}.{rt.kind}"
            schema = dict(
                crds.version_schema(rt.crd, rt.version)
                or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            )
            props = dict(schema.get("properties") or {})
            props["metadata"] = {
                "allOf": [{"$ref": f"#/components/schemas/{schemas.META}.ObjectMeta"}]
            }
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
            schema["properties"] = props
            schema["x-kubernetes-group-version-kind"] = [
                {"group": rt.group, "kind": rt.kind, "version": rt.version}
            ]
            component[name] = schema
            return name
        cls = schemas.model_for(rt.group, rt.version, rt.kind)
        if cls is None:
            return f"{schemas.META}.Status"
        roots.append(cls.__name__)
        return namer.name(cls.__name__)


def _op(
    rt: ResourceType,
    action: str,
    ref: str,
    *,
    params: list[Doc],
    body: bool,
    kind: str | None = None,
) -> Doc:
    op: Doc = {
        "operationId": f"{action}{rt.kind}",
        "parameters": params,
        "responses": {
            "200": {
                "description": "OK",
                "content": {
                    "application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}
                },
            },
            "401": {"description": "Unauthorized"},
        },
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {
            "group": rt.group,
            "version": rt.version,
            "kind": kind or rt.kind,
        },
    }
    if body:
        patches = bodies.PATCH_TYPES if rt.crd is None else bodies.CR_PATCH_TYPES
        media = patches if action == "patch" else ("application/json", "application/yaml")
        op["requestBody"] = {
            "required": True,
            "content": {m: {"schema": {"$ref": f"#/components/schemas/{ref}"}} for m in media},
        }
    return op


def _write_params(*extra: str) -> list[Doc]:
    return [
        _param("dryRun"),
        _param("fieldManager"),
        _param("fieldValidation"),
        *(_param(e, "boolean") for e in extra),
    ]


def _paths(rt: ResourceType, ref: str) -> dict[str, Doc]:
    base = f"/{gv_path(rt.group, rt.version)}"
    collection = (
        f"{base}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{base}/{rt.plural}"
    )
    path_params = (
        [{"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}}]
        if rt.namespaced
        else []
    )
    name_param = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]
    verbs = set(rt.verbs)
    out: dict[str, Doc] = {}
    coll: Doc = {"parameters": [*path_params, _param("pretty")]}
    if "list" in verbs:
        coll["get"] = _op(rt, "list", ref, params=[], body=False)
    if "create" in verbs:
        coll["post"] = _op(rt, "post", ref, params=_write_params(), body=True)
    if "deletecollection" in verbs:
        coll["delete"] = _op(
            rt, "deletecollection", f"{schemas.META}.Status", params=[], body=False
        )
    out[collection] = coll
    item: Doc = {"parameters": name_param + path_params + [_param("pretty")]}
    if "get" in verbs:
        item["get"] = _op(rt, "get", ref, params=[], body=False)
    if "update" in verbs:
        item["put"] = _op(rt, "put", ref, params=_write_params(), body=True)
    if "patch" in verbs:
        item["patch"] = _op(rt, "patch", ref, params=_write_params("force"), body=True)
    if "delete" in verbs:
        item["delete"] = _op(
            rt, "delete", f"{schemas.META}.Status", params=[_param("dryRun")], body=False
        )
    out[f"{collection}/{{name}}"] = item
    if rt.namespaced and "list" in verbs:
        out[f"{base}/{rt.plural}"] = {"get": _op(rt, "list", ref, params=[], body=False)}
    for sub in rt.subresources:
        if sub.name not in ("status", "scale"):
            continue
        sub_ref = ref if sub.name == "status" else "io.k8s.api.autoscaling.v1.Scale"
        kind = rt.kind if sub.name == "status" else "Scale"
        out[f"{collection}/{{name}}/{sub.name}"] = {
            "parameters": name_param + path_params,
            "get": _op(rt, "get", sub_ref, params=[], body=False, kind=kind),
            "put": _op(rt, "put", sub_ref, params=_write_params(), body=True, kind=kind),
            "patch": _op(rt, "patch", sub_ref, params=_write_params("force"), body=True, kind=kind),
        }
    return out
