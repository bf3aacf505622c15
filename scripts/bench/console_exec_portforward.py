"""Benchmark: an exec echo round trip through ``/ws/exec``, and an HTTP GET through a console
port-forward, each against the same thing done directly.

Targets (issue 14): the exec round trip at most 1.5x the same round trip made with
kubernetes_asyncio's stream client straight to the simulator; a GET through a console
port-forward at most 1.5x the same GET through ``kubectl port-forward``. Both baselines are
measured in the same run against the same simulated cluster (one node alive), round by round in turns with the console (which goes first alternates), so that both see the same
load on a shared machine; the console runs in a child (this script with ``--serve-console``). The
simulator runs in a child of its own (``--serve-sim``), as ``wharf kubesim`` does beside the
services: a user's client does not share a process, and its interpreter lock, with the API server;
``--simulator thread`` runs it on a thread of this process instead, as earlier runs did.
The exec rounds also go through a bare WebSocket relay in a child process of its own (``--serve-
relay``): its ratio is the floor any proxy hop reaches here, whatever its code. The console's and
the relay's CPU per round (``/proc``, user + system) are printed too: on a shared machine they vary
less than times do. Every process runs on the event loop ``wharf serve`` would pick
(``WHARF_EVENT_LOOP``), and says which.
Run: ``.venv/bin/python scripts/bench/console_exec_portforward.py [--rounds 200]``
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import attrs
from harness import (
    announce_ready,
    console_bench_main,
    cpu_seconds,
    free_port,
    kube_api,
    loop_name,
    percentile,
    read_ready,
    running_console,
    start_child,
    stop_child,
)
from report import Report

from common import eventloop
from kubesim import Simulator

NAMESPACE = "bench"
PASSWORD = "bench"
#: The echo program: one line back per line in (the simulator's ``cat`` answers only at EOF).
ECHO = ["sh", "-c", 'while read -r line; do echo "$line"; done']
PROTOCOLS = ("v4.channel.k8s.io",)
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


async def echo_once(ws: aiohttp.ClientWebSocketResponse, line: bytes) -> float:
    """Send ``line`` on stdin to the echo program; seconds until stdout brought it back."""
    started = time.perf_counter()
    await ws.send_bytes(b"\x00" + line)
    got = b""
    while not got.endswith(line):
        msg = await ws.receive()
        if msg.type != aiohttp.WSMsgType.BINARY:
            raise RuntimeError(f"unexpected frame {msg.type}")
        if msg.data[:1] == b"\x01":
            got += msg.data[1:]
    return time.perf_counter() - started


async def get_once(http: aiohttp.ClientSession, port: int) -> float:
    """Seconds for one GET to ``127.0.0.1:port`` (the pod's server closes each connection)."""
    started = time.perf_counter()
    async with http.get(f"http://127.0.0.1:{port}/") as resp:
        await resp.read()
        assert resp.status == 200
    return time.perf_counter() - started


Round = Callable[[int], Awaitable[float]]


@attrs.frozen
class Paired:
    ours: list[float]
    theirs: list[float]
    cpu: float  # the console's CPU seconds per round
    floor: list[float] = attrs.field(factory=list)  # the bare relay's, where it was measured
    floor_cpu: float = 0.0  # the bare relay's CPU seconds per round


async def paired(
    rounds: int, ours: Round, theirs: Round, *, pid: int, floor: tuple[Round, int] | None = None
) -> Paired:
    """Times of ``rounds`` rounds of each, interleaved (which goes first rotates), so that all
    see the same load on a shared machine; the first 5 rounds of each warm up and are not kept.
    ``pid``: the console's process, whose CPU time over the kept rounds is reported; ``floor``:
    the bare relay's rounds and process, likewise."""
    runs = [ours, theirs, *([floor[0]] if floor is not None else [])]
    pids = [pid, *([floor[1]] if floor is not None else [])]
    times: list[list[float]] = [[] for _ in runs]
    cpu = [0.0 for _ in pids]
    for i in range(rounds + 5):
        if i == 5:
            cpu = [cpu_seconds(p) for p in pids]
        for j in range(len(runs)):
            which = (i + j) % len(runs)
            took = await runs[which](i)
            if i >= 5:
                times[which].append(took)
    used = [(cpu_seconds(p) - before) / rounds for p, before in zip(pids, cpu, strict=True)]
    if floor is None:
        return Paired(times[0], times[1], used[0])
    return Paired(times[0], times[1], used[0], times[2], used[1])


def serve_relay(upstream: str, token: str, cafile: str, port: int) -> None:
    """Child side: the thinnest WebSocket relay there can be, in a process of its own like the
    console (no authentication, audit or checks): ``/relay?path=`` opens ``path`` at the
    simulator and passes frames on unchanged both ways. Its ratio is the floor of any proxy hop."""
    import ssl

    from aiohttp import web

    context = ssl.create_default_context(cafile=cafile)

    async def relay(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        url, auth = upstream + request.query["path"], {"Authorization": f"Bearer {token}"}
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(url, protocols=PROTOCOLS, headers=auth, ssl=context) as up,
        ):

            async def down() -> None:
                async for msg in up:
                    await ws.send_bytes(msg.data)

            task = asyncio.create_task(down())
            async for msg in ws:
                await up.send_bytes(msg.data)
            task.cancel()
        return ws

    app = web.Application()
    app.router.add_get("/relay", relay)
    loop = eventloop.new_event_loop(eventloop.chosen(os.environ))
    web.run_app(app, host="127.0.0.1", port=port, print=announce_ready, access_log=None, loop=loop)


@attrs.frozen
class Cluster:
    """Where the simulated cluster answers: its URL, admin token, CA file and kubeconfig."""

    url: str
    token: str
    cafile: str
    kubeconfig: Path


def bench_simulator(directory: Path, port: int, token: str) -> Simulator:
    """The simulator every layout of :func:`bench` runs: one node, ``token``, on ``port``."""
    return Simulator(directory, token=token, port=port, context="bench", nodes=1,
                     event_loop=eventloop.chosen(os.environ))  # fmt: skip


def serve_sim(directory: str, port: int, token: str) -> None:
    """Child side: :func:`bench_simulator`; prints ``ready`` and its event loop once it answers,
    then runs until stdin closes."""
    sim = bench_simulator(Path(directory), port, token)
    sim.start()
    print(f"ready {sim.event_loop}", flush=True)
    sys.stdin.read()
    sim.stop()


@contextlib.asynccontextmanager
async def simulated_cluster(directory: Path, where: str) -> AsyncIterator[Cluster]:
    """The bench's simulator, on a thread of this process or in a child process of its own."""
    port, token = free_port(), secrets.token_urlsafe(24)
    cluster = Cluster(f"https://127.0.0.1:{port}", token, str(directory / "ca.crt"),
                      directory / "kubeconfig")  # fmt: skip
    if where == "thread":
        with bench_simulator(directory, port, token) as sim:
            print(f"simulator: {sim.call(lambda _: loop_name())} event loop, on a thread of the "
                  "benchmark's process", file=sys.stderr, flush=True)  # fmt: skip
            yield cluster
        return
    child, announced = await asyncio.to_thread(
        start_child, __file__, "--serve-sim", str(directory), str(port), token
    )
    print(
        f"simulator: {announced} event loop, in a process of its own", file=sys.stderr, flush=True
    )
    try:
        yield cluster
    finally:
        stop_child(child)


@contextlib.asynccontextmanager
async def relay_exec(
    cluster: Cluster, session: aiohttp.ClientSession
) -> AsyncIterator[tuple[aiohttp.ClientWebSocketResponse, int]]:
    """The echo program through :func:`serve_relay` (a child process), and that process's id."""
    port = free_port()
    args = [cluster.url, cluster.token, cluster.cafile, str(port)]
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve-relay", *args, stdout=subprocess.PIPE
    )
    try:
        assert child.stdout is not None
        read_ready((await asyncio.wait_for(child.stdout.readline(), 30)).decode(), "relay")
        query = [("container", "main"), ("stdin", "true"), ("stdout", "true"),
                 ("stderr", "true"), ("tty", "false"), *(("command", c) for c in ECHO)]  # fmt: skip
        path = f"/api/v1/namespaces/{NAMESPACE}/pods/shell/exec?{urlencode(query)}"
        async with session.ws_connect(
            f"http://127.0.0.1:{port}/relay", params={"path": path}
        ) as ws:
            yield ws, child.pid
    finally:
        child.terminate()
        await child.wait()


