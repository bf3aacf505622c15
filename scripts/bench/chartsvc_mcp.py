"""Benchmark: chartsvc's MCP doors against a bare server of the official MCP SDK (the floor).

The same session and tool call are timed against two servers, each in its own process:

- **the floor**: the official SDK's own ``MCPServer`` served by uvicorn (``streamable_http_app``
  and ``sse_app``), with one tool ``listRepositories`` that returns a constant;
- **chartsvc** (``wharf serve chartsvc``), whose ``listRepositories`` reads and encodes
  repositories.yaml, over ``/mcp`` (streamable HTTP, one session, each call answered on its own SSE
  stream) and ``/sse`` (legacy SSE).

Timed: opening a session (initialize + initialized) over ``/mcp``, and ``tools/call`` over each
door; the REST call the tool mirrors (``GET /api/v1/repos``) is shown for reference. Target: each
of chartsvc's figures within 1.1x of the bare server's p50 (both measured in this run, the calls
interleaved in rounds so a noisy minute weighs on both alike).
Run: ``.venv/bin/python scripts/bench/chartsvc_mcp.py [--calls 300] [--quick|--smoke]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from harness import child, free_port, wait_ready, wait_until
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from report import Report, options

TARGET = 1.1
TOOL = "listRepositories"


def serve_bare(mcp_port: int, sse_port: int) -> None:
    """Child side: the SDK's own server, one constant tool, on two ports (its two apps)."""
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bare")

    @server.tool(name=TOOL)
    def list_repositories() -> dict[str, Any]:
        return {"repositories": []}

    async def both() -> None:
        apps = ((server.streamable_http_app(), mcp_port), (server.sse_app(), sse_port))
        servers = [
            uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning", access_log=False))
            for app, port in apps
        ]
        await asyncio.gather(*(s.serve() for s in servers))

    asyncio.run(both())


@asynccontextmanager
async def bare_server(tmp: Path) -> AsyncIterator[tuple[str, str]]:
    """The floor, as a child process: (its ``/mcp`` URL, its ``/sse`` URL)."""
    mcp_port, sse_port = free_port(), free_port()
    args = [sys.executable, __file__, "--serve-bare", str(mcp_port), str(sse_port)]
    with child(args, {"PATH": "/usr/bin:/bin"}, tmp / "bare.log"):
        async with aiohttp.ClientSession() as http:

            async def up() -> bool:
                async with http.get(f"http://127.0.0.1:{sse_port}/nothing") as resp:
                    return resp.status == 404

            await wait_until(up, "the bare MCP server")
        yield f"http://127.0.0.1:{mcp_port}/mcp", f"http://127.0.0.1:{sse_port}/sse"


@asynccontextmanager
async def chartsvc(tmp: Path) -> AsyncIterator[str]:
    port = free_port()
    args = [sys.executable, "-m", "wharf", "serve", "chartsvc", "--host", "127.0.0.1"]
    args += ["--port", str(port), "--set", f"chartsvc.data-dir={tmp / 'data'}"]
    with child(args, {"PATH": "/usr/bin:/bin"}, tmp / "chartsvc.log"):
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as http:
            await wait_ready(http, base)
        yield base


async def timed(n: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    times = []
    for _ in range(n):
        start_t = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start_t)
    return times


def p50_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


def show(label: str, times: list[float], floor: list[float] | None = None) -> None:
    p99 = statistics.quantiles(times, n=100)[98] if len(times) > 1 else times[0]
    ratio = (
        f"   {statistics.median(times) / statistics.median(floor):.2f}x the floor" if floor else ""
    )
    print(f"{label:<44} p50 {p50_ms(times):6.2f} ms   p99 {p99 * 1000:6.2f} ms{ratio}")


async def session_opens(url: str, n: int) -> list[float]:
    async def open_session() -> None:
        async with streamable_http_client(url) as (r, w), ClientSession(r, w) as s:
            await s.initialize()

    return await timed(n, open_session)


async def calls(door: str, url: str, n: int) -> list[float]:
    client = streamable_http_client(url) if door == "mcp" else sse_client(url)
    async with client as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        await timed(min(n, 20), call(session))  # warm-up
        return await timed(n, call(session))


def call(session: ClientSession) -> Callable[[], Awaitable[Any]]:
    async def once() -> None:
        result = await session.call_tool(TOOL, {})
        assert not result.is_error

    return once


async def bench(args: argparse.Namespace, out: Report) -> None:
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as work:
        tmp = Path(work)
        async with bare_server(tmp) as (bare_mcp, bare_sse), chartsvc(tmp) as base:
            async with aiohttp.ClientSession() as http:

                async def rest() -> None:
                    async with http.get(base + "/api/v1/repos") as resp:
                        assert resp.status == 200
                        await resp.read()

                await timed(20, rest)
                figures["rest"] = await timed(args.calls, rest)
            opens = max(args.calls // 10, 5)
            per_round = max(args.calls // args.rounds, 1)
            for _ in range(args.rounds):  # interleaved: a noisy minute weighs on both alike
                for name, url, door in (
                    ("bare /mcp", bare_mcp, "mcp"),
                    ("chartsvc /mcp", base + "/mcp", "mcp"),
                    ("bare /sse", bare_sse, "sse"),
                    ("chartsvc /sse", base + "/sse", "sse"),
                ):
                    figures.setdefault(name, []).extend(await calls(door, url, per_round))
                for name, url in (("bare open", bare_mcp), ("chartsvc open", base + "/mcp")):
                    figures.setdefault(name, []).extend(
                        await session_opens(url, max(opens // args.rounds, 1))
                    )
    show("REST GET /api/v1/repos (reference)", figures["rest"])
    for what in ("open", "/mcp", "/sse"):
        floor, ours = figures[f"bare {what}"], figures[f"chartsvc {what}"]
        label = (
            "session open (initialize) over /mcp" if what == "open" else f"tools/call over {what}"
        )
        show(f"bare SDK server, {label}", floor)
        show(f"chartsvc, {label}", ours, floor)
        out.figure(
            f"chartsvc {label}, p50 / the bare SDK's",
            statistics.median(ours) / statistics.median(floor),
            "x",
            at_most=TARGET,
            baseline=f"MCPServer + uvicorn: {p50_ms(floor):.2f} ms",
        )


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-bare":
        serve_bare(int(sys.argv[2]), int(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="tool calls per door and server")
    parser.add_argument("--rounds", type=int, default=5)
    args = options(parser, quick={"calls": 100}, smoke={"calls": 4, "rounds": 1})
    out = Report.of("chartsvc_mcp", args)
    asyncio.run(bench(args, out))
    return out.emit()


if __name__ == "__main__":
    raise SystemExit(main())
