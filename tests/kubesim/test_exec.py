"""pods/exec and pods/attach over WebSocket: kubernetes-asyncio (v4) and raw v5 channel framing."""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.stream import WsApiClient

from kubesim import Simulator
from tests.kubesim.livesim import demo_simulator, pods, wait_for


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    yield from demo_simulator(tmp_path_factory.mktemp("kubesim"), nodes=1)


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as s:
        yield s


def frontend(sim: Simulator) -> str:
    return str(wait_for(sim, lambda st: pods(st, "shop", "frontend"))[0]["metadata"]["name"])


async def test_exec_with_kubernetes_asyncio(sim: Simulator, ws_api: WsApiClient) -> None:
    core = client.CoreV1Api(ws_api)
    out = await core.connect_get_namespaced_pod_exec(
        frontend(sim),
        "shop",
        # A list, one command= parameter per word, as the client sends it; its stubs say str.
        command=["sh", "-c", "hostname; echo err >&2; ls /usr/share/nginx/html"],  # type: ignore[arg-type]
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
    )
    lines = out.splitlines()
    assert lines[0] == frontend(sim)
    assert set(lines[1:]) == {"err", "50x.html", "index.html"}


async def _open(
    session: aiohttp.ClientSession,
    sim: Simulator,
    subresource: str,
    protocol: str,
    *command: str,
    **query: str,
) -> aiohttp.ClientWebSocketResponse:
    """A WebSocket to ``subresource`` (exec, attach) of the demo's frontend pod."""
    ctx = ssl.create_default_context(cafile=str(sim.ca_path))
    params = [*query.items(), *(("command", word) for word in command)]
    return await session.ws_connect(
        f"{sim.url}/api/v1/namespaces/shop/pods/{frontend(sim)}/{subresource}",
        params=params,
        protocols=(protocol,),
        headers={"Authorization": f"Bearer {sim.token}"},
        ssl=ctx,
    )


async def _collect(ws: aiohttp.ClientWebSocketResponse) -> dict[int, bytes]:
    got: dict[int, bytes] = {}
    async for msg in ws:
        if msg.type == aiohttp.WSMsgType.BINARY:
            got[msg.data[0]] = got.get(msg.data[0], b"") + msg.data[1:]
    return got


async def test_v5_stdin_close_and_exit_status(
    sim: Simulator, session: aiohttp.ClientSession
) -> None:
    ws = await _open(
        session,
        sim,
        "exec",
        "v5.channel.k8s.io",
        "sh",
        "-c",
        "cat; exit 7",
        stdin="true",
        stdout="true",
        stderr="true",
    )
    assert ws.protocol == "v5.channel.k8s.io"
    await ws.send_bytes(b"\x00hello ")
    await ws.send_bytes(b"\x00world\n")
    await ws.send_bytes(bytes([255, 0]))  # CLOSE stdin: cat sees EOF
    got = await _collect(ws)
    assert got[1] == b"hello world\n"
    status = json.loads(got[3])
    assert status["status"] == "Failure"
    assert status["reason"] == "NonZeroExitCode"
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "7"}]


async def test_tty_resize_and_success_status(
    sim: Simulator, session: aiohttp.ClientSession
) -> None:
    ws = await _open(
        session, sim, "exec", "v4.channel.k8s.io", "sh", stdin="true", stdout="true", tty="true"
    )
    await ws.send_bytes(b"\x04" + json.dumps({"Width": 120, "Height": 40}).encode())
    await ws.send_bytes(b"\x00echo $TERM\r")
    await ws.send_bytes(b"\x00exit\r")
    got = await _collect(ws)
    assert b"xterm\r\n" in got[1]
    assert json.loads(got[3]) == {"metadata": {}, "status": "Success"}


async def test_errors_before_the_upgrade(sim: Simulator, session: aiohttp.ClientSession) -> None:
    ctx = ssl.create_default_context(cafile=str(sim.ca_path))
    headers = {"Authorization": f"Bearer {sim.token}"}

    async def get(path: str, **params: Any) -> tuple[int, Any]:
        async with session.get(sim.url + path, params=params, headers=headers, ssl=ctx) as resp:
            return resp.status, await resp.json()

    status, body = await get(f"/api/v1/namespaces/shop/pods/{frontend(sim)}/exec", stdout="true")
    assert (status, body["message"]) == (
        400,
        "you must specify at least one command for the container",
    )
    status, body = await get("/api/v1/namespaces/shop/pods/nope/exec", command="ls", stdout="true")
    assert status == 404
    crash = wait_for(sim, lambda st: pods(st, "broken", "bad-image"))[0]["metadata"]["name"]
    status, body = await get(
        f"/api/v1/namespaces/broken/pods/{crash}/exec", command="ls", stdout="true"
    )
    assert status == 400
    assert body["message"] == 'unable to upgrade connection: container not found ("app")'


async def test_attach_streams_the_main_process(
    sim: Simulator, session: aiohttp.ClientSession
) -> None:
    ws = await _open(session, sim, "attach", "v4.channel.k8s.io", stdout="true", container="nginx")
    assert (await ws.receive()).data == b"\x01"  # the stream-open marker
    msg = await ws.receive(timeout=5)
    assert msg.data[0] == 1
    assert b'"GET ' in msg.data or b"HTTP/1.1" in msg.data
    await ws.close()
