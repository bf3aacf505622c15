"""The values library: admin-only in open mode, checked YAML, atomic files, usable by name in
install and upgrade."""

from __future__ import annotations

from pathlib import Path

from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.helm_support import chart_archives, chart_repo, helm_console
from tests.console.resources_support import fresh_namespace
from tests.console.support import ADMIN
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["chart_archives", "chart_repo", "helm_console"]
LIB = "/api/v1/helm/values"
YAML = {**ADMIN, "Content-Type": "application/yaml"}


async def test_every_method_needs_the_admin_even_in_open_mode(helm_console: Client) -> None:
    await assert_problem(await helm_console.get(LIB), 401)
    await assert_problem(await helm_console.get(f"{LIB}/prod"), 401)
    await assert_problem(await helm_console.put(f"{LIB}/prod", data="a: 1"), 401)
    await assert_problem(await helm_console.delete(f"{LIB}/prod"), 401)


async def test_save_read_list_replace_delete(helm_console: Client, tmp_path: Path) -> None:
    resp = await helm_console.put(f"{LIB}/prod", data="replicaCount: 2\n", headers=YAML)
    assert resp.status == 201, await resp.text()
    assert (await resp.json())["name"] == "prod"
    resp = await helm_console.put(f"{LIB}/prod", data="replicaCount: 3\n", headers=YAML)
    assert resp.status == 200
    resp = await helm_console.get(f"{LIB}/prod", headers=ADMIN)
    assert resp.content_type == "application/yaml"
    assert await resp.text() == "replicaCount: 3\n"
    body = {"name": "staging", "content": "image:\n  tag: '2.0'\n"}
    assert (await helm_console.put(LIB, json=body, headers=ADMIN)).status == 201
    listed = await (await helm_console.get(LIB, headers=ADMIN)).json()
    assert [(f["name"], f["size"]) for f in listed] == [("prod", 16), ("staging", 20)]
    files = sorted(p.name for p in (tmp_path / "console" / "helm" / "values").iterdir())
    assert files == ["prod.yaml", "staging.yaml"]  # no temporary file left behind

    assert (await helm_console.delete(f"{LIB}/prod", headers=ADMIN)).status == 204
    await assert_problem(
        await helm_console.get(f"{LIB}/prod", headers=ADMIN), 404, code="values-not-found"
    )
    audit = await (await helm_console.get("/api/v1/audit", headers=ADMIN)).json()
    assert [e["action"] for e in audit[:2]] == ["helm.values.delete", "helm.values.save"]


async def test_bad_files_are_refused_and_nothing_is_written(helm_console: Client) -> None:
    bad = await helm_console.put(f"{LIB}/broken", data="a: [1, 2\n", headers=YAML)
    problem = await assert_problem(bad, 400)
    assert "line" in problem["detail"]
    await assert_problem(await helm_console.put(f"{LIB}/alist", data="- 1\n", headers=YAML), 400)
    await assert_problem(await helm_console.put(f"{LIB}/..x", data="a: 1", headers=YAML), 400)
    assert await (await helm_console.get(LIB, headers=ADMIN)).json() == []


async def test_size_and_count_caps(console_app: ConsoleApp) -> None:
    client = await console_app("helm.values.max-size=32", "helm.values.max-files=1")
    big = "key: " + "x" * 40 + "\n"
    await assert_problem(await client.put(f"{LIB}/big", data=big, headers=YAML), 413)
    assert (await client.put(f"{LIB}/one", data="a: 1\n", headers=YAML)).status == 201
    full = await client.put(f"{LIB}/two", data="a: 2\n", headers=YAML)
    await assert_problem(full, 409, code="values-library-full")
    assert (await client.put(f"{LIB}/one", data="a: 3\n", headers=YAML)).status == 200


async def test_install_and_upgrade_use_a_file_by_name(helm_console: Client, sim: Simulator) -> None:
    ns = await fresh_namespace(sim)
    saved = "replicaCount: 2\nimage:\n  tag: '1.0'\n"
    assert (await helm_console.put(f"{LIB}/base", data=saved, headers=YAML)).status == 201
    releases = "/api/v1/clusters/alpha/helm/releases"
    install = {
        "releaseName": "web",
        "namespace": ns,
        "chartRef": "r/demo",
        "valuesName": "base",
        "values": {"image": {"pullPolicy": "Always"}},
    }
    resp = await helm_console.post(releases, json=install, headers=ADMIN)
    assert resp.status == 201, await resp.text()
    assert (await resp.json())["config"] == {
        "replicaCount": 2,
        "image": {"tag": "1.0", "pullPolicy": "Always"},
    }
    upgrade = {"chartRef": "r/demo", "valuesName": "base", "values": {"replicaCount": 4}}
    resp = await helm_console.post(f"{releases}/{ns}/web/upgrade", json=upgrade, headers=ADMIN)
    assert (await resp.json())["config"] == {"replicaCount": 4, "image": {"tag": "1.0"}}
    missing = {**install, "releaseName": "other", "valuesName": "nope"}
    resp = await helm_console.post(releases, json=missing, headers=ADMIN)
    await assert_problem(resp, 404, code="values-not-found")
