"""Scenarios: what a simulated cluster contains when it starts (``wharf kubesim --scenario``).

``empty`` is a bare cluster (nodes, system namespaces, the ``kubernetes`` Service). ``demo`` adds
namespaces with healthy applications and one workload per failure mode, a CRD with instances, a
Gateway-API-like CRD set, PodDisruptionBudgets and CronJobs. Both are deterministic: the same
objects, names and (given the same node count) placements on every start.
"""

from __future__ import annotations

from collections.abc import Callable

from kubesim.api.objects import Objects
from kubesim.controllers.client import Client
from kubesim.controllers.events import Recorder
from kubesim.scenarios import demo

SCENARIOS: dict[str, Callable[[Client, Recorder], None]] = {
    "empty": lambda client, recorder: None,
    "demo": demo.load,
}


def load(name: str, objs: Objects, recorder: Recorder) -> None:
    if name not in SCENARIOS:
        raise ValueError(
            f"unknown scenario {name!r}; choose one of: {', '.join(sorted(SCENARIOS))}"
        )
    SCENARIOS[name](Client(objs, "kubectl-client-side-apply"), recorder)
