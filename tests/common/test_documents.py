"""The nesting limit every request document meets: JSON through ``documents.load_json``, YAML
through ``yamlio`` (libyaml by itself stops only at 1,000 levels)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from common import documents, yamlio


def nested(levels: int) -> Any:
    document: Any = 1
    for i in range(levels):
        document = {"k": document} if i % 2 else [document]
    return document


def test_depth_is_counted_without_recursion() -> None:
    assert not documents.deeper_than(nested(documents.MAX_DEPTH))
    assert documents.deeper_than(nested(documents.MAX_DEPTH + 1))
    assert documents.deeper_than(nested(50_000))  # far past Python's recursion limit
    assert not documents.deeper_than({"a": [1, 2, {"b": "c"}], "d": "x" * 10})


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[" * 101 + "]" * 101, documents.TOO_DEEP),
        ("[" * 5_000 + "]" * 5_000, documents.TOO_DEEP),  # json's own RecursionError
        ("{nope", documents.NOT_JSON),
        (b"\xff", documents.NOT_JSON),
    ],
)
def test_json_refusals_say_why(text: str | bytes, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        documents.load_json(text)


def test_json_within_the_limit_is_decoded() -> None:
    assert documents.load_json('{"a": [[[1]]]}') == {"a": [[[1]]]}


def block_yaml(levels: int) -> str:
    return "".join("  " * i + "k:\n" for i in range(levels - 1)) + "  " * (levels - 1) + "k: 1\n"


def test_yaml_nested_past_the_limit_is_a_yaml_error() -> None:
    assert yamlio.load(block_yaml(documents.MAX_DEPTH)) is not None
    for load in (yamlio.load, yamlio.load_strings, lambda t: list(yamlio.load_all(t))):
        with pytest.raises(yamlio.YAMLError, match="nested deeper than the limit of 100 levels"):
            load(block_yaml(documents.MAX_DEPTH + 1))
    with pytest.raises(yamlio.YAMLError):
        yamlio.load("[" * 999 + "]" * 999)  # under libyaml's own limit, over ours


def alias_bomb(levels: int) -> str:
    """``levels`` anchors, each a list of ten aliases of the one before: 10^levels values."""
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in range(1, levels):
        name, previous = chr(ord("a") + level), chr(ord("a") + level - 1)
        bomb += f"{name}: &{name} [{', '.join([f'*{previous}'] * 10)}]\n"
    return bomb


def test_aliases_are_walked_once_per_level_not_per_value() -> None:
    # 10^9 values: walked value by value this would not finish (or fit in memory) at all.
    started = time.perf_counter()
    bomb = yamlio.load(alias_bomb(9))
    assert time.perf_counter() - started < 2
    assert bomb["i"][9][9][9][9][9][9][9][9][9] == "x"
    assert documents.deeper_than(bomb, limit=9)
    assert not documents.deeper_than(bomb, limit=10)  # the mapping and nine levels of lists
    with pytest.raises(yamlio.YAMLError, match="nested deeper"):
        yamlio.load("a: &a [1, *a]")  # a list holding itself nests without end
