"""Helm through the console acts as the person when the cluster impersonates: the real engine
(helm_python) installs only what the person's RBAC allows, and release reads show only what the
person may read."""

from __future__ import annotations

from pathlib import Path

from kubesim import Simulator
from tests.conftest import ApiClient
from tests.console.helm_support import ChartRepo, chart_archives, chart_repo, make_helm_console
from tests.console.identity_support import bind, binding
from tests.console.resources_support import fresh_namespace, kube, unique
from tests.console.support import ADMIN, ADMIN_USER

__all__ = ["chart_archives", "chart_repo"]
RELEASES = "/api/v1/clusters/alpha/helm/releases"


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
