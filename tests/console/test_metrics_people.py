"""Metrics history per person (issue 33): the sampler's series are the console's own, shared, so
a person is shown one only when the cluster says they may list the metrics it was made of. alice
(``edit`` and a metrics reader in namespace a) sees a's history and is refused b's and the
cluster's (403 ``cluster-refused``); bob (``view``, no metrics rights) is refused a's; the admin
sees everything. On a living simulator enforcing RBAC, impersonated."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from console.resources.kubeapi import path_of
from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.identity_support import RBAC, Spaces, bind, binding, people, sleeper_pod
from tests.console.live_cluster import sim
from tests.console.resources_support import eventually, kube
from tests.console.support import ADMIN, ALICE, BOB, add_people
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

GRAPH = "/api/v1/clusters/alpha/metrics/graph"


@pytest.fixture(scope="module")
def spaces(sim: Simulator) -> Spaces:
    made = people(sim, sleeper_pod("shell"))

    async def metrics_reader() -> None:  # what metrics-server's aggregated reader role grants
        role = {
            "apiVersion": f"{RBAC}/v1", "kind": "Role",
            "metadata": {"name": "metrics-reader", "namespace": made.a},
            "rules": [{"apiGroups": ["metrics.k8s.io"], "resources": ["pods"],
                       "verbs": ["get", "list"]}],
        }  # fmt: skip
        async with kube(sim) as api:
            await api.send("POST", path_of(RBAC, "v1", "roles", namespace=made.a), role)
            subject = {"kind": "Group", "name": "team-a"}
            reads = binding("alice-metrics", "metrics-reader", subject, namespace=made.a)
            reads["roleRef"]["kind"] = "Role"
            await bind(api, reads)

    asyncio.run(metrics_reader())
    return made


async def _graph(client: Client, who: dict[str, str], **params: str) -> aiohttp.ClientResponse:
    return await client.get(GRAPH, params=params, headers=who)


async def test_the_sampled_history_is_shown_only_to_who_may_read_its_metrics(
    console_app: ConsoleApp, spaces: Spaces
) -> None:
    client = await console_app(
        "clusters.impersonate=on", "security.open-mode=false", "sampler.interval-seconds=0.05"
    )
    await add_people(client)
    a, b = spaces.a, spaces.b

    async def sampled(ns: str) -> dict[str, Any] | None:
        body: dict[str, Any] = await (await _graph(client, ADMIN, target="namespace",
                                                   namespace=ns)).json()  # fmt: skip
        return body if body["source"] == "sampler" and body["series"][1]["points"] else None

    await eventually(lambda: sampled(a), what=f"a sampled history of {a}")
    await eventually(lambda: sampled(b), what=f"a sampled history of {b}")

    mine = await _graph(client, ALICE, target="namespace", namespace=a)
    assert mine.status == 200, await mine.text()
    assert (await mine.json())["series"][1]["points"]
    pod = await _graph(client, ALICE, target="pod", namespace=a, name="shell")
    assert pod.status == 200, await pod.text()
    for who, params in (
        (ALICE, {"target": "namespace", "namespace": b}),
        (ALICE, {"target": "pod", "namespace": b, "name": "shell"}),
        (ALICE, {"target": "cluster"}),
        (BOB, {"target": "namespace", "namespace": a}),
    ):
        refused = await _graph(client, who, **params)
        problem = await assert_problem(refused, 403, code="cluster-refused")
        assert "metrics.k8s.io" in problem["detail"], problem
    assert (await _graph(client, ADMIN, target="cluster")).status == 200
