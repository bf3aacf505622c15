"""Parameter checks in plain Python (``common.openapi.quick_checks``) say exactly what the compiled
jsonschema validator says, in the same order, for every parameter of the three services' specs."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from chartsvc.charts import SPEC_PATTERNS as CHART_PATTERNS
from common.openapi import Param, Spec, _message, load_document, quick_checks, whole_integers
from console.app import SPEC_PATTERNS as CONSOLE_PATTERNS
from results.fields import SPEC_PATTERNS as RESULTS_PATTERNS

ROOT = Path(__file__).resolve().parents[2]
PROBES: tuple[Any, ...] = (
    "",
    "a",
    "demo",
    "a b",
    "main/feature-1",
    "A1B2C3D",
    "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
    "x" * 64,
    "x" * 300,
    "../etc",
    "bitnami/nginx",
    "oci://registry.example/charts/nginx:1.0.0",
    "https://charts.example/x",
    "default",
    "Pods",
    "é",
    0,
    -1,
    1,
    5,
    1000,
    10**9,
    2.5,
    True,
    False,
)


@functools.cache
def params() -> list[Param]:
    found = []
    patterns = {
        "chartsvc": CHART_PATTERNS,
        "results": RESULTS_PATTERNS,
        "console": CONSOLE_PATTERNS,
    }
    for service, stated in patterns.items():
        document = load_document(ROOT / "spec" / f"{service}.yaml", patterns=stated)
        spec = Spec.from_document(document)
        found += [p for op in spec.operations.values() for p in op.params]
    return found


def test_nearly_every_parameter_takes_the_quick_path() -> None:
    every = params()
    quick = [p for p in every if p.quick is not None]
    assert len(quick) >= 0.9 * len(every)


@pytest.mark.parametrize("value", PROBES, ids=repr)
def test_quick_checks_agree_with_the_validator(value: Any) -> None:
    for param in params():
        if param.quick is None:
            continue
        slow = [_message(e) for e in param.validator.iter_errors(value)]
        assert param.quick(value) == slow, (param.name, param.schema)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "string"}},
        {"type": ["string", "null"]},
        {"type": "string", "format": "date-time"},
        {"$ref": "#/components/schemas/Name"},
        {"enum": [1, 2]},
        {"anyOf": [{"type": "string"}]},
    ],
)
def test_other_schemas_are_left_to_the_validator(schema: dict[str, Any]) -> None:
    assert quick_checks(schema) is None


def test_each_rule_in_schema_order() -> None:
    check = quick_checks({"type": "string", "pattern": "^[a-z]+$", "maxLength": 3, "default": "a"})
    assert check is not None
    assert check("abc") == []
    assert check("ABCD") == ["must match ^[a-z]+$", "must be at most 3 characters"]
    assert check(7) == ["must be of type string"]
    bounded = quick_checks({"type": "integer", "minimum": 1, "maximum": 10})
    assert bounded is not None
    assert (bounded(0), bounded(11), bounded(True)) == (
        ["must be >= 1"],
        ["must be <= 10"],
        ["must be of type integer"],
    )
    listed = quick_checks({"type": "string", "enum": ["a", "b"]})
    assert listed is not None
    assert (listed("a"), listed("c"), listed(1)) == (
        [],
        ["must be one of a, b"],
        ["must be of type string", "must be one of a, b"],
    )


def test_whole_number_floats_become_ints_where_the_schema_asks_for_an_integer() -> None:
    spec = Spec.from_document(
        {
            "openapi": "3.1.0",
            "paths": {},
            "components": {"schemas": {"Count": {"type": ["integer", "null"]}}},
        }
    )
    schema = {
        "type": "object",
        "properties": {
            "timeout": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            "count": {"$ref": "#/components/schemas/Count"},
            "ports": {"type": "array", "items": {"type": "integer"}},
            "ratio": {"type": "number"},
            "values": {"type": "object"},
        },
    }
    body = {
        "timeout": 440.0,
        "count": 3.0,
        "ports": [80.0, 443],
        "ratio": 2.0,
        "values": {"replicas": 2.0},
    }
    fixed = whole_integers(spec.validator(schema), body)
    assert fixed == body
    assert [type(v) for v in (fixed["timeout"], fixed["count"], *fixed["ports"])] == [int] * 4
    # a number or a free-form value keeps what the caller sent
    assert isinstance(fixed["ratio"], float)
    assert isinstance(fixed["values"]["replicas"], float)
    assert whole_integers(spec.validator({"type": "integer"}), 7.0) == 7


def test_integer_parameters_are_served_with_the_range_the_server_holds_them_to() -> None:
    root = Path(__file__).resolve().parents[2] / "spec"
    for service in ("chartsvc", "results", "console"):
        document = load_document(root / f"{service}.yaml")
        for path, item in document["paths"].items():
            for op in item.values():
                for param in op.get("parameters", []) if isinstance(op, dict) else []:
                    schema = param.get("schema", {})
                    if schema.get("type") == "integer":
                        assert schema["minimum"] >= -(2**63), (service, path, param["name"])
                        assert schema["maximum"] <= 2**63 - 1, (service, path, param["name"])


def test_local_references_are_inlined_once_and_recursive_ones_kept() -> None:
    """A reference resolved on every request cost a small body's check three times its inlined
    one; a recursive schema keeps its reference (it cannot be inlined) and still validates."""
    spec = Spec.from_document(
        {
            "openapi": "3.1.0",
            "paths": {},
            "components": {
                "schemas": {
                    "Name": {"type": "string", "maxLength": 3},
                    "Tree": {
                        "type": "object",
                        "properties": {
                            "name": {"$ref": "#/components/schemas/Name", "description": "x"},
                            "children": {
                                "type": "array",
                                "items": {"$ref": "#/components/schemas/Tree"},
                            },
                        },
                    },
                }
            },
        }
    )
    validator = spec.validator({"$ref": "#/components/schemas/Tree"})
    schema: Any = validator.schema
    assert schema["properties"]["name"] == {"type": "string", "maxLength": 3}
    assert schema["properties"]["children"]["items"] == {
        "$ref": "urn:wharf:spec#/components/schemas/Tree"
    }
    bad: Any = {"name": "abc", "children": [{"name": "toolong", "children": []}]}
    assert [list(e.absolute_path) for e in validator.iter_errors(bad)] == [["children", 0, "name"]]
