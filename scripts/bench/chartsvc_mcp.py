"""Benchmark: an MCP tool call next to the REST call it mirrors, on one chart service.

The same operation (``listRepositories``: repositories.yaml read and encoded) is timed as
``GET /api/v1/repos`` and as a ``tools/call`` over streamable HTTP (``/mcp``, one session, each call
answered on its own SSE stream) and over legacy SSE (``/sse``). Also: opening an MCP session
(initialize + initialized) over ``/mcp``. Prints p50 and p99 of each and the MCP/REST ratio.
Run: ``.venv/bin/python scripts/bench/chartsvc_mcp.py [--calls 300]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from aiohttp import web
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from chartsvc.app import create_app
from chartsvc.settings import Settings
from common.config import load_settings


async def start(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


async def timed(n: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    times = []
    for _ in range(n):
        start_t = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start_t)
    return times


def show(label: str, times: list[float], base: list[float] | None = None) -> None:
    p50 = statistics.median(times)
    p99 = statistics.quantiles(times, n=100)[98]
    ratio = f"   {p50 / statistics.median(base):.1f}x REST" if base else ""
    print(f"{label:<44} p50 {p50 * 1000:6.2f} ms   p99 {p99 * 1000:6.2f} ms{ratio}")


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as work:
        settings = load_settings(Settings, overrides=[f"chartsvc.data-dir={work}/data"])
        runner, url = await start(create_app(settings))
        try:
            await report(args.calls, url)
        finally:
            await runner.cleanup()


async def report(n: int, url: str) -> None:
    async with aiohttp.ClientSession() as http:

        async def rest() -> None:
            async with http.get(url + "/api/v1/repos") as resp:
                assert resp.status == 200
                await resp.read()

        await timed(50, rest)
        rest_times = await timed(n, rest)
    show("REST GET /api/v1/repos", rest_times)

    async def open_session() -> None:
        async with streamable_http_client(url + "/mcp") as (r, w), ClientSession(r, w) as s:
            await s.initialize()

    show("MCP /mcp session open (initialize)", await timed(max(n // 10, 20), open_session))
    async with streamable_http_client(url + "/mcp") as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        await timed(20, lambda: session.call_tool("listRepositories", {}))
        show("MCP /mcp tools/call listRepositories", await timed(n, call(session)), rest_times)
    async with sse_client(url + "/sse") as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        await timed(20, lambda: session.call_tool("listRepositories", {}))
        show("MCP /sse tools/call listRepositories", await timed(n, call(session)), rest_times)


def call(session: ClientSession) -> Callable[[], Awaitable[Any]]:
    async def once() -> None:
        result = await session.call_tool("listRepositories", {})
        assert not result.is_error

    return once


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=300)
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
