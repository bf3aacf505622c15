"""Benchmark: ``POST /charts/template/upload`` of the ``helm create`` scaffold, against baselines.

Baselines, measured in the same run and process:
- the in-process ``helm_python`` render of the same archive (load + render);
- an aiohttp hello-world round trip (same client, same loopback, a handler that answers "hello").

Prints the upload-render p50 and its ratio to (render p50 + hello p50) (target <= 1.3x), and the
throughput with concurrent clients (target >= 300 renders/s).
Both servers run in their own processes (``--in-process`` puts them in the client's).
Run: ``.venv/bin/python scripts/bench/chartsvc_template.py [--requests 400 --concurrency 8]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import helm_python as helm
from aiohttp import web
from harness import (
    as_wharf_serves,
    bench_main,
    free_port,
    percentile,
    start_child,
    stop_child,
)
from report import Report

from chartsvc.app import create_app
from chartsvc.settings import Settings
from common.config import load_settings

REQUEST = {"releaseName": "bench", "namespace": "default", "values": {"replicaCount": 2}}


def scaffold_archive(work: Path) -> bytes:
    helm.Chart.create("bench", work).close()
    return Path(helm.package(work / "bench", destination=work)).read_bytes()


def render_once(archive: bytes) -> None:
    chart = helm.Chart.load_archive(archive)
    try:
        chart.render(REQUEST["values"], name="bench", namespace="default")  # type: ignore[arg-type]
    finally:
        chart.close()


def timed_calls(n: int, call: Any) -> list[float]:
    times = []
    for _ in range(n):
        start_t = time.perf_counter()
        call()
        times.append(time.perf_counter() - start_t)
    return times


def form(archive: bytes) -> aiohttp.FormData:
    data = aiohttp.FormData()
    data.add_field("chart", archive, filename="bench.tgz", content_type="application/gzip")
    data.add_field("request", json.dumps(REQUEST), content_type="application/json")
    return data


async def start(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}"


async def sequential(session: aiohttp.ClientSession, n: int, send: Any) -> list[float]:
    times = []
    for _ in range(n):
        start_t = time.perf_counter()
        async with await send(session) as resp:
            await resp.read()
            assert resp.status == 200, await resp.text()
        times.append(time.perf_counter() - start_t)
    return times


async def throughput(session: aiohttp.ClientSession, n: int, workers: int, send: Any) -> float:
    remaining = n

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            async with await send(session) as resp:
                await resp.read()

    start_t = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return n / (time.perf_counter() - start_t)


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as work:
        archive = scaffold_archive(Path(work))
        for _ in range(2 if args.smoke else 50):
            render_once(archive)

        servers: InProcess | Spawned = (
            InProcess(work) if args.in_process else Spawned(args.port or free_port(), work)
        )
        hello_url, svc_url = await servers.start()
        try:
            async with aiohttp.ClientSession() as session:
                await _report(args, session, archive, hello_url, svc_url)
        finally:
            await servers.stop()


class InProcess:
    """Both servers in this process (``--in-process``): one event loop shared with the client."""

    def __init__(self, work: str) -> None:
        self.work = work
        self.runners: list[web.AppRunner] = []

    async def start(self) -> tuple[str, str]:
        hello_runner, hello_url = await start(hello_app())
        self.runners.append(hello_runner)
        svc_runner, svc_url = await start(chartsvc_app(Path(self.work)))
        self.runners.append(svc_runner)
        return hello_url, svc_url

    async def stop(self) -> None:
        for runner in reversed(self.runners):
            await runner.cleanup()


class Spawned:
    """Each server in its own process, as in production; the client has this one."""

    def __init__(self, port: int, work: str) -> None:
        self.port, self.work = port, work
        self.procs: list[subprocess.Popen[str]] = []

    async def start(self) -> tuple[str, str]:
        hello_proc, hello_url = spawn("hello", self.port)
        self.procs.append(hello_proc)
        svc_proc, svc_url = spawn("chartsvc", free_port(), self.work)
        self.procs.append(svc_proc)
        return hello_url, svc_url

    async def stop(self) -> None:
        for proc in self.procs:
            stop_child(proc)


def hello_app() -> web.Application:
    app = web.Application()
    app.router.add_get("/hello", _hello)
    app.router.add_post("/hello", _hello_upload)
    return app


def chartsvc_app(work: Path) -> web.Application:
    return create_app(load_settings(Settings, overrides=[f"chartsvc.data-dir={work}/data"]))


def spawn(which: str, port: int, *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc, _ = start_child(__file__, "--serve", which, str(port), *extra)
    return proc, f"http://127.0.0.1:{port}"


def serve(which: str, port: int, work: str = "") -> None:
    app = hello_app() if which == "hello" else chartsvc_app(Path(work))
    if which != "hello":
        as_wharf_serves(app)
    web.run_app(
        app,
        host="127.0.0.1",
        port=port,
        access_log=None,
        print=lambda _: print("ready", flush=True),
    )


async def _hello(_: web.Request) -> web.Response:
    return web.Response(text="hello")


async def _hello_upload(request: web.Request) -> web.Response:
    await request.read()  # a hello world that receives the same multipart body, and ignores it
    return web.Response(text="hello")


async def _report(
    args: argparse.Namespace,
    session: aiohttp.ClientSession,
    archive: bytes,
    hello_url: str,
    svc_url: str,
) -> None:
    async def hello(s: aiohttp.ClientSession) -> Any:
        return s.get(f"{hello_url}/hello")

    async def hello_post(s: aiohttp.ClientSession) -> Any:
        return s.post(f"{hello_url}/hello", data=form(archive))

    async def upload(s: aiohttp.ClientSession) -> Any:
        return s.post(f"{svc_url}/api/v1/charts/template/upload", data=form(archive))

    await sequential(session, 2 if args.smoke else 50, upload)  # warm up
    series = await interleaved(
        args, session, archive, {"hello": hello, "post": hello_post, "upload": upload}
    )
    rate = await throughput(session, args.requests, args.concurrency, upload)
    hello_rate = await throughput(session, args.requests, args.concurrency, hello)
    p50 = {name: statistics.median(times) for name, times in series.items()}
    baseline = p50["render"] + p50["post"]
    print(f"in-process helm_python render p50 (load + render): {p50['render'] * 1000:6.2f} ms")
    print(f"aiohttp hello-world GET round trip p50:            {p50['hello'] * 1000:6.2f} ms")
    print(f"aiohttp hello-world POST of the same form p50:     {p50['post'] * 1000:6.2f} ms")
    print(f"baseline (render + hello POST) p50:                {baseline * 1000:6.2f} ms")
    print(
        f"POST /charts/template/upload p50:                  {p50['upload'] * 1000:6.2f} ms   "
        f"ratio {p50['upload'] / baseline:.2f}x (target <= 1.3x); "
        f"vs render + hello GET {p50['upload'] / (p50['render'] + p50['hello']):.2f}x"
    )
    strict = p50["upload"] / (p50["loaded"] + p50["post"])
    print(
        f"  strictest view, chart already loaded in-process ({p50['loaded'] * 1000:.2f} ms "
        f"render): ratio {strict:.2f}x"
    )
    upload_p95 = percentile(series["upload"], 0.95)
    print(f"upload p95:                         {upload_p95 * 1000:6.2f} ms")
    print(
        f"throughput, {args.concurrency} concurrent clients:   {rate:6.0f} renders/s (target >= 300); "
        f"hello-world {hello_rate:.0f} req/s"
    )
    out: Report = args.report
    out.figure(
        "template upload p50 / (render + hello POST)",
        p50["upload"] / baseline,
        "x",
        at_most=1.3,
        baseline=f"render + hello POST: {baseline * 1000:.2f} ms",
    )
    out.figure(f"renders/s, {args.concurrency} concurrent clients", rate, "/s", at_least=300)


async def interleaved(
    args: argparse.Namespace, session: aiohttp.ClientSession, archive: bytes, sends: dict[str, Any]
) -> dict[str, list[float]]:
    """Every series in short alternating rounds, so all of them see the same machine load."""
    series: dict[str, list[float]] = {"render": [], "loaded": [], **{k: [] for k in sends}}
    per = max(args.requests // args.rounds, 1)
    chart = helm.Chart.load_archive(archive)
    try:
        for _ in range(args.rounds):
            series["render"] += timed_calls(per, lambda: render_once(archive))
            series["loaded"] += timed_calls(
                per,
                lambda: chart.render(REQUEST["values"], name="bench", namespace="default"),  # type: ignore[arg-type]
            )
            for name, send in sends.items():
                series[name] += await sequential(session, per, send)
    finally:
        chart.close()
    return series


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], int(sys.argv[3]), *sys.argv[4:5])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="hello-world's (default: a free one)")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run both servers in this process, with the client",
    )
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=8, help="alternating measurement rounds")
    return bench_main(
        "chartsvc_template",
        parser,
        bench,
        quick={"requests": 200, "rounds": 4},
        smoke={"requests": 8, "rounds": 1},
    )


if __name__ == "__main__":
    raise SystemExit(main())