@contextlib.asynccontextmanager
async def exec_direct(api: Any) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
    """The echo program through kubernetes_asyncio's stream client (``WsApiClient``)."""
    from kubernetes_asyncio import client
    from kubernetes_asyncio.stream import WsApiClient

    async with WsApiClient(configuration=api.configuration) as ws_api:
        core: Any = client.CoreV1Api(ws_api)
        manager = await core.connect_get_namespaced_pod_exec(
            "shell", NAMESPACE, command=ECHO, stdin=True, stdout=True, stderr=True,
            tty=False, _preload_content=False,
        )  # fmt: skip
        async with manager as ws:
            yield ws


async def exec_rounds(
    api: Any, cluster: Cluster, session: aiohttp.ClientSession, base: str, rounds: int, *, pid: int
) -> Paired:
    params = [("cluster", "bench"), ("namespace", NAMESPACE), ("pod", "shell")]
    params += [("command", part) for part in ECHO]
    async with (
        exec_direct(api) as direct,
        session.ws_connect(f"{base}/ws/exec", params=params, headers=AUTH) as console,
        relay_exec(cluster, session) as (relay, relay_pid),
    ):
        return await paired(
            rounds,
            lambda i: echo_once(console, f"c{i}\n".encode()),
            lambda i: echo_once(direct, f"d{i}\n".encode()),
            pid=pid,
            floor=(lambda i: echo_once(relay, f"r{i}\n".encode()), relay_pid),
        )


