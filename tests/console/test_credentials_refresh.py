"""A cluster whose kubeconfig user is the real exec plugin ``tests/execplugin.py``, minting
ServiceAccount tokens or client certificates that live a few seconds, on a living simulator that
refuses expired credentials with 401 and cuts every watch after 3 s: a watch and an exec session
through the console keep working across many expiries (the watch reconnecting with fresh tokens),
new sessions keep opening, the plugin runs again, and a 401 causes exactly one renewal and one
retry, never a loop.

The issue's own scale (a credential that expires every 5 s, a 60 s watch and a 60 s exec session,
new exec sessions opened along the way) is one test that runs them all at once, so it costs the
suite 60 s of one worker, not several minutes.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from console.app import create_app
from console.keys import WATCHES
from kubesim import Simulator
from tests.conftest import ApiClient
from tests.console.live_support import SseReader, open_stream
from tests.console.resources_support import eventually, seeded_namespace
from tests.console.support import ADMIN, make_settings
from tests.guards import assert_problem
from tests.kubecreds_support import Plugin, exec_kubeconfig, exec_user, grant, sim_request
from tests.typing_support import Client

ACCOUNT = "console-creds/plugin"
BASE = "/api/v1/clusters/alpha"
#: The issue's scale: a 60 s watch and exec session on credentials that expire every 5 s.
LONG_RUN_S = 60.0


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    folder = tmp_path_factory.mktemp("sim-alpha")
    with Simulator(
        folder,
        context="alpha",
        nodes=1,
        min_token_seconds=1,
        max_watch_seconds=3,
        client_certificates=True,
    ) as live:
        asyncio.run(grant(live, ACCOUNT))
        yield live


@pytest.fixture(scope="module")
def ns(sim: Simulator) -> str:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "shell"},
           "spec": {"containers": [{"name": "main", "image": "busybox:1.36",
                                    "command": ["sh", "-c", "sleep 3600"]}]}}  # fmt: skip
    web = {"name": "app", "image": "ghcr.io/wharf-demo/web:1.0",
           "ports": [{"name": "http", "containerPort": 8080}]}  # fmt: skip
    server = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
              "spec": {"containers": [web]}}  # fmt: skip
    return seeded_namespace(sim, "creds", pod, server)


async def console_with(
    api_client: ApiClient, sim: Simulator, tmp_path: Path, **plugin: Any
) -> tuple[Client, Plugin]:
    traces = Plugin(tmp_path / "plugin")
    user = exec_user(sim, traces, account=ACCOUNT, **plugin)
    kubeconfig = exec_kubeconfig(sim, tmp_path / "kubeconfig", user)
    settings = make_settings(tmp_path / "console", "clusters.warm-up=false")
    app = create_app(settings, environ={"KUBECONFIG": str(kubeconfig)})
    return await api_client(app), traces


async def test_a_60s_watch_and_a_60s_exec_session_outlive_5s_credentials(
    api_client: ApiClient, sim: Simulator, ns: str, tmp_path: Path
) -> None:
    client, plugin = await console_with(api_client, sim, tmp_path, seconds=5)
    await eventually(lambda: _running(client, ns, "shell"), what="the pod to run")
    stream = await open_stream(client, f"{BASE}/resources/configmaps/objects/watch", namespace=ns)
    query = {"cluster": "alpha", "namespace": ns, "pod": "shell"}
    ws = await client.ws_connect("/ws/exec", params=query, headers=ADMIN)
    started = time.monotonic()

    async def watching() -> int:
        sent = 0
        while time.monotonic() - started < LONG_RUN_S:
            await _created_and_seen(sim, stream, ns, f"long-{sent}")
            sent += 1
            await asyncio.sleep(2)
        return sent

    async def typing() -> int:
        ticks = 0
        while time.monotonic() - started < LONG_RUN_S:
            await ws.send_str(f"echo long {ticks}\n")
            assert await _stdout(ws) == f"long {ticks}\n".encode()
            ticks += 1
            await asyncio.sleep(2)
        return ticks

    async def opening() -> int:
        """A new exec session every 8 s (each after at least one more expiry) still opens."""
        opened = 0
        while time.monotonic() - started < LONG_RUN_S - 8:
            await asyncio.sleep(8)
            again = await client.ws_connect("/ws/exec", params=query, headers=ADMIN)
            await again.send_str(f"echo again {opened}\n")
            assert await _stdout(again) == f"again {opened}\n".encode()
            await again.close()
            opened += 1
        return opened

    sent, ticks, opened = await asyncio.gather(watching(), typing(), opening())
    await ws.send_str("exit 0\n")
    await ws.close()
    assert time.monotonic() - started >= LONG_RUN_S
    # Every change was seen and every line echoed, one every 2 s or so, for the whole run.
    assert sent >= 20
    assert ticks >= 20
    assert opened >= 6
    # Twelve expiries: the plugin ran again for the watch's reconnects (renewed at half life).
    assert plugin.runs() >= LONG_RUN_S / 5
    watch = next(iter(client.app[WATCHES].watches.values()))
    assert watch.connects >= 15  # cut every 3 s by the simulator, each reconnect authenticated


async def _created_and_seen(sim: Simulator, stream: SseReader, ns: str, name: str) -> None:
    """Create ConfigMap ``name`` at the simulator and wait for the watch stream to deliver it."""
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    await sim_request(sim, "POST", f"/api/v1/namespaces/{ns}/configmaps", cm)
    event = await stream.until("ADDED", timeout=8)
    while event.json()["metadata"]["name"] != name:
        event = await stream.until("ADDED", timeout=8)


async def _running(client: Client, ns: str, pod: str) -> bool:
    resp = await client.get(f"{BASE}/resources/pods/object", params={"namespace": ns, "name": pod})
    statuses = (await resp.json()).get("status", {}).get("containerStatuses") or []
    return any("running" in s.get("state", {}) for s in statuses)


async def test_plugin_client_certificates_serve_a_watch_and_exec_handshakes_across_expiries(
    api_client: ApiClient, sim: Simulator, ns: str, tmp_path: Path
) -> None:
    client, plugin = await console_with(api_client, sim, tmp_path, mode="cert")
    await eventually(lambda: _running(client, ns, "shell"), what="the pod to run")
    stream = await open_stream(client, f"{BASE}/resources/configmaps/objects/watch", namespace=ns)
    for i in range(3):  # ~7 s: 2 s certificates, the watch cut every 3 s
        await _created_and_seen(sim, stream, ns, f"cert-{i}")
        await asyncio.sleep(2.2)
    watch = next(iter(client.app[WATCHES].watches.values()))
    assert watch.connects >= 2  # reconnected with a later certificate
    query = {"cluster": "alpha", "namespace": ns, "pod": "shell"}
    ws = await client.ws_connect("/ws/exec", params=query, headers=ADMIN)
    await ws.send_str("echo certified\n")
    assert await _stdout(ws) == b"certified\n"
    await ws.close()
    assert plugin.runs() >= 3  # a new certificate after each expiry
    assert list((tmp_path / "console" / "credentials").iterdir()) == []  # keys only loaded


@pytest.mark.parametrize("mode", ["", "cert"])  # a token, or a client certificate
async def test_a_port_forward_opened_after_expiry_connects_with_a_fresh_token(
    api_client: ApiClient, sim: Simulator, ns: str, tmp_path: Path, mode: str
) -> None:
    client, plugin = await console_with(api_client, sim, tmp_path, mode=mode)

    async def ready() -> bool:
        resp = await client.get(f"{BASE}/resources/pods/object",
                                params={"namespace": ns, "name": "web"})  # fmt: skip
        conditions = (await resp.json()).get("status", {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    await eventually(ready, what="the web pod to be ready")
    body = {"kind": "Pod", "namespace": ns, "name": "web", "remotePort": 8080}
    resp = await client.post(f"{BASE}/port-forwards", json=body, headers=ADMIN)
    assert resp.status == 201, await resp.text()
    port = (await resp.json())["localPort"]
    before = plugin.runs()
    await asyncio.sleep(2.1)  # the upstream tunnel is opened at the first connection: after expiry
    url = f"http://127.0.0.1:{port}/hello"
    async with aiohttp.ClientSession() as http, asyncio.timeout(10), http.get(url) as answer:
        assert answer.status == 200
    assert plugin.runs() > before


async def _stdout(ws: aiohttp.ClientWebSocketResponse) -> bytes:
    async with asyncio.timeout(10):
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.BINARY and msg.data[0] == 1:
                return bytes(msg.data[1:])
            if msg.type == aiohttp.WSMsgType.TEXT:
                raise AssertionError(f"the session ended: {json.loads(msg.data)}")
    raise AssertionError("the socket closed")


async def test_a_401_renews_once_and_retries_once(
    api_client: ApiClient, sim: Simulator, ns: str, tmp_path: Path
) -> None:
    # The plugin claims an hour, but its tokens die after 2 s: only the server's 401 tells.
    client, plugin = await console_with(api_client, sim, tmp_path, claim=3600)
    path = f"{BASE}/resources/configmaps"
    assert (await client.get(path, params={"namespace": ns})).status == 200
    assert plugin.runs() == 1
    await asyncio.sleep(2.5)
    results = await asyncio.gather(*(client.get(path, params={"namespace": ns}) for _ in range(5)))
    assert [r.status for r in results] == [200] * 5
    assert plugin.runs() == 2  # five refused requests, one renewal


async def test_a_token_refused_again_is_an_error_not_a_loop(
    api_client: ApiClient, sim: Simulator, ns: str, tmp_path: Path
) -> None:
    client, plugin = await console_with(api_client, sim, tmp_path, mode="bad", claim=3600)
    resp = await client.get(f"{BASE}/resources/configmaps", params={"namespace": ns})
    await assert_problem(resp, 401, code="cluster-refused")
    assert plugin.runs() == 2  # the first token, then one renewal after the 401; no more


async def test_leftovers_of_a_killed_run_are_swept_at_start(
    api_client: ApiClient, sim: Simulator, tmp_path: Path
) -> None:
    credentials = tmp_path / "console" / "credentials"
    (credentials / "kube-abc123").mkdir(parents=True)
    (credentials / "kube-abc123" / "certificate-authority").write_text("left behind")
    client, _ = await console_with(api_client, sim, tmp_path)
    assert list(credentials.iterdir()) == []
    assert (await client.get(f"{BASE}/resources/namespaces")).status == 200
    assert list(credentials.iterdir()) == []  # certificates live there only while loaded
