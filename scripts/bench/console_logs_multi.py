"""Benchmark: one multi-source log stream of 24 pods writing 1,000 lines/s in all.

Target (issue 14): every line delivered, lag p99 < 1 s. A Deployment of 24 pods logs at the
simulator's log cadence (``Timings.log_interval``, set to 24 ms: 41.7 lines/s per pod); one client
follows ``/logs/stream`` of the Deployment for ``--seconds``. Afterwards every pod's log is read
straight from the simulator (with timestamps) and compared line by line with what the stream
delivered over the measured window: from 2 s after the stream announced all 24 sources (their 24
upstream log requests connect meanwhile; ``tailLines=0`` means a source starts where its request
found the log), to 2 s before the end (so that late lines are not counted as lost). Lag is the
client's receipt time minus the line's kubelet timestamp (the same clock: everything runs on this
machine), over the window; the lag of the lines before it (start-up) is printed apart. The stream
holds a line until every source has sent a later one, at most 0.25 s (``logmux.WINDOW_S``).
Run: ``.venv/bin/python scripts/bench/console_logs_multi.py [--seconds 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import attrs
from harness import (
    console_bench_main,
    cpu_seconds,
    free_port,
    kube_api,
    percentile,
    running_console,
)
from report import Report

from kubesim import Simulator
from kubesim.machinery.timings import Timings

NAMESPACE = "bench"
PODS = 24
RATE = 1000  # lines per second, all pods together
#: Seconds at the end of the run whose lines are not counted (they may still be on their way).
TAIL_S = 2.0
#: Seconds after all sources were announced before the window opens (their requests connect).
SETTLE_S = 2.0


def stamp_seconds(stamp: str) -> float:
    """Epoch seconds of a kubelet RFC 3339 timestamp (nanoseconds, ``Z``)."""
    whole, _, rest = stamp.rstrip("Z").partition(".")
    moment = datetime.fromisoformat(whole + "+00:00").timestamp()
    return moment + (float("0." + rest) if rest else 0.0)


@attrs.define
class Received:
    lines: list[tuple[str, str, str]] = attrs.field(factory=list)  # (pod, time, text)
    received: list[float] = attrs.field(factory=list)  # when each line came
    followed_at: float | None = None  # when the stream first followed every pod


async def seed(api: Any) -> None:
    from kubernetes_asyncio import client

    core: Any = client.CoreV1Api(api)
    apps: Any = client.AppsV1Api(api)
    await core.create_namespace({"metadata": {"name": NAMESPACE}})
    web = {"name": "web", "image": "nginx:1.27"}
    template = {"metadata": {"labels": {"app": "logger"}}, "spec": {"containers": [web]}}
    spec = {"replicas": PODS, "selector": {"matchLabels": {"app": "logger"}}, "template": template}
    body = {"metadata": {"name": "logger"}, "spec": spec}
    await apps.create_namespaced_deployment(NAMESPACE, body)
    for _ in range(600):
        pods = await core.list_namespaced_pod(NAMESPACE)
        if sum(p.status.phase == "Running" for p in pods.items) == PODS:
            return
        await asyncio.sleep(0.05)
    raise SystemExit("the logging pods did not start")


async def follow(session: aiohttp.ClientSession, url: str, seconds: float) -> Received:
    """Read the stream for ``seconds``: every log line, when it came, and when all pods joined."""
    got = Received()
    event = ""
    async with session.get(url) as resp:
        assert resp.status == 200, await resp.text()
        with_deadline = asyncio.timeout(seconds)
        try:
            async with with_deadline:
                async for raw in resp.content:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        record(got, event, json.loads(line[5:]), time.time())
        except TimeoutError:
            pass
    return got


def record(got: Received, event: str, data: dict[str, Any], now: float) -> None:
    if event == "sources":
        if got.followed_at is None and len(data["sources"]) == PODS:
            got.followed_at = now
    elif event == "log":
        got.lines.append((data["pod"], data["time"], data["line"]))
        got.received.append(now)


async def truth(api: Any, pods: list[str], since: float, until: float) -> set[tuple[str, str, str]]:
    """Every line the simulator holds for ``pods`` stamped within [since, until]."""
    from kubernetes_asyncio import client

    core: Any = client.CoreV1Api(api)
    found = set()
    for pod in pods:
        text = await core.read_namespaced_pod_log(pod, NAMESPACE, timestamps=True)
        for line in text.splitlines():
            stamp, _, body = line.partition(" ")
            if since <= stamp_seconds(stamp) <= until:
                found.add((pod, stamp, body))
    return found


async def bench(args: argparse.Namespace) -> None:
    check_seconds(args)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    query = f"namespace={NAMESPACE}&resourceId=deployments&name=logger&tailLines=0"
    url = f"{base}/api/v1/clusters/bench/logs/stream?{query}"
    timings = Timings(log_interval=PODS / RATE)
    with (
        tempfile.TemporaryDirectory() as tmp,
        Simulator(Path(tmp), context="bench", nodes=1, timings=timings) as sim,
    ):
        async with kube_api(sim.kubeconfig_path) as api:
            print("seeding the cluster", file=sys.stderr, flush=True)
            await seed(api)
            with running_console(__file__, sim.kubeconfig_path, port, f"{tmp}/console") as console:
                timeout = aiohttp.ClientTimeout(total=None)
                async with aiohttp.ClientSession(timeout=timeout) as session:
                    print(f"following for {args.seconds:.0f} s", file=sys.stderr, flush=True)
                    cpu, own = cpu_seconds(console.pid), time.process_time()
                    started = time.time()
                    got = await follow(session, url, args.seconds)
                    cpu, own = cpu_seconds(console.pid) - cpu, time.process_time() - own
                    ended = time.time()
            if got.followed_at is None:
                raise SystemExit("the stream never followed all 24 pods")
            pods = sorted({pod for pod, _, _ in got.lines})
            since, until = got.followed_at + args.settle, ended - args.tail
            expected = await truth(api, pods, since, until)
    report(got, expected, since, until, len(pods), args.report)
    print(f"CPU: console {cpu / (ended - started) * 100:.0f}% of a core, this process (the "
          f"simulator and the client) {own / (ended - started) * 100:.0f}%")  # fmt: skip


def report(
    got: Received,
    expected: set[tuple[str, str, str]],
    since: float,
    until: float,
    pods: int,
    out: Report,
) -> None:
    lags: list[float] = []
    early: list[float] = []
    for (_, stamp, _), now in zip(got.lines, got.received, strict=True):
        at = stamp_seconds(stamp)
        if at < since:
            early.append(now - at)
        elif at <= until:
            lags.append(now - at)
    delivered = {r for r in got.lines if since <= stamp_seconds(r[1]) <= until}
    duplicates = sum(n - 1 for n in Counter(got.lines).values() if n > 1)
    missing = len(expected - delivered)
    rate = len(expected) / (until - since)
    lags.sort()
    if not lags:
        raise SystemExit("no line fell in the measured window: follow for longer (--seconds)")
    print(f"multi-source logs: {pods} pods, {rate:.0f} lines/s at the simulator over "
          f"{until - since:.1f} s; {len(delivered)}/{len(expected)} delivered, {missing} missing, "
          f"{duplicates} duplicates, {len(delivered - expected)} not in the pods' logs")  # fmt: skip
    print(f"lag: p50 {percentile(lags, 0.5) * 1000:.0f} ms, p99 {percentile(lags, 0.99) * 1000:.0f} "
          f"ms, max {lags[-1] * 1000:.0f} ms (target p99 < 1000 ms); start-up lines "
          f"({len(early)}) p99 {percentile(early or [0.0], 0.99) * 1000:.0f} ms")  # fmt: skip
    out.figure(f"lines missing of {len(expected)}", missing, "", at_most=0)
    out.figure("lines delivered twice", duplicates, "", at_most=0)
    out.figure(
        f"lag p99, {pods} pods at {rate:.0f} lines/s",
        percentile(lags, 0.99) * 1000,
        "ms",
        at_most=1000,
    )


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--settle", type=float, default=SETTLE_S,
                        help="seconds after all sources joined before the window opens")  # fmt: skip
    parser.add_argument("--tail", type=float, default=TAIL_S,
                        help="seconds at the end whose lines are not counted")  # fmt: skip


def check_seconds(args: argparse.Namespace) -> None:
    """``--seconds`` must leave lines between the settling and the tail margins (the rest of the
    run, as starting follow-ups, is not measured)."""
    shortest = args.settle + args.tail + 2.0
    if args.seconds < shortest:
        raise SystemExit(f"--seconds must be at least {shortest:g} (got {args.seconds:g})")


if __name__ == "__main__":
    console_bench_main(
        __doc__,
        bench,
        options,
        name="console_logs_multi",
        quick={"seconds": 9.0},  # a window of about five seconds: 5,000 lines
        # Smoke: a second and a half of window between half-second margins; figures not judged.
        smoke={"seconds": 3.0, "settle": 0.5, "tail": 0.5},
    )
