"""Every operation that takes a body, on every service: a field the contract does not know is a 400
naming it (a typo is never silently ignored), and a body of a type the operation does not take is
a 4xx problem, never a 500. The spec side is pinned too: request schemas close their objects,
except where the contract means a free-form object."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from aiohttp import FormData

from common.openapi import SPEC, Operation, Spec
from tests.conftest import ApiClient
from tests.e2e.services import SERVICES, WRITE_HEADERS
from tests.guards import assert_problem

#: Schemas the contract leaves open on purpose: chart values and a JSON merge patch are whatever
#: the chart or the object holds.
OPEN_BY_CONTRACT = {"#/components/schemas/Values", "patchObject", "saveValuesFile"}
UNKNOWN = "zzNotAField"
#: Operations that read their body whatever its declared type: a manifest (JSON is YAML), and a
#: pod file's bytes (``curl -T`` and ``--data-binary`` send other types for the same bytes).
ANY_TEXT = {"applyManifest", "dryRunManifest", "writePodFile"}


def resolve(spec: Spec, node: Any) -> Any:
    while isinstance(node, Mapping) and "$ref" in node:
        target: Any = spec.document
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def open_objects(spec: Spec, node: Any, where: str, seen: set[str]) -> Iterator[str]:
    """Paths of object schemas under ``node`` that accept properties they do not name."""
    ref = node.get("$ref") if isinstance(node, Mapping) else None
    if ref in OPEN_BY_CONTRACT or ref in seen:
        return
    if ref:
        seen.add(ref)
    schema = resolve(spec, node)
    if not isinstance(schema, Mapping):
        return
    named = set(schema.get("properties", {}))
    closed = "additionalProperties" in schema or "unevaluatedProperties" in schema
    for key in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(key, []):
            if closed and _constrains_only(sub, named):
                continue  # which of the closed object's own fields are required, say
            yield from open_objects(spec, sub, where, seen)
    if schema.get("type") == "object" or "properties" in schema:
        if "additionalProperties" not in schema and "unevaluatedProperties" not in schema:
            yield where
        for name, sub in schema.get("properties", {}).items():
            yield from open_objects(spec, sub, f"{where}.{name}", seen)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            yield from open_objects(spec, extra, f"{where}.*", seen)
    if "items" in schema:
        yield from open_objects(spec, schema["items"], f"{where}[]", seen)


def _constrains_only(sub: Any, named: set[str]) -> bool:
    """Whether ``sub`` (an alternative inside an object schema) only restates fields its object
    already names, adding no object of its own."""
    if not isinstance(sub, Mapping) or "$ref" in sub or "type" in sub:
        return False
    return set(sub.get("properties", {})) <= named


def body_schemas(spec: Spec) -> Iterator[tuple[Operation, str, Any]]:
    for op in spec.operations.values():
        body = resolve(spec, op.raw.get("requestBody", {}))
        for media, content in body.get("content", {}).items():
            if "schema" in content:
                yield op, media, content["schema"]


def url_of(op: Operation, base: str) -> str:
    path = op.path
    for param in op.params:
        if param.location == "path":
            value = "1" if param.schema.get("type") == "integer" else "x"
            path = path.replace("{" + param.name + "}", value)
    return base + path


@pytest.mark.parametrize("service", SERVICES)
def test_request_schemas_close_their_objects(service: str, tmp_path: Path) -> None:
    spec = SERVICES[service](tmp_path)[SPEC]
    found = [
        where
        for op, media, schema in body_schemas(spec)
        if op.operation_id not in OPEN_BY_CONTRACT
        for where in open_objects(spec, schema, f"{op.operation_id} {media}", set())
    ]
    assert found == []


@pytest.mark.parametrize("service", SERVICES)
async def test_an_unknown_body_field_is_a_400_naming_it(
    service: str, tmp_path: Path, api_client: ApiClient
) -> None:
    client = await api_client(SERVICES[service](tmp_path))
    spec = client.app[SPEC]
    headers = WRITE_HEADERS[service]
    checked = []
    for op, media, schema in body_schemas(spec):
        if op.operation_id in OPEN_BY_CONTRACT or resolve(spec, schema).get("type") != "object":
            continue
        url = url_of(op, "/api/v1")
        if media == "multipart/form-data":
            form = FormData(default_to_multipart=True)
            form.add_field(UNKNOWN, "1")
            resp = await client.request(op.method, url, data=form, headers=headers)
        else:
            resp = await client.request(op.method, url, json={UNKNOWN: 1}, headers=headers)
        body = await assert_problem(resp, 400)
        fields = [e["field"] for e in body.get("errors", [])]
        assert UNKNOWN in fields, f"{op.operation_id} {media}: {body}"
        checked.append(op.operation_id)
    assert checked


@pytest.mark.parametrize("service", SERVICES)
async def test_a_body_of_a_type_not_taken_is_a_415_problem(
    service: str, tmp_path: Path, api_client: ApiClient
) -> None:
    client = await api_client(SERVICES[service](tmp_path))
    headers = {**WRITE_HEADERS[service], "Content-Type": "text/xml"}
    answers = {}
    for op in {op.operation_id: op for op, _, _ in body_schemas(client.app[SPEC])}.values():
        if op.operation_id in ANY_TEXT:
            continue
        resp = await client.request(op.method, url_of(op, "/api/v1"), data=b"<x/>", headers=headers)
        answers[op.operation_id] = resp.status
        if resp.status == 415:
            body = await assert_problem(resp, 415)
            assert "Content-Type" in body["detail"]
    assert answers == dict.fromkeys(answers, 415)
