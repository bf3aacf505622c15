"""Each encoder's TypedDict is spelled as the spec schema of the same name: same keys, none missing.

Response validation in the functional tests checks values against the spec, but the schemas allow
extra properties, so a key renamed in an encoder would pass there; this pins the names.
"""

from __future__ import annotations

import importlib
import pkgutil
import typing
from pathlib import Path
from typing import Any

import pytest

from common.openapi import load_document
from results import encoders

SPEC = Path(__file__).resolve().parents[2] / "spec" / "results.yaml"
SCHEMAS: dict[str, Any] = load_document(SPEC)["components"]["schemas"]
MODULES = [
    importlib.import_module(f"{encoders.__name__}.{m.name}")
    for m in pkgutil.iter_modules(encoders.__path__)
]
BODIES = {
    name: value
    for module in MODULES
    for name, value in vars(module).items()
    if typing.is_typeddict(value) and value.__module__ == module.__name__
}


def properties(schema: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The schema's property names and required names, ``allOf`` parts and ``$ref``s merged."""
    if "$ref" in schema:
        return properties(SCHEMAS[schema["$ref"].rsplit("/", 1)[-1]])
    names, required = set(schema.get("properties", {})), set(schema.get("required", []))
    for part in schema.get("allOf", []):
        more, needed = properties(part)
        names |= more
        required |= needed
    return names, required


def test_every_body_has_its_schema() -> None:
    assert sorted(set(BODIES) - set(SCHEMAS)) == []
    assert len(BODIES) >= 20


@pytest.mark.parametrize("name", sorted(BODIES))
def test_body_keys_are_the_schemas(name: str) -> None:
    names, required = properties(SCHEMAS[name])
    keys = set(typing.get_type_hints(BODIES[name]))
    assert required <= keys, f"{name} lacks required {sorted(required - keys)}"
    extra = keys - names
    assert extra == set(), f"{name} sends keys its schema does not name: {sorted(extra)}"
