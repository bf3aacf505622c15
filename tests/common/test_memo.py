"""``common.memo.Remade``: made once per set of objects, made again when any of them is replaced."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from common.memo import Remade


@attrs.frozen
class Item:
    name: str


def test_the_same_objects_reuse_what_was_made_and_any_other_object_remakes_it() -> None:
    made: list[tuple[str, ...]] = []

    def make(items: Sequence[Item]) -> str:
        made.append(tuple(i.name for i in items))
        return ",".join(i.name for i in items)

    remade = Remade(make)
    a, b = Item("a"), Item("b")
    assert remade([a, b]) == "a,b"
    assert remade([a, b]) == "a,b"  # a new list of the same objects
    assert len(made) == 1
    assert remade([a, Item("b")]) == "a,b"  # equal, but another object: made again
    assert remade([a]) == "a"  # one removed
    assert remade([Item("a"), a]) == "a,a"  # one added
    assert remade([]) == ""
    assert remade([]) == ""
    assert len(made) == 5
