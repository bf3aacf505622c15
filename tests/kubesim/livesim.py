"""A living demo cluster for the HTTP-level tests: ``Simulator(nodes=3, scenario="demo")``.

Test modules import :func:`demo_simulator` into a module-scoped ``sim`` fixture, which overrides the
static one from ``conftest``; the ``kubectl``, ``api`` and ``raw`` fixtures then talk to it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from kubesim import Simulator
from kubesim.http.state import State
from tests.kubesim.live import FAST

T = TypeVar("T")


def demo_simulator(directory: Path, nodes: int = 3) -> Iterator[Simulator]:
    with Simulator(
        directory, nodes=nodes, scenario="demo", timings=FAST, bookmark_interval=0.5
    ) as s:
        wait_for(s, lambda st: _ready(st, "shop", "frontend"), what="demo frontend ready")
        yield s


def _ready(state: State, namespace: str, deployment: str) -> bool:
    d = state.objects.store.get(("apps", "deployments"), namespace, deployment) or {}
    return bool((d.get("status") or {}).get("availableReplicas")) and (d.get("status") or {}).get(
        "availableReplicas"
    ) == (d.get("spec") or {}).get("replicas")


def wait_for(
    sim: Simulator, check: Callable[[State], T], timeout: float = 10.0, what: str = ""
) -> T:
    """Poll ``check(state)`` on the simulator's loop until it is truthy (blocking)."""
    deadline = time.monotonic() + timeout
    while True:
        value = sim.call(check)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.02)


def pods(state: State, namespace: str, app: str) -> list[dict[str, Any]]:
    return [
        p
        for p in state.objects.store.list(("", "pods"), namespace)
        if (p["metadata"].get("labels") or {}).get("app.kubernetes.io/name") == app
        and not p["metadata"].get("deletionTimestamp")
    ]
