"""Port-forwards are their starter's (issue 33): in closed mode alice lists only hers, the admin
all of them with their owners; alice cannot stop the admin's (404, as if it did not exist); the
admin may stop hers. On a simulator enforcing RBAC, alice impersonated (``edit`` in a)."""

from __future__ import annotations

import pytest

from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.identity_support import Spaces, people, sleeper_pod
from tests.console.live_cluster import sim
from tests.console.resources_support import eventually
from tests.console.support import ADMIN, ADMIN_USER, ALICE, BOB, add_people
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

BASE = "/api/v1/clusters/alpha/port-forwards"


@pytest.fixture(scope="module")
def spaces(sim: Simulator) -> Spaces:
    return people(sim, sleeper_pod("shell"))


async def _start(client: Client, who: dict[str, str], ns: str) -> str:
    body = {"kind": "pod", "namespace": ns, "name": "shell", "remotePort": 80}

    async def started() -> str | None:  # the pod may still be starting
        resp = await client.post(BASE, json=body, headers=who)
        if resp.status == 400:
            return None
        assert resp.status == 201, await resp.text()
        forward: dict[str, str] = await resp.json()
        return forward["id"]

    forward_id: str = await eventually(started, what=f"a port-forward into {ns}")
    return forward_id


async def _listed(client: Client, who: dict[str, str]) -> dict[str, str]:
    resp = await client.get(BASE, headers=who)
    assert resp.status == 200, await resp.text()
    return {f["id"]: f["owner"] for f in await resp.json()}


async def test_each_person_sees_and_stops_only_their_own_forwards(
    console_app: ConsoleApp, spaces: Spaces
) -> None:
    client = await console_app("clusters.impersonate=on", "security.open-mode=false")
    await add_people(client)
    hers = await _start(client, ALICE, spaces.a)
    admins = await _start(client, ADMIN, spaces.b)

    assert await _listed(client, ALICE) == {hers: "alice"}
    assert await _listed(client, BOB) == {}
    assert await _listed(client, ADMIN) == {hers: "alice", admins: ADMIN_USER}
    await assert_problem(
        await client.post(f"{BASE}/{admins}/stop", headers=ALICE), 404,
        code="unknown-port-forward",
    )  # fmt: skip
    await assert_problem(
        await client.post(f"{BASE}/{hers}/stop", headers=BOB), 404, code="unknown-port-forward"
    )
    stopped = await client.post(f"{BASE}/{hers}/stop", headers=ADMIN)
    assert stopped.status == 200, await stopped.text()
    assert (await stopped.json())["owner"] == "alice"
    assert await _listed(client, ADMIN) == {admins: ADMIN_USER}
    trail = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    starts = [(e["user"], e["target"]) for e in trail if e["action"] == "port-forward"]
    assert ("alice", f"pod/{spaces.a}/shell:80") in starts
