"""``/openapi/v2``: the Swagger 2.0 document, derived from the v3 documents of every group/version.

Definitions are the v3 component schemas (list markers and group-version-kinds included) with
their references moved to ``#/definitions/``; operations keep their ids, query parameters,
``x-kubernetes-action`` and ``x-kubernetes-group-version-kind``, with the request body as a
``body`` parameter. It is served as JSON, or as the protobuf client-go's discovery asks for
(``to_protobuf``): gnostic's message, written with the field writers of ``encoding.protoencode``.
"""

from __future__ import annotations

from typing import Any

import yaml

from kubesim.encoding.protoencode import delimited, integer, text

Doc = dict[str, Any]
_V3_REF = "#/components/schemas/"


def build(v3_documents: list[Doc]) -> Doc:
    """The v2 document for these v3 group/version documents."""
    paths: Doc = {}
    definitions: Doc = {}
    for v3 in v3_documents:
        definitions.update(_refs(v3["components"]["schemas"]))
        paths.update({p: _path_item(item) for p, item in v3["paths"].items()})
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.32.4"},
        "paths": paths,
        "definitions": definitions,
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "type": "apiKey",
                "name": "authorization",
                "in": "header",
            }
        },
        "security": [{"BearerToken": []}],
    }


def _refs(value: Any) -> Any:
    """v3 references as v2 ones: ``#/definitions/``, and v3's ``allOf: [{$ref}]`` wrapper (which
    lets a reference carry a description) back to the plain ``$ref`` v2 documents use."""
    if isinstance(value, dict):
        out = {k: _refs(v) for k, v in value.items()}
        wrapped = out.get("allOf")
        if isinstance(wrapped, list) and len(wrapped) == 1 and set(wrapped[0]) == {"$ref"}:
            del out["allOf"]
            out["$ref"] = wrapped[0]["$ref"]
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith(_V3_REF):
            out["$ref"] = "#/definitions/" + ref[len(_V3_REF) :]
        return out
    if isinstance(value, list):
        return [_refs(v) for v in value]
    return value


def _parameter(p: Doc) -> Doc:
    out = {k: v for k, v in p.items() if k in ("name", "in", "description", "required")}
    out.update({k: v for k, v in (p.get("schema") or {}).items() if k in ("type", "uniqueItems")})
    return out


def _path_item(item: Doc) -> Doc:
    out: Doc = {}
    for method, op in item.items():
        if method == "parameters":
            out["parameters"] = [_parameter(p) for p in op]
        else:
            out[method] = _operation(op)
    return out


def _operation(op: Doc) -> Doc:
    params = [_parameter(p) for p in op.get("parameters") or []]
    consumes = ["*/*"]
    body = op.get("requestBody")
    if body:
        consumes = list(body["content"])
        schema = next(iter(body["content"].values()))["schema"]
        params.append({"name": "body", "in": "body", "required": True, "schema": _refs(schema)})
    responses: Doc = {}
    for code, response in (op.get("responses") or {}).items():
        responses[code] = {"description": response.get("description", "")}
        content = response.get("content")
        if content:
            responses[code]["schema"] = _refs(next(iter(content.values()))["schema"])
    return {
        "consumes": consumes,
        "produces": ["application/json", "application/yaml"],
        "schemes": ["https"],
        "operationId": op.get("operationId", ""),
        "parameters": params,
        "responses": responses,
        **{k: v for k, v in op.items() if k.startswith("x-kubernetes-")},
    }


# --- protobuf: gnostic's openapi.v2.Document, what client-go's discovery asks for ----------------

# What clients ask for (client-go still sends the "@" form, which is not a valid media type)
# and what the server answers with, as kube-openapi's handler does.
PROTOBUF_ACCEPTED = (
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
)
PROTOBUF = PROTOBUF_ACCEPTED[1]
_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "patch": 8}


def to_protobuf(doc: Doc) -> bytes:
    """``doc`` as an ``openapi.v2.Document``: info, definitions in full (with their extensions),
    and each path's operations with their ids, media types and extensions (parameters and
    responses are left out; clients read models and group-version-kinds from it)."""
    info = text(1, doc["info"]["title"]) + text(2, doc["info"]["version"])
    paths = b"".join(
        delimited(2, text(1, path) + delimited(2, _path_proto(item)))
        for path, item in doc["paths"].items()
    )
    definitions = b"".join(
        delimited(1, text(1, name) + delimited(2, _schema_proto(schema)))
        for name, schema in doc["definitions"].items()
    )
    return (
        text(1, doc["swagger"])
        + delimited(2, info)
        + delimited(8, paths)
        + delimited(9, definitions)
    )


def _path_proto(item: Doc) -> bytes:
    out = b""
    for method, number in _METHODS.items():
        op = item.get(method)
        if op is None:
            continue
        body = text(5, op.get("operationId", ""))
        body += b"".join(text(6, m) for m in op.get("produces") or [])
        body += b"".join(text(7, m) for m in op.get("consumes") or [])
        body += _extensions(13, op)
        out += delimited(number, body)
    return out


def _schema_proto(schema: Doc) -> bytes:
    out = b""
    for key, number in (("$ref", 1), ("format", 2), ("title", 3), ("description", 4)):
        if isinstance(schema.get(key), str):
            out += text(number, schema[key])
    if "default" in schema:
        out += delimited(5, _yaml(schema["default"]))
    out += b"".join(text(19, r) for r in schema.get("required") or [])
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        out += delimited(21, delimited(1, _schema_proto(extra)))
    elif isinstance(extra, bool):
        out += delimited(21, integer(2, int(extra)))
    kind = schema.get("type")
    if kind:
        out += delimited(
            22, b"".join(text(1, t) for t in ([kind] if isinstance(kind, str) else kind))
        )
    if isinstance(schema.get("items"), dict):
        out += delimited(23, delimited(1, _schema_proto(schema["items"])))
    out += b"".join(delimited(24, _schema_proto(s)) for s in schema.get("allOf") or [])
    if isinstance(schema.get("properties"), dict):
        props = b"".join(
            delimited(1, text(1, name) + delimited(2, _schema_proto(sub)))
            for name, sub in schema["properties"].items()
        )
        out += delimited(25, props)
    return out + _extensions(31, schema)


def _extensions(number: int, node: Doc) -> bytes:
    return b"".join(
        delimited(number, text(1, k) + delimited(2, _yaml(v)))
        for k, v in node.items()
        if k.startswith("x-")
    )


def _yaml(value: Any) -> bytes:
    """An ``openapi.v2.Any`` holding ``value`` as YAML text (how gnostic carries free values)."""
    return text(2, yaml.safe_dump(value, default_flow_style=False))
