"""What needs the admin groups (``console.security.admin.groups``): every operation the spec marks
``x-admin-only`` refuses a signed-in person outside them with 403 ``admin-required`` and lets the
admin login, or an account given an admin group, through; in open mode the reads among them stay
public as every GET is; ``/about`` withholds the server's details from non-admins."""

from __future__ import annotations

import re

from common.openapi import Spec
from console.app import SPEC_PATH
from console.auth import ADMIN_ONLY
from console.keys import AUTH
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN, ALICE, add_people
from tests.guards import assert_problem
from tests.typing_support import Client

#: The rule of docs/console-identity.md, "What needs the admin groups".
ADMIN_ONLY_OPERATIONS = {
    "addCluster", "updateCluster", "removeCluster", "listKubeconfigContexts", "getClusterConfig",
    "listAudit", "addRepository", "removeRepository", "saveValuesFileByBody", "saveValuesFile",
    "deleteValuesFile",
}  # fmt: skip


def _admin_only() -> list[tuple[str, str, str]]:
    """(operationId, method, path with its variables filled) of each admin-only operation."""
    spec = Spec.load(SPEC_PATH)
    found = [op for op in spec.operations.values() if op.raw.get(ADMIN_ONLY) is True]
    return [
        (op.operation_id, op.method.upper(), "/api/v1" + re.sub(r"\{[^}]+\}", "alpha", op.path))
        for op in found
    ]


def _let_through(status: int) -> bool:
    """Signed in and allowed: the operation's own answer (these requests carry no body, so a
    400 or a 404 is fine), never a refusal of the person or a server error."""
    return status not in (401, 403) and status < 500


async def _with_alice(console_app: ConsoleApp, *overrides: str) -> Client:
    client = await console_app(*overrides)
    await add_people(client)
    return client


async def test_admin_only_operations_need_an_admin_group(console_app: ConsoleApp) -> None:
    operations = _admin_only()
    assert {operation for operation, _, _ in operations} == ADMIN_ONLY_OPERATIONS
    client = await _with_alice(console_app, "security.open-mode=false")
    for operation, method, path in operations:
        resp = await client.request(method, path, headers=ALICE)
        problem = await assert_problem(resp, 403, code="admin-required")
        assert "wharf:admins" in problem["detail"], operation
        by_admin = await client.request(method, path, headers=ADMIN)
        assert _let_through(by_admin.status), (operation, await by_admin.text())
    await client.app[AUTH].accounts.set_groups("alice", ["team-a", "wharf:admins"])
    for operation, method, path in operations:
        resp = await client.request(method, path, headers=ALICE)
        assert _let_through(resp.status), (operation, await resp.text())


async def test_open_mode_reads_stay_public_and_writes_need_the_admin_group(
    console_app: ConsoleApp,
) -> None:
    client = await _with_alice(console_app)  # open mode, the default
    assert (await client.get("/api/v1/audit")).status == 200
    assert (await client.get("/api/v1/audit", headers=ALICE)).status == 200
    assert (await client.get("/api/v1/clusters/alpha/config", headers=ALICE)).status == 200
    body = {"id": "gamma", "kubeconfig": "apiVersion: v1\nkind: Config\n"}
    refused = await client.post("/api/v1/clusters", json=body, headers=ALICE)
    await assert_problem(refused, 403, code="admin-required")
    await assert_problem(await client.post("/api/v1/clusters", json=body), 401)


async def test_about_withholds_server_details_from_non_admins(console_app: ConsoleApp) -> None:
    client = await _with_alice(console_app, "security.open-mode=false")
    alice = await (await client.get("/api/v1/about", headers=ALICE)).json()
    assert "security.adminUsername" in alice["withheld"]
    admin = await (await client.get("/api/v1/about", headers=ADMIN)).json()
    assert admin["withheld"] == []
