"""Runtime clusters pass the address guard before anything is sent to them (issue 39 item 15).

Adding a cluster through the API used to probe ``/version`` of any address: other loopback
services of the host, the cloud metadata service. A runtime cluster's server now goes through
``common.netguard`` as Helm repositories do, with ``console.clusters.allow-addresses`` for the
private places clusters live. Only loopback is ever dialled here: a trap server counts what
reaches it; the other decisions are the guard's, checked without sending anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web
from pytest_aiohttp import AiohttpServer

import kubeclient
from common.config import ConfigError
from common.netguard import AddressPolicy, AddressRefused, GuardingResolver, parse_allowed
from console.app import create_app
from console.clusters import connect
from console.errors import InvalidCluster
from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN, make_settings
from tests.console.test_clusters import with_server
from tests.guards import assert_problem

#: An allow-list that admits nothing these tests dial (the test settings allow 127.0.0.1).
ELSEWHERE = "clusters.allow-addresses=10.99.0.0/16"


async def trap(aiohttp_server: AiohttpServer) -> tuple[str, list[str]]:
    """A loopback server that answers like an API server and records every path asked."""
    hits: list[str] = []

    async def anything(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.json_response({"gitVersion": "v1.32.0"})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", anything)
    server = await aiohttp_server(app)
    return f"http://127.0.0.1:{server.port}", hits


@pytest.mark.parametrize(
    ("server", "named"),
    [
        ("loopback", "a loopback address"),
        ("https://localhost:6443", "loopback host name"),
        ("https://169.254.169.254", "a metadata address"),
        ("https://[fd00:ec2::254]", "a metadata address"),
        ("https://169.254.10.1:6443", "a link-local address"),
        ("https://2130706433:6443", "loopback"),  # 127.0.0.1 spelt as one number
    ],
)
async def test_a_cluster_at_a_refused_address_is_not_probed(
    console_app: ConsoleApp,
    sim: Simulator,
    aiohttp_server: AiohttpServer,
    server: str,
    named: str,
) -> None:
    url, hits = await trap(aiohttp_server)
    client = await console_app(ELSEWHERE)
    body = {"id": "probe", "kubeconfig": with_server(sim, url if server == "loopback" else server)}
    resp = await client.post("/api/v1/clusters", json=body, headers=ADMIN)
    problem = await assert_problem(resp, 400, code="invalid-cluster")
    assert named in problem["detail"]
    assert "console.clusters.allow-addresses" in problem["detail"]
    assert hits == []
    listed = await (await client.get("/api/v1/clusters")).json()
    assert "probe" not in [c["id"] for c in listed]


async def test_an_allowed_loopback_cluster_is_probed(
    console_app: ConsoleApp, sim: Simulator, aiohttp_server: AiohttpServer
) -> None:
    url, hits = await trap(aiohttp_server)
    client = await console_app()  # the test settings allow 127.0.0.1
    body: dict[str, Any] = {"id": "probe", "kubeconfig": with_server(sim, url)}
    await client.post("/api/v1/clusters", json=body, headers=ADMIN)
    assert hits[:1] == ["/version"]  # the guard let it through to the probe


@pytest.mark.parametrize(
    ("policy", "server", "refused"),
    [
        (AddressPolicy(), "https://10.1.2.3:6443", False),  # clusters live on private networks
        (AddressPolicy(), "https://[fd12::1]:6443", False),
        (AddressPolicy(block_private_networks=True), "https://10.1.2.3:6443", True),
        (
            AddressPolicy(block_private_networks=True, allow=parse_allowed("10.1.0.0/16")),
            "https://10.1.2.3:6443",
            False,
        ),
        (AddressPolicy(allow=parse_allowed("127.0.0.1:6443")), "https://127.0.0.1:6444", True),
        (AddressPolicy(), "ftp://10.1.2.3", True),
    ],
)
async def test_the_guards_decision(policy: AddressPolicy, server: str, refused: bool) -> None:
    if refused:
        with pytest.raises(InvalidCluster):
            await connect.check_server(policy, server)
    else:
        await connect.check_server(policy, server)


def test_an_allow_list_entry_for_metadata_stops_start_up(tmp_path: Any) -> None:
    settings = make_settings(tmp_path, "clusters.allow-addresses=169.254.0.0/16")
    with pytest.raises(ConfigError, match=r"console\.clusters\.allow-addresses"):
        create_app(settings)


async def test_a_name_is_checked_again_when_the_client_connects(
    sim: Simulator, tmp_path: Path
) -> None:
    """What a name resolves to may change after the add (DNS rebinding): a runtime cluster's client
    checks the addresses at every connection, before anything is sent."""
    config = kubeclient.parse(with_server(sim, f"https://localhost:{sim.port}"))
    client = await kubeclient.api_client(
        config,
        sim.context,
        workdir=tmp_path / "credentials",
        resolver=GuardingResolver(AddressPolicy()),
    )
    try:
        with pytest.raises(AddressRefused, match="loopback"):
            await client.call_api("/version", "GET", _preload_content=False)
    finally:
        await client.close()


async def test_a_posted_kubeconfig_may_not_name_a_proxy(
    console_app: ConsoleApp, sim: Simulator
) -> None:
    doc = yaml.safe_load(with_server(sim, sim.url))
    doc["clusters"][0]["cluster"]["proxy-url"] = "http://127.0.0.1:3128"
    client = await console_app()
    body = {"id": "proxied", "kubeconfig": yaml.safe_dump(doc)}
    resp = await client.post("/api/v1/clusters", json=body, headers=ADMIN)
    problem = await assert_problem(resp, 400, code="invalid-cluster")
    assert "proxy-url" in problem["detail"]
