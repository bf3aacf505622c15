"""The connection pool of ``kubeclient.api_client``'s clients, against the simulator: ``~/.netrc``
is not read (kubectl ignores it too; aiohttp's ``trust_env`` read it in a thread for every request
and refused a netrc login for the server beside the bearer token), and the proxy is kubectl's: the
kubeconfig's ``proxy-url``, else ``HTTPS_PROXY`` unless ``NO_PROXY`` exempts the server, through
a loopback CONNECT proxy."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import pytest
import yaml

import kubeclient
from kubesim import Simulator
from tests.kubecreds_support import status_of

PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy")


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    with Simulator(tmp_path_factory.mktemp("sim"), context="pool") as s:
        yield s


@pytest.fixture(autouse=True)
def no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@attrs.define
class ConnectProxy:
    """An HTTP CONNECT proxy on loopback that relays bytes both ways and notes each target."""

    url: str = ""
    targets: list[str] = attrs.field(factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
        assert method == "CONNECT", head
        self.targets.append(target)
        host, port = target.rsplit(":", 1)
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


@pytest.fixture
async def proxy() -> AsyncIterator[ConnectProxy]:
    relay = ConnectProxy()
    server = await asyncio.start_server(relay.handle, "127.0.0.1", 0)
    relay.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server:
        yield relay


@contextlib.asynccontextmanager
async def client_of(sim: Simulator, tmp_path: Path, **cluster: str) -> AsyncIterator[Any]:
    """A client of the simulator's kubeconfig, its cluster entry given ``cluster``'s keys."""
    document = yaml.safe_load(sim.kubeconfig_path.read_text())
    document["clusters"][0]["cluster"].update(cluster)
    config = kubeclient.parse(yaml.safe_dump(document), source="test")
    client = await kubeclient.api_client(config, sim.context, workdir=tmp_path / "credentials")
    try:
        yield client
    finally:
        await client.close()


async def test_a_netrc_entry_for_the_server_is_not_used(
    sim: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password not-the-token\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    async with client_of(sim, tmp_path) as client:
        assert [await status_of(client) for _ in range(3)] == [200, 200, 200]


async def test_the_environment_proxy_carries_requests(
    sim: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proxy: ConnectProxy
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    async with client_of(sim, tmp_path) as client:
        assert await status_of(client) == 200
    assert proxy.targets == [sim.url.removeprefix("https://")]


async def test_no_proxy_exempts_the_server(
    sim: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proxy: ConnectProxy
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    async with client_of(sim, tmp_path) as client:
        assert await status_of(client) == 200
    assert proxy.targets == []


async def test_the_kubeconfig_proxy_url_wins_over_the_environment(
    sim: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proxy: ConnectProxy
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # nothing listens there
    async with client_of(sim, tmp_path, **{"proxy-url": proxy.url}) as client:
        assert await status_of(client) == 200
    assert proxy.targets == [sim.url.removeprefix("https://")]


@pytest.mark.parametrize("named_by", ["environment", "kubeconfig"])
async def test_websocket_upgrades_take_the_proxy_too(
    sim: Simulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    proxy: ConnectProxy,
    named_by: str,
) -> None:
    """As exec and port-forward open them (``console.resources.kubeapi``): through the pool,
    whose default is the proxy (kubernetes-asyncio passes ``proxy-url`` to requests only)."""
    cluster = {"proxy-url": proxy.url} if named_by == "kubeconfig" else {}
    if named_by == "environment":
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    async with client_of(sim, tmp_path, **cluster) as client:
        with pytest.raises(aiohttp.WSServerHandshakeError):  # a plain GET path: no upgrade
            await client.rest_client.pool_manager.ws_connect(
                f"{client.configuration.host}/api/v1/namespaces",
                headers={"Authorization": f"Bearer {sim.token}"},
            )
    assert proxy.targets == [sim.url.removeprefix("https://")]
