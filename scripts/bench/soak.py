"""Benchmark (issue "Trust"): load and soak of all three services, then stream cycles.

1. **Load and soak.** 200 concurrent clients for 60 s over a mix of each service's read endpoints
   (chartsvc, results with a few runs, console over a simulated demo cluster). Targets: 0 errors,
   resident memory of each service grows by < 20 MB from the end of a warm-up to the end of the
   soak; p50/p99 per service printed, with the requests per second.
2. **Stream cycles.** 1,000 connect/read-first-event/disconnect cycles on every stream endpoint
   (results' events, chartsvc's MCP SSE, console's watches of rows and objects, one pod's log
   stream and a Deployment's multi-source log stream). Target: each service's
   ``wharf_asyncio_tasks`` back at its idle level (0 tasks left) within 20 s of the last cycle.
3. **Idle flood.** 2,000 connections from one address (127.0.0.2) that send nothing, held open
   against each service at once, while health is asked from another (127.0.0.1). Target: health
   answers (within 2 s) on every service; the connections past
   ``<service>.server.max-connections-per-address`` are closed on arrival, the rest at the
   header-read timeout.

Every service runs as ``wharf serve`` in a child process, as deployed (access log to a file); the
simulator runs as ``wharf kubesim --scenario demo --speed fast`` in another. The load generator is
this process, so on a small machine it competes for the same cores: the figures are a floor.

Run: ``.venv/bin/python scripts/bench/soak.py [--clients 200] [--seconds 60] [--cycles 1000]
[--idle 2000]``.
Exits 1 when a target is missed. This script must not be imported by the services.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import aiohttp
from harness import child, free_port, percentile, rss_kib, wait_ready
from report import Report, options

from common.serving import raise_open_files_limit

SERVICES = ("chartsvc", "results", "console")
RSS_GROWTH_MB = 20
SETTLE_S = 20
#: Load before the first RSS reading: long enough for every queue and pool to reach its size.
WARM_UP_S = 15
PASSWORD = "soak"
JUNIT = (
    b'<testsuite name="s" tests="3"><testcase classname="c" name="a"/>'
    b'<testcase classname="c" name="b"><failure message="boom">trace</failure></testcase>'
    b'<testcase classname="c" name="c"/></testsuite>'
)


def wharf(*args: str) -> list[str]:
    return [sys.executable, "-m", "wharf", *args]


async def prepare(session: aiohttp.ClientSession, bases: dict[str, str]) -> dict[str, str]:
    """Wait for the services and the demo cluster; give results runs. Returns facts the mix needs."""
    for base in bases.values():
        await wait_ready(session, base)
    for commit in ("a1", "b2", "c3"):
        form = aiohttp.FormData()
        for name, value in (("project", "soak"), ("branch", "main"), ("commit", commit)):
            form.add_field(name, value)
        form.add_field("junit", JUNIT, filename="junit.xml", content_type="text/xml")
        async with session.post(f"{bases['results']}/api/v1/ingest", data=form) as resp:
            if resp.status != 201:
                raise RuntimeError(f"ingest answered {resp.status}: {await resp.text()}")
    # One MCP stream before anything is measured: chartsvc's tool server (open since start-up,
    # a task of its own) has served once, and is part of the idle level the cycles return to.
    await first_event(session, f"{bases['chartsvc']}/sse", {})
    console = f"{bases['console']}/api/v1/clusters/soak"
    pod = ""
    for _ in range(600):  # the demo's shop comes up within seconds at --speed fast
        async with session.get(
            f"{console}/resources/pods/objects", params={"namespace": "shop"}
        ) as resp:
            pods = (await resp.json()) if resp.status == 200 else []
        running = [
            p["metadata"]["name"]
            for p in pods
            if isinstance(p, dict)
            and p["metadata"]["name"].startswith("api-")
            and p.get("status", {}).get("phase") == "Running"
        ]
        if running:
            pod = running[0]
            break
        await asyncio.sleep(0.1)
    if not pod:
        raise RuntimeError("the demo cluster's shop/api pods never ran")
    admin = {"Authorization": aiohttp.encode_basic_auth("admin", PASSWORD)}
    async with session.post(f"{bases['console']}/api/v1/auth/session", headers=admin) as resp:
        if resp.status != 200:
            raise RuntimeError(f"console sign-in answered {resp.status}")
        cookie = resp.cookies["JSESSIONID"].value
    return {"pod": pod, "cookie": cookie}


def read_mix(bases: dict[str, str]) -> list[tuple[str, str]]:
    """(service, URL) of the read endpoints the soak cycles through."""
    c = f"{bases['console']}/api/v1/clusters/soak"
    r = f"{bases['results']}/api/v1"
    return [
        ("chartsvc", f"{bases['chartsvc']}/api/v1/repos"),
        ("chartsvc", f"{bases['chartsvc']}/actuator/health/readiness"),
        ("chartsvc", f"{bases['chartsvc']}/v3/api-docs"),
        ("results", f"{r}/gate?project=soak&branch=main"),
        ("results", f"{r}/projects"),
        ("results", f"{r}/projects/1/trends?branch=main"),
        ("results", f"{r}/projects/1/runs"),
        ("results", f"{bases['results']}/"),
        ("console", f"{bases['console']}/api/v1/clusters"),
        ("console", f"{c}/counts?namespace=shop"),
        ("console", f"{c}/resources/pods/objects?namespace=shop"),
        ("console", f"{c}/resources/deployments?namespace=shop"),
        ("console", f"{c}/nav"),
    ]


async def soak(
    bases: dict[str, str], pids: dict[str, int], *, clients: int, seconds: float, warm_up: float
) -> tuple[dict[str, list[float]], list[str], dict[str, tuple[float, float]]]:
    """Warm-up, RSS, the soak, RSS again. Returns latencies (ms) per URL, errors, RSS."""
    mix = read_mix(bases)
    latencies: dict[str, list[float]] = {url: [] for _, url in mix}
    errors: list[str] = []
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def client(number: int, until: float, record: bool) -> None:
            for _, url in itertools.islice(itertools.cycle(mix), number, None):
                if time.monotonic() >= until:
                    return
                started = time.perf_counter()
                try:
                    async with session.get(url) as resp:
                        await resp.read()
                        if resp.status != 200:
                            errors.append(f"{url} answered {resp.status}")
                except aiohttp.ClientError as exc:
                    errors.append(f"{url}: {type(exc).__name__}")
                if record:
                    latencies[url].append((time.perf_counter() - started) * 1000)

        async def run(duration: float, record: bool) -> None:
            until = time.monotonic() + duration
            await asyncio.gather(*(client(n, until, record) for n in range(clients)))

        await run(warm_up, record=False)
        before = {name: rss_kib(pid)["VmRSS"] / 1024 for name, pid in pids.items()}
        await run(seconds, record=True)
        after = {name: rss_kib(pid)["VmRSS"] / 1024 for name, pid in pids.items()}
    return latencies, errors, {name: (before[name], after[name]) for name in pids}


FLOOD_ADDRESS = "127.0.0.2"


async def idle_flood(bases: dict[str, str], count: int) -> list[tuple[str, int, int, float, float]]:
    """``count`` silent connections per service from ``FLOOD_ADDRESS``; per service: how many
    the server left open, how many it closed on arrival, health's answer time (ms, -1: none) and
    how long until the server had closed the rest (s)."""
    found = []
    for name, base in bases.items():
        port = int(base.rsplit(":", 1)[1])
        held: list[asyncio.StreamWriter] = []
        readers: list[asyncio.StreamReader] = []
        for _ in range(count):
            try:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", port, local_addr=(FLOOD_ADDRESS, 0)
                )
            except OSError:
                break  # this process's own descriptors ran out: the flood is what it is
            readers.append(reader)
            held.append(writer)
        await asyncio.sleep(0.5)
        closed = sum(1 for r in readers if r.at_eof() or r.exception() is not None)
        started = time.perf_counter()
        try:
            async with (
                aiohttp.ClientSession() as session,
                asyncio.timeout(2),
                session.get(f"{base}/actuator/health") as resp,
            ):
                health_ms = (time.perf_counter() - started) * 1000 if resp.ok else -1.0
        except (aiohttp.ClientError, TimeoutError):
            health_ms = -1.0
        started = time.monotonic()
        while time.monotonic() - started < 60 and not all(r.at_eof() for r in readers):
            await asyncio.sleep(0.25)
            for reader in readers:
                if reader.exception() is not None and not reader.at_eof():
                    reader.feed_eof()
        drained = time.monotonic() - started
        for writer in held:
            writer.close()
        found.append((name, len(readers) - closed, closed, health_ms, drained))
    return found


async def gauge(session: aiohttp.ClientSession, base: str, name: str) -> float:
    async with session.get(f"{base}/actuator/prometheus") as resp:
        text = await resp.text()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise RuntimeError(f"{base} has no {name}")


async def first_event(session: aiohttp.ClientSession, url: str, headers: dict[str, str]) -> None:
    """Open the stream, read until its first event (a blank line after data), then leave."""
    async with session.get(url, headers=headers, timeout=aiohttp.ClientTimeout(total=30)) as resp:
        if resp.status != 200:
            raise RuntimeError(f"{url} answered {resp.status}: {await resp.text()}")
        seen_data = False
        async for line in resp.content:
            if line.startswith((b"data:", b"event:")):
                seen_data = True
            elif seen_data and not line.strip():
                return
        raise RuntimeError(f"{url} ended before its first event")


async def cycles(
    bases: dict[str, str], facts: dict[str, str], *, count: int, settle_s: float
) -> list[tuple[str, list[str], float, float, float]]:
    """(service, streams, seconds, idle tasks, tasks left) per service: each of its stream
    endpoints cycled in turn, then one wait for its tasks to settle (the console's watches linger
    5 s after their last subscriber: one wait for its four streams instead of four)."""
    c = f"{bases['console']}/api/v1/clusters/soak"
    signed_in = {"Cookie": f"JSESSIONID={facts['cookie']}"}
    streams: list[tuple[str, str, str, dict[str, str]]] = [
        ("results", "events", f"{bases['results']}/api/v1/events", {}),
        ("chartsvc", "MCP SSE", f"{bases['chartsvc']}/sse", {}),
        ("console", "row watch", f"{c}/resources/pods/watch?namespace=shop", {}),
        ("console", "object watch", f"{c}/resources/pods/objects/watch?namespace=shop", {}),
        ("console", "pod log", f"{c}/pods/shop/{facts['pod']}/log/stream?tailLines=5", signed_in),
        (
            "console",
            "workload logs",
            f"{c}/logs/stream?namespace=shop&resourceId=deployments&name=api&tailLines=5",
            signed_in,
        ),
    ]
    found = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=20)) as session:
        for service in dict.fromkeys(service for service, *_ in streams):
            base = bases[service]
            idle = await gauge(session, base, "wharf_asyncio_tasks")
            started = time.perf_counter()
            labels = []
            for _, label, url, headers in (s for s in streams if s[0] == service):
                turns = iter(range(count))  # shared: count cycles in all
                await asyncio.gather(*(worker(session, url, headers, turns) for _ in range(20)))
                labels.append(label)
            took = time.perf_counter() - started
            left = await settle(session, base, idle, settle_s)
            found.append((service, labels, took, idle, left))
    return found


async def worker(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str], turns: Iterator[int]
) -> None:
    """Takes turns from the shared ``turns`` until none are left: one cycle per turn."""
    for _ in turns:
        await first_event(session, url, headers)


async def settle(session: aiohttp.ClientSession, base: str, idle: float, settle_s: float) -> float:
    """The task gauge once it is back at ``idle`` (or after ``settle_s`` seconds)."""
    deadline = time.monotonic() + settle_s
    now = await gauge(session, base, "wharf_asyncio_tasks")
    while now > idle and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        now = await gauge(session, base, "wharf_asyncio_tasks")
    return now


def report(
    mix: list[tuple[str, str]],
    latencies: dict[str, list[float]],
    errors: list[str],
    rss: dict[str, tuple[float, float]],
    seconds: float,
    streams: list[tuple[str, list[str], float, float, float]],
    count: int,
    flood: list[tuple[str, int, int, float, float]],
    out: Report,
    *,
    settle_s: float,
) -> bool:
    ok = not errors
    print(f"{'service':10} {'requests':>9} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'RSS MB':>13} {'growth':>7}")  # fmt: skip
    for name in SERVICES:
        done = [ms for service, url in mix if service == name for ms in latencies[url]]
        before, after = rss[name]
        growth = after - before
        ok &= growth < RSS_GROWTH_MB
        out.figure(f"{name} RSS growth over the soak", growth, "MB", at_most=RSS_GROWTH_MB)
        print(f"{name:10} {len(done):9d} {len(done) / seconds:7.0f} {_ms(done, 0.5):>7} "
              f"{_ms(done, 0.99):>7} {before:6.1f}→{after:6.1f} {growth:+6.1f}")  # fmt: skip
    print(f"errors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    out.figure("errors under load", len(errors), "errors", at_most=0)
    for _, url in mix:
        done = latencies[url]
        print(f"  {url.split('/', 3)[3]:60.60} p50 {_ms(done, 0.5):>7}  p99 "
              f"{_ms(done, 0.99):>7} ms")  # fmt: skip
    print(f"target: 0 errors, RSS growth < {RSS_GROWTH_MB} MB per service")
    print()
    print(f"{'streams':70} {'cycles/s':>8} {'idle tasks':>10} {'left':>5}")
    for service, labels, took, idle, left in streams:
        ok &= left <= idle
        out.figure(
            f"{service} tasks left after its streams' cycles", left - idle, "tasks", at_most=0
        )
        cycled = count * len(labels)
        named = f"{service}: {', '.join(labels)}"
        print(f"{named:70} {cycled / took:8.0f} {idle:10.0f} {left - idle:+5.0f}")
    print(f"target: 0 tasks left {settle_s:g} s after the last cycle")
    print()
    print(
        f"{'idle flood':10} {'kept open':>9} {'refused':>8} {'health ms':>9} {'all closed s':>12}"
    )
    for name, kept, refused, health_ms, drained in flood:
        ok &= health_ms >= 0
        out.figure(
            f"{name} health under {kept + refused} idle connections",
            health_ms if health_ms >= 0 else float("inf"),
            "ms",
            at_most=2000,
        )
        print(f"{name:10} {kept:9d} {refused:8d} {health_ms:9.1f} {drained:12.1f}")
    print("target: health answers within 2 s under the flood (-1: it did not)")
    return ok


def _ms(latencies: list[float], fraction: float) -> str:
    """A percentile for the table; a smoke run's fraction of a second may leave a slow URL of the
    mix unasked on a loaded machine."""
    return f"{percentile(latencies, fraction):.1f}" if latencies else "-"


async def main_async(args: argparse.Namespace, work: Path, out: Report) -> bool:
    ports = {name: free_port() for name in (*SERVICES, "kubesim")}
    bases = {name: f"http://127.0.0.1:{ports[name]}" for name in SERVICES}
    kubeconfig = work / "kubesim" / "kubeconfig"
    with ExitStack() as stack:
        stack.enter_context(
            child(
                wharf(
                    "kubesim",
                    "--port",
                    str(ports["kubesim"]),
                    "--kubeconfig",
                    str(kubeconfig),
                    "--context",
                    "soak",
                    "--nodes",
                    "2",
                    "--scenario",
                    "demo",
                    "--speed",
                    "fast",
                ),
                dict(os.environ),
                work / "kubesim.log",
            )
        )
        for _ in range(600):
            if kubeconfig.exists():
                break
            await asyncio.sleep(0.05)
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        settings = {
            "chartsvc": [f"chartsvc.data-dir={work / 'chartsvc'}"],
            "results": [f"results.data-dir={work / 'results'}"],
            "console": [
                f"console.data-dir={work / 'console'}",
                "console.clusters.impersonate=off",
                f"console.security.admin.password={PASSWORD}",
            ],
        }
        if args.header_timeout:  # the idle flood waits this out: shorter for a smoke run
            for name in SERVICES:
                settings[name].append(
                    f"{name}.server.header-read-timeout-seconds={args.header_timeout:g}"
                )
        pids = {}
        for name in SERVICES:
            command = wharf("serve", name, "--port", str(ports[name]))
            for setting in settings[name]:
                command += ["--set", setting]
            pids[name] = stack.enter_context(child(command, env, work / f"{name}.log")).pid
        async with aiohttp.ClientSession() as session:
            facts = await prepare(session, bases)
        latencies, errors, rss = await soak(
            bases, pids, clients=args.clients, seconds=args.seconds, warm_up=args.warm_up
        )
        streams = await cycles(bases, facts, count=args.cycles, settle_s=args.settle)
        flood = await idle_flood(bases, args.idle)
        return report(
            read_mix(bases),
            latencies,
            errors,
            rss,
            args.seconds,
            streams,
            args.cycles,
            flood,
            out,
            settle_s=args.settle,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--idle", type=int, default=2000, help="idle connections per service")
    parser.add_argument("--header-timeout", type=float, default=0,
                        help="the services' header-read timeout, seconds (default: theirs)")  # fmt: skip
    parser.add_argument("--warm-up", type=float, default=WARM_UP_S, help="seconds before RSS")
    parser.add_argument("--settle", type=float, default=SETTLE_S,
                        help="seconds a stream's tasks have to end after its cycles")  # fmt: skip
    args = options(
        parser,
        # Quick: the idle flood's held connections end at a 2 s header-read timeout, not the
        # default 15 s it would wait out three times, and there are 1,000 of them, still twice
        # the per-address cap (the figures are the same: health under the flood, the connections
        # past the cap closed on arrival).
        quick={
            "clients": 50,
            "seconds": 8,
            "cycles": 60,
            "idle": 1000,
            "warm_up": 3,
            "header_timeout": 2,
        },
        smoke={
            "clients": 4,
            "seconds": 0.3,
            "cycles": 3,
            "idle": 20,
            "warm_up": 0.2,
            "header_timeout": 0.5,
            # The console's watches linger 5 s after their last subscriber: a smoke run waits
            # for none of it (the tasks left are shown, never judged).
            "settle": 0,
        },
    )
    out = Report.of("soak", args)
    raise_open_files_limit()  # the flood's connections are this process's descriptors too
    with tempfile.TemporaryDirectory(prefix="wharf-soak-") as tmp:
        asyncio.run(main_async(args, Path(tmp), out))
    return out.emit()


if __name__ == "__main__":
    raise SystemExit(main())
