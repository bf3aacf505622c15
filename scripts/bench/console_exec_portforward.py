"""Benchmark: an exec echo round trip through ``/ws/exec``, and an HTTP GET through a console
port-forward, each against the same thing done directly.

Targets (issue 14): the exec round trip at most 1.5x the same round trip made with
kubernetes_asyncio's stream client straight to the simulator; a GET through a console
port-forward at most 1.5x the same GET through ``kubectl port-forward``. Both baselines are
measured in the same run against the same simulated cluster (in this process, one node alive);
the console runs in a child (this script with ``--serve-console``).
Run: ``.venv/bin/python scripts/bench/console_exec_portforward.py [--rounds 200]``
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from harness import free_port, percentile, serve_console, start_console, stop_console

from common.kubesim import Simulator

NAMESPACE = "bench"
PASSWORD = "bench"
#: The echo program: one line back per line in (the simulator's ``cat`` answers only at EOF).
ECHO = ["sh", "-c", 'while read -r line; do echo "$line"; done']
AUTH = {"Authorization": "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()}


async def seed(api: Any) -> None:
    from kubernetes_asyncio import client

    core: Any = client.CoreV1Api(api)
    apps: Any = client.AppsV1Api(api)
    await core.create_namespace({"metadata": {"name": NAMESPACE}})
    shell = {"name": "main", "image": "busybox:1.36", "command": ["sleep", "3600"]}
    await core.create_namespaced_pod(
        NAMESPACE, {"metadata": {"name": "shell"}, "spec": {"containers": [shell]}}
    )
    web = {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 8080}]}
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [web]}}
    spec = {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template}
    await apps.create_namespaced_deployment(NAMESPACE, {"metadata": {"name": "web"}, "spec": spec})
    for _ in range(400):
        pods = await core.list_namespaced_pod(NAMESPACE)
        ready = [
            p
            for p in pods.items
            if any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])
        ]
        if len(ready) == 2:
            return
        await asyncio.sleep(0.05)
    raise SystemExit("the bench pods did not become ready")


async def echo_rounds(ws: aiohttp.ClientWebSocketResponse, rounds: int) -> list[float]:
    """Send ``x<n>`` on stdin to the echo program; seconds until stdout brought it back, per round."""
    times = []
    for i in range(rounds + 5):
        line = f"x{i}\n".encode()
        started = time.perf_counter()
        await ws.send_bytes(b"\x00" + line)
        got = b""
        while not got.endswith(line):
            msg = await ws.receive()
            if msg.type != aiohttp.WSMsgType.BINARY:
                raise RuntimeError(f"unexpected frame {msg.type}")
            if msg.data[:1] == b"\x01":
                got += msg.data[1:]
        if i >= 5:  # the first rounds warm up
            times.append(time.perf_counter() - started)
    return times


async def exec_direct(api: Any, rounds: int) -> list[float]:
    """The same round trip through kubernetes_asyncio's stream client (``WsApiClient``)."""
    from kubernetes_asyncio import client
    from kubernetes_asyncio.stream import WsApiClient

    async with WsApiClient(configuration=api.configuration) as ws_api:
        core: Any = client.CoreV1Api(ws_api)
        manager = await core.connect_get_namespaced_pod_exec(
            "shell", NAMESPACE, command=ECHO, stdin=True, stdout=True, stderr=True,
            tty=False, _preload_content=False,
        )  # fmt: skip
        async with manager as ws:
            return await echo_rounds(ws, rounds)


async def exec_console(session: aiohttp.ClientSession, base: str, rounds: int) -> list[float]:
    params = [("cluster", "bench"), ("namespace", NAMESPACE), ("pod", "shell")]
    params += [("command", part) for part in ECHO]
    async with session.ws_connect(f"{base}/ws/exec", params=params, headers=AUTH) as ws:
        return await echo_rounds(ws, rounds)


async def gets(port: int, rounds: int) -> list[float]:
    """Seconds per GET to ``127.0.0.1:port`` (the pod's server closes each connection)."""
    times = []
    async with aiohttp.ClientSession() as http:
        for i in range(rounds + 5):
            started = time.perf_counter()
            async with http.get(f"http://127.0.0.1:{port}/") as resp:
                await resp.read()
                assert resp.status == 200
            if i >= 5:
                times.append(time.perf_counter() - started)
    return times


async def forward_console(session: aiohttp.ClientSession, base: str, rounds: int) -> list[float]:
    body = {"kind": "deployment", "namespace": NAMESPACE, "name": "web", "remotePort": 8080}
    url = f"{base}/api/v1/clusters/bench/port-forwards"
    async with session.post(url, json=body, headers=AUTH) as resp:
        assert resp.status == 201, await resp.text()
        forward = await resp.json()
    try:
        return await gets(forward["localPort"], rounds)
    finally:
        await session.post(f"{url}/{forward['id']}/stop", headers=AUTH)


async def forward_kubectl(kubeconfig: Path, rounds: int) -> list[float]:
    port = free_port()
    child = await asyncio.create_subprocess_exec(
        "kubectl", "--kubeconfig", str(kubeconfig), "-n", NAMESPACE, "port-forward",
        "deployment/web", f"{port}:8080", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert child.stdout is not None
        line = await asyncio.wait_for(child.stdout.readline(), 30)
        if b"Forwarding from" not in line:
            raise SystemExit(f"kubectl port-forward did not start: {line!r}")
        return await gets(port, rounds)
    finally:
        child.terminate()
        await child.wait()


def report(what: str, ours: list[float], theirs: list[float], baseline: str) -> None:
    mine, base = statistics.median(ours), statistics.median(theirs)
    print(f"{what}: console median {mine * 1000:.2f} ms (p95 {percentile(ours, 0.95) * 1000:.2f}), "
          f"{baseline} median {base * 1000:.2f} ms (p95 {percentile(theirs, 0.95) * 1000:.2f}); "
          f"ratio {mine / base:.2f}x (target <= 1.5x)")  # fmt: skip


async def bench(args: argparse.Namespace) -> None:
    from kubernetes_asyncio import client, config

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with (
        tempfile.TemporaryDirectory() as tmp,
        Simulator(Path(tmp), context="bench", nodes=1) as sim,
    ):
        cfg = client.Configuration()
        await config.load_kube_config(str(sim.kubeconfig_path), client_configuration=cfg)
        async with client.ApiClient(cfg) as api:
            print("seeding the cluster", file=sys.stderr, flush=True)
            await seed(api)
            console = start_console(__file__, sim.kubeconfig_path, port, f"{tmp}/console")
            try:
                async with aiohttp.ClientSession() as session:
                    runs: list[tuple[str, Callable[[], Awaitable[list[float]]]]] = [
                        ("exec direct", lambda: exec_direct(api, args.rounds)),
                        ("exec console", lambda: exec_console(session, base, args.rounds)),
                        (
                            "forward kubectl",
                            lambda: forward_kubectl(sim.kubeconfig_path, args.rounds),
                        ),
                        ("forward console", lambda: forward_console(session, base, args.rounds)),
                    ]
                    found = {}
                    for name, run in runs:
                        print(f"measuring: {name}", file=sys.stderr, flush=True)
                        found[name] = await run()
            finally:
                stop_console(console)
    report("exec echo round trip", found["exec console"], found["exec direct"],
           "kubernetes_asyncio stream client direct")  # fmt: skip
    report("HTTP GET through a port-forward", found["forward console"], found["forward kubectl"],
           "kubectl port-forward")  # fmt: skip


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-console":
        serve_console(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
