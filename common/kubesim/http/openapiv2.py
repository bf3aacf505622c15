"""``/openapi/v2``: the Swagger 2.0 document, derived from the v3 documents of every group/version.

Definitions are the v3 component schemas (list markers and group-version-kinds included) with
their references moved to ``#/definitions/``; operations keep their ids, query parameters,
``x-kubernetes-action`` and ``x-kubernetes-group-version-kind``, with the request body as a
``body`` parameter. It is served as JSON, or as the protobuf client-go's discovery asks for
(``to_protobuf``), encoded here by hand: gnostic's message is small enough not to need a library.
"""

from __future__ import annotations

from typing import Any

import yaml

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
    info = _text(1, doc["info"]["title"]) + _text(2, doc["info"]["version"])
    paths = b"".join(
        _message(2, _text(1, path) + _message(2, _path_proto(item)))
        for path, item in doc["paths"].items()
    )
    definitions = b"".join(
        _message(1, _text(1, name) + _message(2, _schema_proto(schema)))
        for name, schema in doc["definitions"].items()
    )
    return (
        _text(1, doc["swagger"]) + _message(2, info) + _message(8, paths) + _message(9, definitions)
    )


def _path_proto(item: Doc) -> bytes:
    out = b""
    for method, number in _METHODS.items():
        op = item.get(method)
        if op is None:
            continue
        body = _text(5, op.get("operationId", ""))
        body += b"".join(_text(6, m) for m in op.get("produces") or [])
        body += b"".join(_text(7, m) for m in op.get("consumes") or [])
        body += _extensions(13, op)
        out += _message(number, body)
    return out


def _schema_proto(schema: Doc) -> bytes:
    out = b""
    for key, number in (("$ref", 1), ("format", 2), ("title", 3), ("description", 4)):
        if isinstance(schema.get(key), str):
            out += _text(number, schema[key])
    if "default" in schema:
        out += _message(5, _yaml(schema["default"]))
    out += b"".join(_text(19, r) for r in schema.get("required") or [])
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        out += _message(21, _message(1, _schema_proto(extra)))
    elif isinstance(extra, bool):
        out += _message(21, _key(2, 0) + _varint(int(extra)))
    kind = schema.get("type")
    if kind:
        out += _message(
            22, b"".join(_text(1, t) for t in ([kind] if isinstance(kind, str) else kind))
        )
    if isinstance(schema.get("items"), dict):
        out += _message(23, _message(1, _schema_proto(schema["items"])))
    out += b"".join(_message(24, _schema_proto(s)) for s in schema.get("allOf") or [])
    if isinstance(schema.get("properties"), dict):
        props = b"".join(
            _message(1, _text(1, name) + _message(2, _schema_proto(sub)))
            for name, sub in schema["properties"].items()
        )
        out += _message(25, props)
    return out + _extensions(31, schema)


def _extensions(number: int, node: Doc) -> bytes:
    return b"".join(
        _message(number, _text(1, k) + _message(2, _yaml(v)))
        for k, v in node.items()
        if k.startswith("x-")
    )


def _yaml(value: Any) -> bytes:
    """An ``openapi.v2.Any`` holding ``value`` as YAML text (how gnostic carries free values)."""
    return _text(2, yaml.safe_dump(value, default_flow_style=False))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _message(number: int, payload: bytes) -> bytes:
    return _key(number, 2) + _varint(len(payload)) + payload


def _text(number: int, value: str) -> bytes:
    return _message(number, value.encode())
