"""Which event loop a served process runs on (``WHARF_EVENT_LOOP``, ``common.eventloop``)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from common import eventloop
from common.eventloop import ENV


async def _running_loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_uvloop_unless_asked_for_asyncio() -> None:
    assert eventloop.chosen({}) == "uvloop"  # a dependency, so installed here
    assert eventloop.chosen({ENV: ""}) == "uvloop"
    assert eventloop.chosen({ENV: " UVloop "}) == "uvloop"
    assert eventloop.chosen({ENV: "asyncio"}) == "asyncio"


def test_run_uses_the_loop_named() -> None:
    assert eventloop.run(_running_loop_module(), "uvloop").startswith("uvloop")
    assert eventloop.run(_running_loop_module(), "asyncio").startswith("asyncio")


def test_a_bad_choice_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match=r"WHARF_EVENT_LOOP must be one of auto, uvloop, asyncio"):
        eventloop.chosen({ENV: "trio"})


def test_without_uvloop_auto_falls_back_and_uvloop_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # what find_spec reports when not installed
    assert eventloop.chosen({}) == "asyncio"
    with pytest.raises(ValueError, match="uvloop is not installed"):
        eventloop.chosen({ENV: "uvloop"})
