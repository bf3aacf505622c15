"""``/ws/exec`` against a living simulator with a real WebSocket client: stdin as text frames,
stdout and stderr told apart, the exit code, attach, refusals before the upgrade, credentials in
both modes, the audit entry, and both sides closing each other."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from console.keys import EXEC_SESSIONS
from console.streams import podexec
from console.streams.podexec import ExecRequest, Exit, Output
from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.live_cluster import sim
from tests.console.resources_support import eventually, kube, seeded_namespace
from tests.console.support import ADMIN, ADMIN_USER, WRONG
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

WS = "/ws/exec"


@pytest.fixture(scope="module")
def ns(sim: Simulator) -> str:
    return seeded_namespace(sim, "exec", _pod("shell"), _pod("prompt", stdin=True))


def _pod(name: str, **container: Any) -> dict[str, Any]:
    script = "while read line; do echo got $line; done" if container else "sleep 3600"
    main = {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", script], **container}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [main]}}  # fmt: skip


async def _running(client: Client, ns: str, pod: str) -> None:
    async def check() -> bool:
        resp = await client.get("/api/v1/clusters/alpha/resources/pods/object",
                                params={"namespace": ns, "name": pod})  # fmt: skip
        statuses = (await resp.json()).get("status", {}).get("containerStatuses") or []
        return any("running" in s.get("state", {}) for s in statuses)

    await eventually(check, what=f"pod {pod} to run")


async def _frames(ws: aiohttp.ClientWebSocketResponse) -> tuple[bytes, bytes, dict[str, Any]]:
    """stdout, stderr and the exit frame, until the console closes the socket."""
    out, err, end = b"", b"", {}
    async with asyncio.timeout(10):
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.BINARY:
                if msg.data[0] == 1:
                    out += msg.data[1:]
                elif msg.data[0] == 2:
                    err += msg.data[1:]
            elif msg.type == aiohttp.WSMsgType.TEXT:
                end = json.loads(msg.data)
    return out, err, end


def _query(ns: str, pod: str, **extra: str) -> dict[str, str]:
    return {"cluster": "alpha", "namespace": ns, "pod": pod, **extra}


async def test_shell_session_streams_and_exit_code(client: Client, ns: str) -> None:
    await _running(client, ns, "shell")
    ws = await client.ws_connect(WS, params=_query(ns, "shell"), headers=ADMIN)
    await ws.send_str("echo hello; echo oops >&2\n")
    await ws.send_str("exit 3\n")
    out, err, end = await _frames(ws)
    assert (out, err) == (b"hello\n", b"oops\n")
    assert (end["type"], end["exitCode"]) == ("exit", 3)
    assert ws.close_code == aiohttp.WSCloseCode.OK

    audit = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    entry = next(e for e in audit if e["action"] == "exec")
    assert entry == entry | {"user": ADMIN_USER, "cluster": "alpha",
                             "target": f"pods/{ns}/shell", "outcome": "success"}  # fmt: skip


async def test_command_stdin_close_and_success(client: Client, ns: str) -> None:
    await _running(client, ns, "shell")
    params = [*_query(ns, "shell").items(), ("command", "cat")]
    ws = await client.ws_connect(WS, params=params, headers=ADMIN)
    await ws.send_str("line one\n")
    await ws.send_bytes(bytes([0]) + b"line two\n")
    await ws.send_bytes(bytes([255, 0]))  # half-close stdin: cat sees its end and exits 0
    out, err, end = await _frames(ws)
    assert (out, err, end["exitCode"]) == (b"line one\nline two\n", b"", 0)


async def test_terminal_has_one_stream(client: Client, ns: str) -> None:
    await _running(client, ns, "shell")
    ws = await client.ws_connect(WS, params=_query(ns, "shell", tty="true"), headers=ADMIN)
    await ws.send_bytes(bytes([4]) + json.dumps({"Width": 120, "Height": 40}).encode())
    await ws.send_str("echo to-err >&2\n")
    await ws.send_str("exit 5\n")
    out, err, end = await _frames(ws)
    assert b"to-err" in out
    assert err == b""
    assert end["exitCode"] == 5


async def test_unknown_program_reports_the_servers_reason(client: Client, ns: str) -> None:
    await _running(client, ns, "shell")
    params = [*_query(ns, "shell").items(), ("command", "no-such-program")]
    ws = await client.ws_connect(WS, params=params, headers=ADMIN)
    _, _, end = await _frames(ws)
    assert end["exitCode"] is None
    assert "executable file not found" in end["message"]


async def test_attach_joins_the_running_process(client: Client, ns: str) -> None:
    await _running(client, ns, "prompt")
    ws = await client.ws_connect(WS, params=_query(ns, "prompt", mode="attach"), headers=ADMIN)
    await ws.send_str("ping\n")
    got = b""
    async with asyncio.timeout(10):
        while b"got ping" not in got:
            msg = await ws.receive()
            assert msg.type == aiohttp.WSMsgType.BINARY, msg
            got += msg.data[1:]
    await ws.close()
    audit = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    assert any(e["action"] == "attach" and e["target"] == f"pods/{ns}/prompt" for e in audit)


async def test_client_leaving_ends_the_upstream_session(client: Client, ns: str) -> None:
    await _running(client, ns, "shell")
    ws = await client.ws_connect(WS, params=_query(ns, "shell"), headers=ADMIN)
    await ws.send_str("echo ready\n")
    assert (await ws.receive()).data == b"\x01ready\n"
    sessions = client.app[EXEC_SESSIONS]
    assert len(sessions) == 1
    await ws.close()
    await eventually(lambda: _empty(sessions), what="the session to close")


async def _empty(sessions: Any) -> bool:
    return len(sessions) == 0


UPGRADE = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
           "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}  # fmt: skip


async def test_refusals_come_before_the_upgrade(client: Client, ns: str) -> None:
    await _running(client, ns, "shell")

    async def handshake(
        headers: dict[str, str] | None = None, **query: str
    ) -> aiohttp.ClientResponse:
        params = _query(ns, "shell") | query
        return await client.get(WS, params=params, headers=UPGRADE | (headers or {}))

    await assert_problem(await handshake(), 401)
    await assert_problem(await handshake(WRONG), 401)
    body = await assert_problem(await handshake(ADMIN, namespace="", pod=""), 400)
    assert "namespace" in body["detail"]
    assert "pod" in body["detail"]
    await assert_problem(await handshake(ADMIN, cluster="nope"), 404, code="unknown-cluster")
    body = await assert_problem(
        await handshake(ADMIN, container="nope"), 400, code="unknown-container"
    )
    assert "main" in body["detail"]
    await assert_problem(await handshake(ADMIN, pod="ghost"), 404, code="cluster-refused")
    await assert_problem(await handshake(ADMIN, mode="x"), 400)
    await assert_problem(await handshake(ADMIN, tty="maybe"), 400)
    body = await assert_problem(
        await client.get(WS, params=_query(ns, "shell"), headers=ADMIN), 400
    )
    assert "Upgrade" in body["detail"]
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await client.ws_connect(WS, params=_query(ns, "shell"))
    assert refused.value.status == 401
    audit = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    failed = [e for e in audit if e["action"] == "exec" and e["outcome"] == "failure"]
    assert any("unknown-container" in (e["detail"] or "") for e in failed)


async def test_closed_mode_and_session_cookie(console_app: ConsoleApp, ns: str) -> None:
    closed = await console_app("security.open-mode=false")
    resp = await closed.post("/api/v1/auth/session", headers=ADMIN)
    assert resp.status == 200, await resp.text()
    ws = await closed.ws_connect(WS, params=_query(ns, "shell"))  # the JSESSIONID cookie
    await ws.send_str("echo via-cookie; exit\n")
    out, _, end = await _frames(ws)
    assert (out, end["exitCode"]) == (b"via-cookie\n", 0)
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await closed.ws_connect(WS, params=_query(ns, "shell"), origin="http://elsewhere.test")
    assert refused.value.status == 403


async def test_v4_fallback_reports_the_exit_code(sim: Simulator, ns: str) -> None:
    """A server that speaks only v4 (no CLOSE): the same session, the exit code from its Status."""
    async with kube(sim) as api:
        wanted = ExecRequest(ns, "shell", command=("sh", "-c", "echo four; exit 4"))
        async with podexec.open_session(api, wanted, protocols=("v4.channel.k8s.io",)) as s:
            assert (s.protocol, s.can_close_stdin) == ("v4.channel.k8s.io", False)
            items = [item async for item in s.output()]
    assert items[:-1] == [Output(b"\x01four\n")]
    assert isinstance(items[-1], Exit)
    assert items[-1].code == 4
