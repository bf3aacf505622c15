"""Benchmark: 1,000 SSE subscribers on one shared watch, then 1,000 connect/disconnect cycles.

Targets (issue 14): 1,000 subscribers of one (cluster, pods, namespace) hold exactly 1 upstream
watch at the simulator; a change reaches all of them within 1 s (p99); at most 50 KB of console RSS
per idle subscriber; 15 s after 1,000 connect/disconnect cycles, 0 upstream watches are left and
the console's task count is back to its idle level.

The simulator runs in this process (its own count of open watches is read there); the console runs
in a child (this script with ``--serve-console``), so its RSS and task gauge are its own. Baseline
from the same run: the change latency with a single subscriber.
Run: ``.venv/bin/python scripts/bench/console_watch_fanout.py [--subscribers 1000] [--cycles 1000]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from harness import (
    console_bench_main,
    free_port,
    kube_api,
    percentile,
    rss_kib,
    running_console,
)
from report import Report

from kubesim import Simulator

NAMESPACE = "bench"
PODS = 5


def upstream(sim: Simulator) -> int:
    return sim.call(lambda state: state.objects.store.subscribers(("", "pods")))


async def watches_left(sim: Simulator, settle: float) -> int:
    """The upstream watches at the simulator once none is left, or ``settle`` seconds on (the
    console ends its watch 5 s after the last subscriber, and the simulator sees the close later
    still)."""
    deadline = time.monotonic() + settle
    # polled: the simulator's count has no event to wait on
    while (left := upstream(sim)) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.25)
    return left


async def gauge(session: aiohttp.ClientSession, base: str, name: str) -> float:
    async with session.get(f"{base}/actuator/prometheus") as resp:
        for line in (await resp.text()).splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    raise RuntimeError(f"no gauge {name}")


class Subscriber:
    """One SSE client of the pod watch: reads events and notes when a marker arrives."""

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self.resp = resp
        self.seen: dict[str, float] = {}
        self.added = 0
        self.ready = asyncio.Event()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with_marker = "bench-mark-"
        async for raw in self.resp.content:
            line = raw.decode()
            if line.startswith("event: ADDED"):
                self.added += 1
                if self.added >= PODS:
                    self.ready.set()
            elif line.startswith("data:") and with_marker in line:
                at = line.index(with_marker)
                self.seen.setdefault(line[at : at + 20], time.perf_counter())

    async def close(self) -> None:
        self.task.cancel()
        self.resp.close()


async def subscribe(session: aiohttp.ClientSession, url: str) -> Subscriber:
    resp = await session.get(url)
    assert resp.status == 200, await resp.text()
    sub = Subscriber(resp)
    await asyncio.wait_for(sub.ready.wait(), 30)
    return sub


async def change(api: Any, marker: str, subs: list[Subscriber]) -> list[float]:
    """Label one pod with ``marker``; seconds until each subscriber saw it."""
    from kubernetes_asyncio import client

    core: Any = client.CoreV1Api(api)
    started = time.perf_counter()
    body = {"metadata": {"labels": {"mark": marker}}}
    await core.patch_namespaced_pod("pod-0", NAMESPACE, body)
    deadline = started + 10
    # polled: an Event per subscriber would add to what is measured
    while any(marker not in s.seen for s in subs) and time.perf_counter() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.005)
    return [s.seen.get(marker, float("inf")) - started for s in subs]


async def seed(api: Any) -> None:
    from kubernetes_asyncio import client

    core: Any = client.CoreV1Api(api)
    await core.create_namespace({"metadata": {"name": NAMESPACE}})
    for i in range(PODS):
        spec = {"containers": [{"name": "main", "image": "busybox:1.36"}]}
        await core.create_namespaced_pod(
            NAMESPACE, {"metadata": {"name": f"pod-{i}"}, "spec": spec}
        )


async def cycles(session: aiohttp.ClientSession, url: str, count: int) -> None:
    gate = asyncio.Semaphore(50)

    async def one() -> None:
        async with gate:
            sub = await subscribe(session, url)
            await sub.close()

    await asyncio.gather(*(one() for _ in range(count)))


async def bench(args: argparse.Namespace) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    url = f"{base}/api/v1/clusters/bench/resources/pods/objects/watch?namespace={NAMESPACE}"
    with tempfile.TemporaryDirectory() as tmp, Simulator(Path(tmp), context="bench") as sim:
        async with kube_api(sim.kubeconfig_path) as api:
            await seed(api)
            with running_console(__file__, sim.kubeconfig_path, port, f"{tmp}/console") as console:
                connector = aiohttp.TCPConnector(limit=0)
                timeout = aiohttp.ClientTimeout(total=None)
                async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
                    idle_tasks = await gauge(session, base, "wharf_asyncio_tasks")
                    one = [await subscribe(session, url)]
                    alone = [(await change(api, f"bench-mark-a{i:08d}", one))[0] for i in range(5)]
                    before = rss_kib(console.pid)["VmRSS"]
                    subs = one
                    for start in range(1, args.subscribers, 100):
                        batch = min(100, args.subscribers - start)
                        subs += await asyncio.gather(
                            *(subscribe(session, url) for _ in range(batch))
                        )
                    await asyncio.sleep(1.0)
                    after = rss_kib(console.pid)["VmRSS"]
                    held = upstream(sim)
                    lags: list[float] = []
                    for i in range(3):
                        lags += await change(api, f"bench-mark-b{i:08d}", subs)
                    await asyncio.gather(*(s.close() for s in subs))
                    started = time.perf_counter()
                    await cycles(session, url, args.cycles)
                    cycled = time.perf_counter() - started
                    left = await watches_left(sim, args.settle)
                    console_left = await gauge(session, base, "console_watches_upstream")
                    tasks_left = await gauge(session, base, "wharf_asyncio_tasks")
    n = len(subs)
    print(f"{n} subscribers on one (cluster, pods, namespace): upstream watches at the simulator: "
          f"{held} (target 1)")  # fmt: skip
    print(f"change reaches all {n}: p50 {percentile(lags, 0.5) * 1000:.0f} ms, "
          f"p99 {percentile(lags, 0.99) * 1000:.0f} ms, max {max(lags) * 1000:.0f} ms "
          f"(target p99 < 1000 ms); baseline one subscriber: median "
          f"{statistics.median(alone) * 1000:.1f} ms (ratio p99/baseline "
          f"{percentile(lags, 0.99) / statistics.median(alone):.1f}x)")  # fmt: skip
    print(
        f"console RSS: {before} KB with 1 subscriber, {after} KB with {n}: "
        f"{(after - before) / max(1, n - 1):.1f} KB per idle subscriber (target <= 50 KB)"
    )
    print(f"{args.cycles} connect/disconnect cycles in {cycled:.1f} s; within {args.settle:g} s: "
          f"upstream watches at the simulator {left}, console gauge {console_left:.0f} (target 0); "
          f"console tasks {tasks_left:.0f} (idle before: {idle_tasks:.0f})")  # fmt: skip
    out: Report = args.report
    out.figure(f"upstream watches for {n} subscribers", held, "", at_most=1)
    out.figure(f"change reaches all {n}, p99", percentile(lags, 0.99) * 1000, "ms", at_most=1000)
    per_sub = (after - before) / max(1, n - 1)
    out.figure("console RSS per idle subscriber", per_sub, "KB", at_most=50)
    out.figure(f"upstream watches left after {args.cycles} cycles", left, "", at_most=0)


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument(
        "--settle",
        type=float,
        default=15.0,
        help="most seconds for the watches to end after the cycles",
    )


if __name__ == "__main__":
    console_bench_main(
        __doc__,
        bench,
        options,
        name="console_watch_fanout",
        quick={
            "subscribers": 300,
            "cycles": 300,
        },  # the full settle: the simulator sees a close late
        smoke={"subscribers": 5, "cycles": 5, "settle": 0},
    )
