"""Runtime clusters: add, edit, remove, restart; refusals before anything is stored; ids."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from console.clusters import ClusterDefinition
from console.keys import CLUSTERS
from kubesim import Simulator
from tests.addresses import free_port
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN, kubeconfig_text
from tests.guards import assert_problem
from tests.typing_support import Client


def definition(sim: Simulator, cluster_id: str | None = "gamma", **extra: Any) -> dict[str, Any]:
    body = {"kubeconfig": kubeconfig_text(sim), **extra}
    if cluster_id is not None:
        body["id"] = cluster_id
    return body


def with_server(sim: Simulator, server: str) -> str:
    doc = yaml.safe_load(kubeconfig_text(sim))
    doc["clusters"][0]["cluster"]["server"] = server
    return yaml.safe_dump(doc)


def stored_ids(data_dir: Path) -> list[str]:
    path = data_dir / "clusters.db"
    if not path.exists():
        return []
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT id FROM clusters ORDER BY id")]


async def ids(client: Client) -> list[str]:
    resp = await client.get("/api/v1/clusters")
    return [c["id"] for c in await resp.json()]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "shared-data"


async def test_add_edit_remove_and_restart(
    console_app: ConsoleApp, sim: Simulator, sim_b: Simulator, data_dir: Path
) -> None:
    client = await console_app(data_dir=data_dir)
    assert await ids(client) == ["alpha", "beta"]  # the list is kept: every change must show
    resp = await client.post(
        "/api/v1/clusters", json=definition(sim_b, name="Gamma"), headers=ADMIN
    )
    assert resp.status == 201
    assert await resp.json() == {
        "id": "gamma",
        "name": "Gamma",
        "masterUrl": sim_b.url,
        "origin": "RUNTIME",
    }
    assert await ids(client) == ["alpha", "beta", "gamma"]

    resp = await client.put("/api/v1/clusters/gamma", json={"name": "Renamed"}, headers=ADMIN)
    assert (await resp.json())["name"] == "Renamed"
    listed = await (await client.get("/api/v1/clusters")).json()
    assert [c["name"] for c in listed if c["id"] == "gamma"] == ["Renamed"]
    resp = await client.put(
        "/api/v1/clusters/gamma", json={"kubeconfig": kubeconfig_text(sim)}, headers=ADMIN
    )
    assert (await resp.json())["masterUrl"] == sim.url
    await client.close()

    client = await console_app(data_dir=data_dir)  # a restart on the same store
    resp = await client.get("/api/v1/clusters/gamma/config")
    config = await resp.json()
    assert config["name"] == "Renamed"
    assert config["masterUrl"] == sim.url
    assert config["context"] == "alpha"
    assert config["origin"] == "RUNTIME"
    assert config["kubeconfigStored"] is True
    assert await ids(client) == ["alpha", "beta", "gamma"]
    resp = await client.delete("/api/v1/clusters/gamma", headers=ADMIN)
    assert resp.status == 204
    assert await ids(client) == ["alpha", "beta"]
    await assert_problem(
        await client.get("/api/v1/clusters/gamma/config"), 404, code="unknown-cluster"
    )
    await client.close()

    client = await console_app(data_dir=data_dir)
    assert await ids(client) == ["alpha", "beta"]
    assert stored_ids(data_dir) == []


async def test_id_defaults_to_the_context_and_name_to_the_id(
    console_app: ConsoleApp, sim_b: Simulator, tmp_path: Path
) -> None:
    client = await console_app(environ={})  # no kubeconfig: only "default" is static
    resp = await client.post("/api/v1/clusters", json=definition(sim_b, None), headers=ADMIN)
    assert await resp.json() == {
        "id": "beta",
        "name": "beta",
        "masterUrl": sim_b.url,
        "origin": "RUNTIME",
    }


async def test_a_context_can_be_chosen(
    console_app: ConsoleApp, kubeconfig: Path, sim_b: Simulator
) -> None:
    client = await console_app()
    body = {"id": "other", "context": "beta", "kubeconfig": kubeconfig.read_text()}
    resp = await client.post("/api/v1/clusters", json=body, headers=ADMIN)
    assert (await resp.json())["masterUrl"] == sim_b.url
    config = await (await client.get("/api/v1/clusters/other/config")).json()
    assert config["context"] == "beta"
    assert config["contexts"] == ["alpha", "beta"]


@pytest.fixture
def closed_port() -> int:
    return free_port()


@pytest.fixture
async def silent_server() -> AsyncIterator[str]:
    """A TCP server that accepts connections and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"https://127.0.0.1:{port}"
    for writer in held:
        writer.close()
    server.close()
    await server.wait_closed()


