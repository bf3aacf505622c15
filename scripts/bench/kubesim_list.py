"""Benchmark: listing 5,000 ConfigMaps from the cluster simulator, raw JSON (target: ~0.15 s).

A simulator (plain HTTP, as benchmarks run it) is seeded with ``--count`` ConfigMaps of a few
keys each, written through the API core so that defaulting, decoding and managedFields are the
real write path's. The driver then times ``GET /api/v1/namespaces/bench/configmaps`` (what
``kubectl get --raw`` sends) ``--rounds`` times. Baseline from the same run: a bare aiohttp server
answering the same bytes, the floor of HTTP and client-side reading. Printed: median and best list
time, the baseline's, their ratio, the body size, and the CPU time per list of this process (server
and client both run in it), which a loaded machine disturbs less than wall time.
Run: ``.venv/bin/python scripts/bench/kubesim_list.py [--count 5000] [--rounds 15] [--quick|--smoke]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
from aiohttp import web
from harness import free_port, timed_get
from report import Report, options

from kubesim import Simulator
from kubesim.http.state import State
from kubesim.machinery.meta import WriteOptions

TARGET_MS = 150.0
PATH = "/api/v1/namespaces/bench/configmaps"


def seed(count: int) -> Callable[[State], None]:
    def fill(state: State) -> None:
        objs = state.objects
        opts = WriteOptions(manager="bench")
        namespaces = objs.registry.get("", "v1", "namespaces")
        configmaps = objs.registry.get("", "v1", "configmaps")
        assert namespaces is not None
        assert configmaps is not None
        objs.create(namespaces, "", {"metadata": {"name": "bench"}}, opts)
        for i in range(count):
            body = {
                "metadata": {
                    "name": f"cm-{i:05d}",
                    "labels": {"app": "bench", "shard": str(i % 7)},
                },
                "data": {"mode": "blue", "size": str(i), "note": "x" * 40},
            }
            objs.create(configmaps, "bench", body, opts)

    return fill


async def _times(url: str, rounds: int) -> tuple[list[float], bytes, float]:
    """(wall ms per GET, the body, CPU ms per GET)."""
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as resp:
            body = await resp.read()
        cpu = time.process_time()
        times = [await timed_get(session, url) for _ in range(rounds)]
        return times, body, (time.process_time() - cpu) * 1000 / rounds


async def _baseline(body: bytes, rounds: int) -> list[float]:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get(PATH, handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        times, _, _ = await _times(f"http://127.0.0.1:{port}{PATH}", rounds)
        return times
    finally:
        await runner.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=15)
    args = options(parser, quick={"rounds": 5}, smoke={"count": 200, "rounds": 1})
    report = Report.of("kubesim_list", args)
    with tempfile.TemporaryDirectory() as tmp, Simulator(Path(tmp), tls=False) as sim:
        sim.call(seed(args.count))
        times, body, cpu = asyncio.run(_times(sim.url + PATH, args.rounds))
    baseline = asyncio.run(_baseline(body, args.rounds))
    median, floor = statistics.median(times), statistics.median(baseline)
    print(f"list of {args.count} ConfigMaps, raw JSON ({len(body) / 1e6:.1f} MB):")
    print(f"  simulator   median {median:7.1f} ms   best {min(times):7.1f} ms")
    print(f"  bare server median {floor:7.1f} ms   best {min(baseline):7.1f} ms")
    print(f"  ratio {median / floor:.1f}x the bare server; target {TARGET_MS:.0f} ms")
    print(f"  CPU per list (server and client) {cpu:7.1f} ms")
    what = f"list of {args.count} ConfigMaps"
    report.figure(f"{what}, median", median, "ms", at_most=TARGET_MS)
    report.figure(f"{what}, ratio", median / floor, "x", baseline="bare aiohttp, same bytes")
    report.figure(f"{what}, CPU per list", cpu, "ms")
    return report.emit()


if __name__ == "__main__":
    raise SystemExit(main())
