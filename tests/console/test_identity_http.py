"""Impersonation through the console's HTTP API, on a simulator that enforces RBAC: the admin and
the anonymous visitor reach the cluster as themselves (Impersonate headers), refusals are the
cluster's own 403 ``cluster-refused``, watches refuse a person who may not list, the setting is decided by the console's own rights and shown, and audit entries say
who the cluster saw."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.db import open_database
from console.clusters.store import SCHEMA
from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.identity_support import bind, binding, unbind
from tests.console.resources_support import fresh_namespace, kube, unique
from tests.console.support import ADMIN, ADMIN_USER, kubeconfig_text
from tests.guards import assert_problem
from tests.typing_support import Client

PODS = "/api/v1/clusters/alpha/resources/pods"
CONFIGMAPS = "/api/v1/clusters/alpha/resources/configmaps"
ON = "clusters.impersonate=on"


@pytest.fixture(scope="module")
def ns(sim: Simulator) -> str:
    return asyncio.run(fresh_namespace(sim, "who"))


@pytest.fixture
def admin_may_edit(sim: Simulator, ns: str) -> Iterator[None]:
    """The console's admin user bound to ``edit`` in ``ns`` for one test."""
    name = unique("admin-edit")
    subject = {"kind": "User", "name": ADMIN_USER}

    async def grant() -> None:
        async with kube(sim) as api:
            await bind(api, binding(name, "edit", subject, namespace=ns))

    async def revoke() -> None:
        async with kube(sim) as api:
            await unbind(api, ns, name)

    asyncio.run(grant())
    yield
    asyncio.run(revoke())


def _cm(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


async def _apply(client: Client, ns: str, name: str) -> int:
    manifest = {**_cm(name), "metadata": {"name": name, "namespace": ns}}
    resp = await client.post("/api/v1/clusters/alpha/apply", json=manifest, headers=ADMIN)
    return resp.status


async def test_the_admin_acts_as_itself_and_is_refused_what_rbac_refuses(
    console_app: ConsoleApp, ns: str, tmp_path: Path
) -> None:
    client = await console_app(ON, data_dir=tmp_path / "console")
    problem = await assert_problem(
        await client.get(PODS, params={"namespace": ns}, headers=ADMIN), 403, code="cluster-refused"
    )
    assert f'User "{ADMIN_USER}" cannot list resource "pods"' in problem["detail"]
    await assert_problem(
        await client.post(f"{CONFIGMAPS}/{ns}/x/delete", headers=ADMIN), 403, code="cluster-refused"
    )
    trail = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    assert trail[0]["user"] == ADMIN_USER
    assert trail[0]["impersonated"] is True
    assert trail[0]["outcome"] == "failure"
    await client.close()  # the durable trail is flushed
    async with open_database(f"sqlite:{tmp_path / 'console' / 'clusters.db'}", SCHEMA) as db:
        rows = await db.fetchall("SELECT username, user_groups, impersonated, action FROM audit")
    assert ("admin", "wharf:admins", 1, "delete") in [tuple(r) for r in rows]


async def test_with_a_rolebinding_the_admin_may_what_it_grants(
    console_app: ConsoleApp, ns: str, admin_may_edit: None
) -> None:
    client = await console_app(ON)
    resp = await client.get(PODS, params={"namespace": ns}, headers=ADMIN)
    assert resp.status == 200, await resp.text()
    assert await _apply(client, ns, "granted") in (200, 201)
    await assert_problem(await client.get(PODS, headers=ADMIN), 403, code="cluster-refused")


async def test_anonymous_reads_act_as_the_clusters_anonymous(
    console_app: ConsoleApp, ns: str
) -> None:
    client = await console_app(ON)
    problem = await assert_problem(
        await client.get(PODS, params={"namespace": ns}), 403, code="cluster-refused"
    )
    assert "system:anonymous" in problem["detail"]
    off = await console_app()  # the same cluster without impersonation: the console's rights
    assert (await off.get(PODS, params={"namespace": ns})).status == 200


async def test_a_watch_refuses_a_person_who_may_not_list(console_app: ConsoleApp, ns: str) -> None:
    client = await console_app(ON)
    resp = await client.get(f"{CONFIGMAPS}/watch", params={"namespace": ns}, headers=ADMIN)
    problem = await assert_problem(resp, 403, code="cluster-refused")
    assert "cannot list" in problem["detail"]


async def test_the_setting_is_decided_by_the_consoles_rights_and_shown(
    console_app: ConsoleApp, sim: Simulator
) -> None:
    client = await console_app(
        "clusters.impersonate=auto", "clusters.impersonate-contexts=beta=off"
    )
    listed = {c["id"]: c for c in await (await client.get("/api/v1/clusters")).json()}
    assert "impersonate" not in listed["alpha"]  # follows the setting
    assert listed["beta"]["impersonate"] is False
    config = await (await client.get("/api/v1/clusters/alpha/config")).json()
    # The simulators' kubeconfig is system:masters: it may impersonate, so auto turns it on.
    assert (config["impersonateDefault"], config["impersonating"]) == ("auto", True)
    config = await (await client.get("/api/v1/clusters/beta/config")).json()
    assert (config["impersonate"], config["impersonating"]) == (False, False)

    body = {"id": "gamma", "kubeconfig": kubeconfig_text(sim), "impersonate": True}
    resp = await client.post("/api/v1/clusters", json=body, headers=ADMIN)
    assert resp.status == 201, await resp.text()
    assert (await resp.json())["impersonate"] is True
    resp = await client.put("/api/v1/clusters/gamma", json={"impersonate": False}, headers=ADMIN)
    assert (await resp.json())["impersonate"] is False


async def test_a_runtime_clusters_choice_survives_a_restart(
    console_app: ConsoleApp, sim: Simulator, tmp_path_factory: pytest.TempPathFactory, ns: str
) -> None:
    data_dir = tmp_path_factory.mktemp("store")
    client = await console_app(ON, data_dir=data_dir)
    body = {"id": "own", "kubeconfig": kubeconfig_text(sim), "impersonate": False}
    assert (await client.post("/api/v1/clusters", json=body, headers=ADMIN)).status == 201
    await client.close()
    client = await console_app(ON, data_dir=data_dir)
    config = await (await client.get("/api/v1/clusters/own/config")).json()
    assert (config["impersonate"], config["impersonating"]) == (False, False)
    resp = await client.get("/api/v1/clusters/own/resources/pods", params={"namespace": ns})
    assert resp.status == 200  # the console's own rights on this one cluster


async def test_helm_acts_as_the_person(
    console_app: ConsoleApp, ns: str, admin_may_edit: None
) -> None:
    client = await console_app(ON)
    releases = "/api/v1/clusters/alpha/helm/releases"
    resp = await client.get(releases, params={"namespace": ns}, headers=ADMIN)
    assert resp.status == 200, await resp.text()  # edit in ns: Helm's secrets there are readable
    problem = await assert_problem(await client.get(releases, headers=ADMIN), 403)
    assert f'User "{ADMIN_USER}" cannot list resource "secrets"' in problem["detail"]
    off = await console_app()  # the console's own identity lists every namespace
    assert (await off.get(releases, headers=ADMIN)).status == 200
