"""The audit trail: mutating actions with their user and outcome, a ring of 500, newest first."""

from __future__ import annotations

import logging

import pytest

from console.audit import AUDIT, AuditEntry, AuditLog
from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN, kubeconfig_text
from tests.guards import assert_problem


def entry(n: int) -> AuditEntry:
    return AuditEntry(
        time=1_700_000_000 + n,
        user="admin",
        cluster="alpha",
        action="scale",
        target=f"apps/deployments/default/web-{n}",
        outcome="success",
    )


def test_the_ring_keeps_the_newest_500() -> None:
    log = AuditLog()
    for n in range(510):
        log.add(entry(n))
    newest = log.newest_first()
    assert len(newest) == 500
    assert newest[0].target == "apps/deployments/default/web-509"
    assert newest[-1].target == "apps/deployments/default/web-10"
    assert [e.target for e in log.newest_first(2)] == [
        "apps/deployments/default/web-509",
        "apps/deployments/default/web-508",
    ]


async def test_served_newest_first_with_a_limit(console_app: ConsoleApp) -> None:
    client = await console_app()
    for n in range(505):
        client.app[AUDIT].add(entry(n))
    body = await (await client.get("/api/v1/audit")).json()
    assert len(body) == 500
    assert body[0] == {
        "time": "2023-11-14T22:21:44.000Z",
        "user": "admin",
        "cluster": "alpha",
        "action": "scale",
        "target": "apps/deployments/default/web-504",
        "outcome": "success",
        "detail": None,
        "groups": [],
        "impersonated": None,
    }
    body = await (await client.get("/api/v1/audit", params={"limit": "3"})).json()
    assert [e["target"][-7:] for e in body] == ["web-504", "web-503", "web-502"]
    await assert_problem(
        await client.get("/api/v1/audit", params={"limit": "0"}), 400, code="invalid-request"
    )


async def test_cluster_changes_are_audited_and_logged(
    console_app: ConsoleApp, sim_b: Simulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="console.audit")
    client = await console_app()
    body = {"id": "gamma", "kubeconfig": kubeconfig_text(sim_b)}
    await client.post("/api/v1/clusters", json=body, headers=ADMIN)
    await client.post("/api/v1/clusters", json=body, headers=ADMIN)  # a conflict
    await client.delete("/api/v1/clusters/gamma", headers=ADMIN)
    await client.post("/api/v1/clusters", json=body)  # refused before it is attempted
    trail = await (await client.get("/api/v1/audit")).json()
    assert [(e["action"], e["outcome"], e["user"], e["cluster"]) for e in trail] == [
        ("cluster.remove", "success", "admin", "gamma"),
        ("cluster.add", "failure", "admin", "gamma"),
        ("cluster.add", "success", "admin", "gamma"),
    ]
    assert trail[1]["detail"].startswith("409 cluster-conflict")
    lines = [r.getMessage() for r in caplog.records if r.name == "console.audit"]
    assert len(lines) == 3
    assert lines[0] == (
        "user=admin groups=wharf:admins as=- cluster=gamma action=cluster.add target=gamma "
        "outcome=success"
    )
    assert all(sim_b.token not in line for line in lines)