@pytest.mark.parametrize(
    ("case", "detail"),
    [
        ("not yaml", "not valid YAML"),
        ("not a kubeconfig", "not a kubeconfig"),
        ("missing context", "no context named"),
        ("unreachable", "cannot be reached"),
        ("silent", "did not answer"),
        ("bad token", "credentials"),
        ("wrong CA", "TLS"),
        ("exec plugin", "exec"),
        ("file reference", "certificate-authority"),
    ],
)
async def test_unusable_definitions_are_refused_and_nothing_is_stored(
    console_app: ConsoleApp,
    sim: Simulator,
    sim_b: Simulator,
    data_dir: Path,
    closed_port: int,
    silent_server: str,
    case: str,
    detail: str,
) -> None:
    doc = yaml.safe_load(kubeconfig_text(sim))
    body: dict[str, Any] = {"id": "broken", "kubeconfig": kubeconfig_text(sim)}
    if case == "not yaml":
        body["kubeconfig"] = "clusters: [unclosed"
    elif case == "not a kubeconfig":
        body["kubeconfig"] = "kind: Pod\n"
    elif case == "missing context":
        body["context"] = "nowhere"
    elif case == "unreachable":
        body["kubeconfig"] = with_server(sim, f"https://127.0.0.1:{closed_port}")
    elif case == "silent":
        body["kubeconfig"] = with_server(sim, silent_server)
    elif case == "bad token":
        doc["users"][0]["user"]["token"] = "not-the-token"
        body["kubeconfig"] = yaml.safe_dump(doc)
    elif case == "wrong CA":
        other = yaml.safe_load(kubeconfig_text(sim_b))["clusters"][0]["cluster"]
        doc["clusters"][0]["cluster"]["certificate-authority-data"] = other[
            "certificate-authority-data"
        ]
        body["kubeconfig"] = yaml.safe_dump(doc)
    elif case == "exec plugin":
        doc["users"][0]["user"] = {"exec": {"command": "/bin/true", "apiVersion": "x"}}
        body["kubeconfig"] = yaml.safe_dump(doc)
    elif case == "file reference":
        doc["clusters"][0]["cluster"]["certificate-authority"] = "/etc/hostname"
        body["kubeconfig"] = yaml.safe_dump(doc)
    client = await console_app("clusters.probe-timeout-seconds=0.5", data_dir=data_dir)
    problem = await assert_problem(
        await client.post("/api/v1/clusters", json=body, headers=ADMIN),
        400,
        code="invalid-cluster",
    )
    assert detail in problem["detail"]
    assert await ids(client) == ["alpha", "beta"]
    assert stored_ids(data_dir) == []


async def test_a_failed_edit_changes_nothing(
    console_app: ConsoleApp, sim: Simulator, sim_b: Simulator, closed_port: int
) -> None:
    client = await console_app()
    await client.post("/api/v1/clusters", json=definition(sim_b), headers=ADMIN)
    body = {"kubeconfig": with_server(sim, f"https://127.0.0.1:{closed_port}")}
    resp = await client.put("/api/v1/clusters/gamma", json=body, headers=ADMIN)
    await assert_problem(resp, 400, code="invalid-cluster")
    config = await (await client.get("/api/v1/clusters/gamma/config")).json()
    assert config["masterUrl"] == sim_b.url


async def test_conflicts_and_unknown_ids(console_app: ConsoleApp, sim_b: Simulator) -> None:
    client = await console_app()
    await client.post("/api/v1/clusters", json=definition(sim_b), headers=ADMIN)
    for taken in ("gamma", "alpha"):
        resp = await client.post("/api/v1/clusters", json=definition(sim_b, taken), headers=ADMIN)
        await assert_problem(resp, 409, code="cluster-conflict")
    resp = await client.put("/api/v1/clusters/alpha", json={"name": "x"}, headers=ADMIN)
    await assert_problem(resp, 409, code="cluster-conflict")
    await assert_problem(
        await client.delete("/api/v1/clusters/beta", headers=ADMIN), 409, code="cluster-conflict"
    )
    for method in ("put", "delete"):
        kwargs: dict[str, Any] = {"json": {"name": "x"}} if method == "put" else {}
        resp = await getattr(client, method)("/api/v1/clusters/nope", headers=ADMIN, **kwargs)
        await assert_problem(resp, 404, code="unknown-cluster")
    await assert_problem(
        await client.get("/api/v1/clusters/nope/config"), 404, code="unknown-cluster"
    )
    resp = await client.put("/api/v1/clusters/gamma", json={"id": "other"}, headers=ADMIN)
    await assert_problem(resp, 400, code="invalid-request")
    resp = await client.put("/api/v1/clusters/gamma", json={"kubeconfig": ""}, headers=ADMIN)
    await assert_problem(resp, 400, code="invalid-cluster")


