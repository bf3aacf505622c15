"""Tool input and output JSON Schemas, derived from the served spec's operations.

A tool's arguments are its operation's path and query parameters and its JSON body's properties (or,
for a multipart operation, its parts), side by side in one object, named, typed and described
exactly as in the spec (``chartRef``, never a server-local path). A binary part (the chart archive)
is a base64 string there, at most as long as the upload cap allows. References are inlined: an MCP
client validates against the schema alone. A success response whose JSON is not an object is wrapped as ``{"result": ...}``, because MCP's
structured content must be an object. This module only reads the spec; it never validates calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from common.openapi import JSON_TYPES, MULTIPART, SPEC_URI, Operation, Spec

ARGUMENT_LOCATIONS = ("path", "query")
RESULT_KEY = "result"
_MAX_DEPTH = 32  # the spec's schemas nest a few levels; deeper means a reference cycle


class SchemaError(ValueError):
    """The spec cannot be expressed as one tool (a name clash, a reference cycle)."""


@attrs.frozen
class Arguments:
    """Where each argument of a tool goes: a parameter location, the JSON body or a form part."""

    locations: Mapping[str, str]  # path, query, body or part
    has_body: bool  # a JSON body
    form: bool = False  # a multipart body: the ``part`` arguments
    binary: frozenset[str] = frozenset()  # the parts given in base64

    def split(self, given: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], Any]:
        """Parameters by location, and the JSON body or the parts (None when there is neither)."""
        params: dict[str, dict[str, Any]] = {loc: {} for loc in ARGUMENT_LOCATIONS}
        body: dict[str, Any] = {}
        for name, value in given.items():
            where = self.locations.get(name, "body")
            params.get(where, body)[name] = value
        return params, (body if self.has_body or self.form else None)

    def unknown(self, given: Mapping[str, Any]) -> list[str]:
        return [name for name in given if name not in self.locations]


def inline(node: Any, document: Mapping[str, Any], depth: int = 0) -> Any:
    """``node`` with every local ``$ref`` replaced by a copy of its target."""
    if depth > _MAX_DEPTH:
        raise SchemaError("schema references nest too deep (a cycle?)")
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = _resolve(ref.removeprefix(SPEC_URI), document)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return {**inline(target, document, depth + 1), **inline(siblings, document, depth)}
        return {k: inline(v, document, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [inline(v, document, depth + 1) for v in node]
    return node


def _resolve(ref: str, document: Mapping[str, Any]) -> Any:
    if not ref.startswith("#/"):
        raise SchemaError(f"only local references are supported, got {ref}")
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def input_schema(spec: Spec, op: Operation, *, upload_cap: int) -> tuple[dict[str, Any], Arguments]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    locations: dict[str, str] = {}
    for param in _params(spec.document, op):
        if param["in"] not in ARGUMENT_LOCATIONS:
            continue
        schema = dict(param.get("schema", {}))
        if param.get("description"):
            schema["description"] = param["description"]
        _add(properties, locations, param["name"], schema, param["in"])
        if param.get("required", param["in"] == "path"):
            required.append(param["name"])
    body = _json_body(spec.document, op)
    for name, schema in (body or {}).get("properties", {}).items():
        _add(properties, locations, name, schema, "body")
    required += [name for name in (body or {}).get("required", []) if name not in required]
    form, encoding = _form(spec.document, op)
    binary = set()
    for name, schema in (form or {}).get("properties", {}).items():
        if schema.get("contentEncoding") == "binary":
            media = encoding.get(name, {}).get("contentType", "application/octet-stream")
            schema = base64_schema(schema, media, upload_cap)
            binary.add(name)
        _add(properties, locations, name, schema, "part")
    required += [name for name in (form or {}).get("required", []) if name not in required]
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    arguments = Arguments(
        locations=locations,
        has_body=body is not None,
        form=form is not None,
        binary=frozenset(binary),
    )
    return schema, arguments


def base64_schema(part: Mapping[str, Any], media: str, cap: int) -> dict[str, Any]:
    """A binary part as a tool argument: its bytes in base64, no longer than ``cap`` bytes need."""
    what = str(part.get("description") or "the file").rstrip(".")
    return {
        "type": "string",
        "contentEncoding": "base64",
        "contentMediaType": media,
        "maxLength": base64_length(cap),
        "description": f"{what}, base64-encoded (RFC 4648); at most {cap} bytes once decoded",
    }


def base64_length(size: int) -> int:
    """The length of ``size`` bytes in padded base64."""
    return 4 * ((size + 2) // 3)


def _add(
    properties: dict[str, Any], locations: dict[str, str], name: str, schema: Any, where: str
) -> None:
    if name in properties:
        raise SchemaError(f"argument {name!r} is both a {locations[name]} and a {where} field")
    properties[name] = schema
    locations[name] = where


def _params(document: Mapping[str, Any], op: Operation) -> list[dict[str, Any]]:
    shared = document["paths"][op.path].get("parameters", [])
    nodes = [*shared, *op.raw.get("parameters", [])]
    return [inline(node, document) for node in nodes]


def _json_body(document: Mapping[str, Any], op: Operation) -> dict[str, Any] | None:
    content = inline(op.raw.get("requestBody", {}), document).get("content", {})
    schema = next((c.get("schema") for t, c in content.items() if t in JSON_TYPES), None)
    return schema if isinstance(schema, dict) else None


def _form(
    document: Mapping[str, Any], op: Operation
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The multipart body's schema (None when the operation takes none) and its ``encoding``."""
    content = inline(op.raw.get("requestBody", {}), document).get("content", {})
    schema = content.get(MULTIPART, {}).get("schema")
    encoding = content.get(MULTIPART, {}).get("encoding", {})
    return (schema if isinstance(schema, dict) else None), encoding


def output_schema(spec: Spec, op: Operation) -> dict[str, Any] | None:
    """The schema of the JSON success response, as structured content; None for text answers."""
    responses = inline(op.raw.get("responses", {}), spec.document)
    for status in sorted(responses):
        if not str(status).startswith("2"):
            continue
        content = responses[status].get("content", {})
        schema = next((c.get("schema") for t, c in content.items() if t in JSON_TYPES), None)
        if isinstance(schema, dict):
            return structured_schema(schema)
    return None


def structured_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The schema of ``structured(body)``: MCP wants ``type: object`` at the root.

    None when the schema does not say whether the body is an object (then nothing is promised).
    """
    kind = _kind(schema)
    if kind == "object":
        return {"type": "object", **schema}
    if kind is None:
        return None
    return {"type": "object", "properties": {RESULT_KEY: schema}, "required": [RESULT_KEY]}


def _kind(schema: Mapping[str, Any]) -> str | None:
    """``object``, another JSON type, or None when the schema leaves it open."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    if "properties" in schema or "additionalProperties" in schema:
        return "object"
    kinds = {_kind(part) for part in schema.get("allOf", []) if isinstance(part, Mapping)}
    kinds.discard(None)
    return kinds.pop() if len(kinds) == 1 else None


def structured(body: Any) -> dict[str, Any]:
    """Structured content for a JSON body: the object itself, anything else under ``result``."""
    return body if isinstance(body, dict) else {RESULT_KEY: body}
