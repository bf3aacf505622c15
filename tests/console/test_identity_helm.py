"""Helm through the console acts as the person when the cluster impersonates: the real engine
(helm_python) installs, upgrades, rolls back and uninstalls only what the person's RBAC allows
(alice, ``edit`` in namespace a, is refused the same in b), release reads show only what the
person may read, and the audit trail names her."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kubesim import Simulator
from tests.conftest import ApiClient
from tests.console.helm_support import ChartRepo, chart_archives, chart_repo, make_helm_console
from tests.console.identity_support import Spaces, bind, binding, people
from tests.console.resources_support import fresh_namespace, kube, unique
from tests.console.support import ADMIN, ADMIN_USER, ALICE, add_people
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["chart_archives", "chart_repo"]
RELEASES = "/api/v1/clusters/alpha/helm/releases"


@pytest.fixture(scope="module")
def spaces(sim: Simulator) -> Spaces:
    return people(sim)


async def test_an_install_is_made_as_the_person(
    api_client: ApiClient, kubeconfig: Path, tmp_path: Path, chart_repo: ChartRepo, sim: Simulator
) -> None:
    client = await make_helm_console(
        api_client, kubeconfig, tmp_path, chart_repo, "clusters.impersonate=on"
    )
    ns = await fresh_namespace(sim)
    body = {"releaseName": "web", "namespace": ns, "chartRef": "r/demo", "version": "0.1.0"}
    refused = await client.post(RELEASES, json=body, headers=ADMIN)
    assert refused.status >= 400, await refused.text()
    assert "forbidden" in await refused.text()

    async with kube(sim) as api:  # the admin user may edit this namespace, and nothing more
        subject = {"kind": "User", "name": ADMIN_USER}
        await bind(api, binding(unique("admin-edit"), "edit", subject, namespace=ns))
    installed = await client.post(RELEASES, json=body, headers=ADMIN)
    assert installed.status == 201, await installed.text()
    listed = await (await client.get(RELEASES, params={"namespace": ns}, headers=ADMIN)).json()
    assert [r["name"] for r in listed] == ["web"]


async def _write(
    client: Client, who: dict[str, str], ns: str, action: str, body: dict[str, Any] | None = None
) -> aiohttp.ClientResponse:
    return await client.post(f"{RELEASES}/{ns}/web/{action}", json=body or {}, headers=who)


async def test_upgrade_rollback_and_uninstall_are_made_as_the_person(
    api_client: ApiClient, kubeconfig: Path, tmp_path: Path, chart_repo: ChartRepo, spaces: Spaces
) -> None:
    client = await make_helm_console(
        api_client, kubeconfig, tmp_path, chart_repo, "clusters.impersonate=on"
    )
    await add_people(client)
    a, b = spaces.a, spaces.b
    for ns, who in ((a, ALICE), (b, ADMIN)):  # her release in a; the admin's in b
        body = {"releaseName": "web", "namespace": ns, "chartRef": "r/demo", "version": "0.1.0"}
        installed = await client.post(RELEASES, json=body, headers=who)
        assert installed.status == 201, await installed.text()

    steps: list[tuple[str, dict[str, Any] | None]] = [
        ("upgrade", {"chartRef": "r/demo", "version": "0.2.0"}),
        ("rollback", {"revision": 1}),
        ("uninstall", None),
    ]
    for action, sent in steps:
        refused = await _write(client, ALICE, b, action, sent)
        problem = await assert_problem(refused, 403, code="cluster-refused")
        assert 'User "alice"' in problem["detail"], (action, problem)
        done = await _write(client, ALICE, a, action, sent)
        assert done.status == 200, (action, await done.text())
    left = await (await client.get(RELEASES, params={"namespace": b}, headers=ADMIN)).json()
    assert [(r["name"], r["version"]) for r in left] == [("web", 1)]  # untouched by her

    trail = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    hers = [(e["action"], e["target"], e["outcome"]) for e in trail if e["user"] == "alice"]
    for action in ("helm.upgrade", "helm.rollback", "helm.uninstall"):
        assert (action, f"{a}/web", "success") in hers
        assert (action, f"{b}/web", "failure") in hers
    assert all(e["impersonated"] for e in trail if e["user"] == "alice")