async def test_bad_bodies_are_refused_with_the_rule_they_break(
    console_app: ConsoleApp, sim: Simulator
) -> None:
    client = await console_app()
    body: Mapping[str, object]
    for body in ({}, {"kubeconfig": ""}, {"kubeconfig": "  \n"}, {"name": "x"}):
        # an unusable definition, as the contract's error table names it
        resp = await client.post("/api/v1/clusters", json=body, headers=ADMIN)
        await assert_problem(resp, 400, code="invalid-cluster")
    for body in (
        {"kubeconfig": 3},
        {"kubeconfig": "x", "id": "a/b"},
        {"kubeconfig": "x", "extra": 1},
    ):
        resp = await client.post("/api/v1/clusters", json=body, headers=ADMIN)
        await assert_problem(resp, 400, code="invalid-request")


async def test_contexts_of_a_posted_kubeconfig(
    console_app: ConsoleApp, kubeconfig: Path, sim: Simulator, sim_b: Simulator
) -> None:
    client = await console_app()
    text = kubeconfig.read_text()
    for kwargs in (
        {"json": {"kubeconfig": text}},
        {"data": text, "headers": {"Content-Type": "application/yaml", **ADMIN}},
    ):
        kwargs.setdefault("headers", ADMIN)
        resp = await client.post("/api/v1/clusters/contexts", **kwargs)
        body = await resp.json()
        assert body["currentContext"] == "alpha"
        assert [(c["name"], c["server"]) for c in body["contexts"]] == [
            ("alpha", sim.url),
            ("beta", sim_b.url),
        ]
        assert sim.token not in await resp.text()
    resp = await client.post("/api/v1/clusters/contexts", json={"kubeconfig": "{"}, headers=ADMIN)
    await assert_problem(resp, 400, code="invalid-cluster")
    for empty in ("{}\n", "apiVersion: v1\nkind: Config\ncontexts: []\n"):
        resp = await client.post(
            "/api/v1/clusters/contexts",
            data=empty,
            headers={**ADMIN, "Content-Type": "application/yaml"},
        )
        body = await assert_problem(resp, 400, code="invalid-cluster")
        assert "no contexts" in body["detail"]
    assert await ids(client) == ["alpha", "beta"]


async def test_the_kubeconfig_is_never_returned_or_logged(
    console_app: ConsoleApp, sim: Simulator, sim_b: Simulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = await console_app()
    texts = []
    calls = [
        ("post", "/api/v1/clusters", definition(sim_b)),
        ("put", "/api/v1/clusters/gamma", definition(sim_b, name="G")),
        (
            "put",
            "/api/v1/clusters/gamma",
            {"kubeconfig": with_server(sim_b, "https://127.0.0.1:1")},
        ),
        ("post", "/api/v1/clusters", definition(sim_b, "bad id!")),
        ("post", "/api/v1/clusters/contexts", {"kubeconfig": kubeconfig_text(sim_b)}),
        ("get", "/api/v1/clusters", None),
        ("get", "/api/v1/clusters/gamma/config", None),
        ("get", "/api/v1/clusters/alpha/config", None),
        ("get", "/api/v1/about", None),
        ("get", "/api/v1/audit", None),
    ]
    for method, path, body in calls:
        resp = await getattr(client, method)(path, json=body, headers=ADMIN)
        texts.append(await resp.text())
    registry = client.app[CLUSTERS]
    reprs = repr(registry.get("gamma")) + repr(registry.get("alpha"))
    reprs += repr(ClusterDefinition("x", "x", None, kubeconfig_text(sim_b)))
    secrets = [
        sim.token,
        sim_b.token,
        yaml.safe_load(kubeconfig_text(sim_b))["clusters"][0]["cluster"][
            "certificate-authority-data"
        ][:40],
    ]
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for secret in secrets:
        for text in [*texts, logged, reprs]:
            assert secret not in text


async def test_the_config_view_after_a_restart_probes_the_server(
    console_app: ConsoleApp, sim_b: Simulator, data_dir: Path
) -> None:
    client = await console_app(data_dir=data_dir)
    await client.post("/api/v1/clusters", json=definition(sim_b), headers=ADMIN)
    await client.close()
    client = await console_app(data_dir=data_dir)
    config = await (await client.get("/api/v1/clusters/gamma/config")).json()
    assert (config["serverVersion"], config["simulator"]) == ("v1.32.4", True)
