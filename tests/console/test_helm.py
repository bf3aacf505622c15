"""Helm per cluster through the console: the real engine on the simulator, read back by Helm.

Each test installs into a namespace of its own on ``alpha`` from the loopback chart repository,
then checks what the console answers, what Helm itself (helm_python) sees on the same cluster,
what the audit trail recorded, and what ``beta`` does not see.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import helm_python as helm
import yaml
from aiohttp import ClientResponse

from console.app import create_app
from console.keys import OUTBOUND_ALLOW
from kubesim import Simulator
from tests.chartsvc.conftest import LOOPBACK, ChartRepo, index_document
from tests.chartsvc.fixtures_cluster import LOOP, build_chart, leave_pending, stuck_details
from tests.conftest import ApiClient
from tests.console.helm_support import (
    chart_archives,
    chart_repo,
    helm_console,
    write_repositories,
)
from tests.console.resources_support import fresh_namespace
from tests.console.support import ADMIN, make_settings
from tests.guards import assert_problem
from tests.scrape import scrape, value
from tests.typing_support import Client

__all__ = ["chart_archives", "chart_repo", "helm_console"]
ALPHA = "/api/v1/clusters/alpha/helm"
BETA = "/api/v1/clusters/beta/helm"


async def _install(client: Client, ns: str, name: str = "web", **extra: Any) -> ClientResponse:
    body = {"releaseName": name, "namespace": ns, "chartRef": "r/demo", "version": "0.1.0", **extra}
    return await client.post(f"{ALPHA}/releases", json=body, headers=ADMIN)


def _helm_status(sim: Simulator, ns: str, name: str) -> dict[str, Any]:
    config = helm.Config(kubeconfig_path=str(sim.kubeconfig_path), namespace=ns)
    try:
        return dict(config.status(name))
    finally:
        config.close()


async def test_install_is_helms_own_release_on_that_cluster_only(
    helm_console: Client, sim: Simulator
) -> None:
    ns = await fresh_namespace(sim)
    resp = await _install(helm_console, ns, values={"replicaCount": 2})
    assert resp.status == 201, await resp.text()
    body = await resp.json()
    assert (body["name"], body["namespace"], body["version"]) == ("web", ns, 1)
    assert body["info"]["status"] == "deployed"
    assert body["chart"]["metadata"]["version"] == "0.1.0"
    assert body["config"] == {"replicaCount": 2}

    assert _helm_status(sim, ns, "web")["status"] == "deployed"  # Helm reads what we wrote
    listed = await (await helm_console.get(f"{ALPHA}/releases", params={"namespace": ns})).json()
    assert [
        (r["name"], r["info"]["status"], r["chart"]["metadata"]["version"]) for r in listed
    ] == [("web", "deployed", "0.1.0")]
    everywhere = await (await helm_console.get(f"{ALPHA}/releases")).json()
    assert ("web", ns) in {(r["name"], r["namespace"]) for r in everywhere}
    assert await (await helm_console.get(f"{BETA}/releases", params={"namespace": ns})).json() == []

    where = f"{ALPHA}/releases/{ns}/web/manifest"
    manifest = await (await helm_console.get(where, headers=ADMIN)).text()
    kinds = {doc["kind"] for doc in yaml.safe_load_all(manifest) if doc}
    assert {"Deployment", "Service", "ServiceAccount"} <= kinds
    owned = await (await helm_console.get(f"{ALPHA}/releases/{ns}/web/resources")).json()
    assert {(o["kind"], o["name"]) for o in owned} >= {
        ("Deployment", "web-demo"),
        ("Service", "web-demo"),
    }

    audit = await (await helm_console.get("/api/v1/audit", headers=ADMIN)).json()
    assert (audit[0]["action"], audit[0]["cluster"], audit[0]["target"]) == (
        "helm.install",
        "alpha",
        f"{ns}/web",
    )
    timed = value(
        await scrape(helm_console),
        "console_helm_operation_seconds_count",
        operation="install",
        outcome="success",
    )
    assert timed >= 1


async def test_upgrade_rollback_and_history(helm_console: Client, sim: Simulator) -> None:
    ns = await fresh_namespace(sim)
    assert (await _install(helm_console, ns)).status == 201
    base = f"{ALPHA}/releases/{ns}/web"
    upgrade = {"chartRef": "r/demo", "version": "0.2.0", "values": {"replicaCount": 3}}
    resp = await helm_console.post(f"{base}/upgrade", json=upgrade, headers=ADMIN)
    assert resp.status == 200, await resp.text()
    upgraded = await resp.json()
    assert (upgraded["version"], upgraded["chart"]["metadata"]["version"]) == (2, "0.2.0")

    dry = await helm_console.post(
        f"{base}/rollback", json={"revision": 1, "dryRun": True}, headers=ADMIN
    )
    assert dry.status == 200, await dry.text()
    assert (await dry.json())["info"]["description"] == "Dry run complete: rollback to 1"
    history = await (await helm_console.get(f"{base}/history")).json()
    assert [r["version"] for r in history] == [1, 2]  # the dry run stored nothing

    resp = await helm_console.post(f"{base}/rollback", json={"revision": 1}, headers=ADMIN)
    assert resp.status == 200, await resp.text()
    rolled = await resp.json()
    assert rolled["version"] == 3
    assert rolled["chart"]["metadata"]["version"] == "0.1.0"
    assert _helm_status(sim, ns, "web")["revision"] == 3
    history = await (await helm_console.get(f"{base}/history")).json()
    assert [(r["version"], r["info"]["status"]) for r in history] == [
        (1, "superseded"),
        (2, "superseded"),
        (3, "deployed"),
    ]


async def test_dry_run_install_stores_nothing_and_is_not_audited(
    helm_console: Client, sim: Simulator
) -> None:
    ns = await fresh_namespace(sim)
    resp = await _install(helm_console, ns, dryRun=True)
    assert resp.status == 200, await resp.text()
    assert "kind: Deployment" in (await resp.json())["manifest"]
    assert (
        await (await helm_console.get(f"{ALPHA}/releases", params={"namespace": ns})).json() == []
    )
    audit = await (await helm_console.get("/api/v1/audit", headers=ADMIN)).json()
    assert all(e["action"] != "helm.install" for e in audit)


async def test_uninstall_removes_the_release(helm_console: Client, sim: Simulator) -> None:
    ns = await fresh_namespace(sim)
    assert (await _install(helm_console, ns)).status == 201
    resp = await helm_console.post(f"{ALPHA}/releases/{ns}/web/uninstall", headers=ADMIN)
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["release"]["info"]["status"] == "uninstalled"
    assert (
        await (await helm_console.get(f"{ALPHA}/releases", params={"namespace": ns})).json() == []
    )
    await assert_problem(
        await helm_console.get(f"{ALPHA}/releases/{ns}/web"), 404, code="release-not-found"
    )


async def test_values_need_the_admin_even_in_open_mode(
    helm_console: Client, sim: Simulator
) -> None:
    ns = await fresh_namespace(sim)
    assert (await _install(helm_console, ns, values={"image": {"tag": "9.9"}})).status == 201
    url = f"{ALPHA}/releases/{ns}/web/values"
    await assert_problem(await helm_console.get(url), 401)
    resp = await helm_console.get(url, headers=ADMIN)
    assert resp.content_type == "application/yaml"
    assert yaml.safe_load(await resp.text()) == {"image": {"tag": "9.9"}}
    every = yaml.safe_load(
        await (await helm_console.get(url, params={"all": "true"}, headers=ADMIN)).text()
    )
    assert every["image"]["tag"] == "9.9"
    assert "replicaCount" in every


async def test_anonymous_callers_get_releases_without_values_or_what_is_rendered_from_them(
    helm_console: Client, sim: Simulator
) -> None:
    ns = await fresh_namespace(sim)
    secret = {"image": {"tag": "s3cret-tag"}}
    assert (await _install(helm_console, ns, values=secret)).status == 201
    one = f"{ALPHA}/releases/{ns}/web"
    reads = [one, f"{one}/history", f"{ALPHA}/releases?namespace={ns}", f"{ALPHA}/releases"]
    for url in reads:
        resp = await helm_console.get(url)
        assert resp.status == 200, url
        text = await resp.text()
        assert "s3cret-tag" not in text, url
        assert '"notes"' not in text, url  # NOTES.txt is rendered from the values too
    anonymous = await (await helm_console.get(one)).json()
    assert not {"config", "manifest", "hooks"} & set(anonymous)
    assert (anonymous["name"], anonymous["info"]["status"]) == ("web", "deployed")
    await assert_problem(await helm_console.get(f"{one}/manifest"), 401)
    # the admin sees all of it
    whole = await (await helm_console.get(one, headers=ADMIN)).json()
    assert whole["config"] == secret
    assert "s3cret-tag" in whole["manifest"]
    assert "notes" in whole["info"]
    history = await (await helm_console.get(f"{one}/history", headers=ADMIN)).json()
    assert "notes" in history[-1]["info"]
    resp = await helm_console.get(f"{one}/manifest", headers=ADMIN)
    assert "s3cret-tag" in await resp.text()


async def test_a_template_bomb_is_stopped_at_the_render_limit(
    api_client: ApiClient, kubeconfig: Path, tmp_path: Path, chart_repo: ChartRepo, sim: Simulator
) -> None:
    bomb = tmp_path / "bomb-0.1.0.tgz"
    bomb.write_bytes(build_chart(tmp_path, "bomb", templates={"loop.yaml": LOOP}))
    chart_repo.archives["bomb"] = bomb
    chart_repo.set_index(index_document(chart_repo.archives))
    data = tmp_path / "console"
    write_repositories(data, {"r": chart_repo.url})
    settings = make_settings(data, "helm.charts.render-timeout=1")
    app = create_app(settings, environ={"KUBECONFIG": str(kubeconfig)})
    app[OUTBOUND_ALLOW] = LOOPBACK
    client = await api_client(app)
    ns = await fresh_namespace(sim)
    body = {"releaseName": "boom", "namespace": ns, "chartRef": "r/bomb"}
    for dry_run in (True, False):
        resp = await client.post(
            f"{ALPHA}/releases", json=body | {"dryRun": dry_run}, headers=ADMIN
        )
        await assert_problem(resp, 422, code="render-timeout")
    assert await (await client.get(f"{ALPHA}/releases", params={"namespace": ns})).json() == []


async def test_failures_are_helm_failed_with_helms_message(
    helm_console: Client, sim: Simulator
) -> None:
    ns = await fresh_namespace(sim)
    assert (await _install(helm_console, ns)).status == 201
    problem = await assert_problem(await _install(helm_console, ns), 400, code="helm-failed")
    assert "web" in problem["detail"]
    audit = await (await helm_console.get("/api/v1/audit", headers=ADMIN)).json()
    assert (audit[0]["action"], audit[0]["outcome"]) == ("helm.install", "failure")

    missing = await helm_console.post(
        f"{ALPHA}/releases/{ns}/web/rollback", json={"revision": 7}, headers=ADMIN
    )
    await assert_problem(missing, 404)
    await assert_problem(await _install(helm_console, "no-such-ns", name="x"), 404)


async def test_writes_need_the_admin_and_a_known_cluster(helm_console: Client) -> None:
    body = {"releaseName": "x", "namespace": "default", "chartRef": "r/demo"}
    await assert_problem(await helm_console.post(f"{ALPHA}/releases", json=body), 401)
    await assert_problem(
        await helm_console.get("/api/v1/clusters/nope/helm/releases"), 404, code="unknown-cluster"
    )
    bad = {**body, "releaseName": "Not_A_Name"}
    await assert_problem(await helm_console.post(f"{ALPHA}/releases", json=bad, headers=ADMIN), 400)


async def test_chart_catalogue_lists_the_repositories_charts(helm_console: Client) -> None:
    charts = await (await helm_console.get(f"{ALPHA}/charts")).json()
    assert {(c["repo"], c["name"], c["chartVersion"]) for c in charts} == {
        ("r", "r/demo", "0.2.0"),
        ("r", "r/other", "2.3.4"),
    }
    found = await (await helm_console.get(f"{ALPHA}/charts", params={"query": "OTHER"})).json()
    assert [c["name"] for c in found] == ["r/other"]


async def test_health_names_helm_releases_left_pending_on_the_registered_clusters(
    helm_console: Client, sim: Simulator
) -> None:
    ns = await fresh_namespace(sim)
    assert (await _install(helm_console, ns)).status == 201
    await leave_pending(sim, ns, "web")
    details = await stuck_details(helm_console, "helmReleases")  # UP: news, not unreadiness
    assert details["stuck"] == [
        {"cluster": "alpha", "namespace": ns, "name": "web", "status": "pending-install"}
    ]
    assert details["clusters"] == {"alpha": {"checked": True}, "beta": {"checked": True}}
    assert "uninstall a pending install" in details["recovery"]