@contextlib.asynccontextmanager
async def forward_console(session: aiohttp.ClientSession, base: str) -> AsyncIterator[int]:
    body = {"kind": "deployment", "namespace": NAMESPACE, "name": "web", "remotePort": 8080}
    url = f"{base}/api/v1/clusters/bench/port-forwards"
    async with session.post(url, json=body, headers=AUTH) as resp:
        assert resp.status == 201, await resp.text()
        forward = await resp.json()
    try:
        yield forward["localPort"]
    finally:
        await session.post(f"{url}/{forward['id']}/stop", headers=AUTH)


@contextlib.asynccontextmanager
async def forward_kubectl(kubeconfig: Path) -> AsyncIterator[int]:
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
        yield port
    finally:
        child.terminate()
        await child.wait()


async def forward_rounds(
    session: aiohttp.ClientSession, base: str, kubeconfig: Path, rounds: int, *, pid: int
) -> Paired:
    async with (
        forward_kubectl(kubeconfig) as theirs,
        forward_console(session, base) as ours,
        aiohttp.ClientSession() as http,
    ):
        return await paired(
            rounds, lambda _: get_once(http, ours), lambda _: get_once(http, theirs), pid=pid
        )


def report(what: str, found: Paired, baseline: str, out: Report) -> None:
    ours, theirs, cpu = found.ours, found.theirs, found.cpu
    mine, base = statistics.median(ours), statistics.median(theirs)
    print(f"{what}: console median {mine * 1000:.2f} ms (p95 {percentile(ours, 0.95) * 1000:.2f}), "
          f"{baseline} median {base * 1000:.2f} ms (p95 {percentile(theirs, 0.95) * 1000:.2f}); "
          f"ratio {mine / base:.2f}x (target <= 1.5x); console CPU {cpu * 1e6:.0f} us per round")  # fmt: skip
    if found.floor:
        floor = statistics.median(found.floor)
        print(f"  the same through a bare WebSocket relay in its own process (the floor of any "
              f"proxy hop): median {floor * 1000:.2f} ms, ratio {floor / base:.2f}x; relay CPU "
              f"{found.floor_cpu * 1e6:.0f} us per round")  # fmt: skip
        # The floor of any proxy hop is the target's baseline where it was measured.
        out.figure(f"{what}, console / bare relay", mine / floor, "x", at_most=1.1,
                   baseline=f"bare WebSocket relay: {floor * 1000:.2f} ms")  # fmt: skip
    else:
        out.figure(f"{what}, console / {baseline}", mine / base, "x", at_most=1.5,
                   baseline=f"{baseline}: {base * 1000:.2f} ms")  # fmt: skip


async def bench(args: argparse.Namespace) -> None:
    print(f"benchmark: {loop_name()} event loop", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "sim").mkdir()
        async with simulated_cluster(Path(tmp) / "sim", args.simulator) as cluster:
            execs, gets = await measure(cluster, args.rounds, tmp)
    out: Report = args.report
    report("exec echo round trip", execs, "kubernetes_asyncio stream client direct", out)
    report("HTTP GET through a port-forward", gets, "kubectl port-forward", out)


async def measure(cluster: Cluster, rounds: int, tmp: str) -> tuple[Paired, Paired]:
    """Seed the cluster, start the console over it, and time both kinds of rounds."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with kube_api(cluster.kubeconfig) as api:
        print("seeding the cluster", file=sys.stderr, flush=True)
        await seed(api)
        with running_console(__file__, cluster.kubeconfig, port, f"{tmp}/console") as console:
            async with aiohttp.ClientSession() as session:
                print("measuring: exec", file=sys.stderr, flush=True)
                execs = await exec_rounds(api, cluster, session, base, rounds, pid=console.pid)
                print("measuring: port-forward", file=sys.stderr, flush=True)
                gets = await forward_rounds(
                    session, base, cluster.kubeconfig, rounds, pid=console.pid
                )
    return execs, gets


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument(
        "--simulator", choices=("process", "thread"), default="process",
        help="run the simulator in a child process (default) or on a thread of this one",
    )  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve-relay"]:
        serve_relay(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif sys.argv[1:2] == ["--serve-sim"]:
        serve_sim(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        console_bench_main(
            __doc__,
            bench,
            options,
            name="console_exec_portforward",
            quick={"rounds": 100},
            # Smoke: the simulator on a thread of this process, one process fewer to start.
            smoke={"rounds": 3, "simulator": "thread"},
        )
