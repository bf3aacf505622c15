"""Connection limits of a served app, on real loopback sockets: a client that never finishes its
request head is closed at the header-read timeout, an idle kept-alive one at the keep-alive
timeout, and connections past the per-address cap as soon as they arrive (counted), while other
addresses, and the same address once below the cap, are served."""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from common.metrics import METRICS, Metrics
from common.serving import GuardedRunner, ServerSettings, raise_open_files_limit

REQUEST = b"GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"
FLOOD_ADDRESS = "127.0.0.2"  # loopback too: the flood's address, not the checker's


async def ping(_: web.Request) -> web.Response:
    return web.Response(text="pong")


async def echo(request: web.Request) -> web.Response:
    return web.Response(body=await request.read())


@contextlib.asynccontextmanager
async def serving(**limits: float) -> AsyncIterator[tuple[int, web.Application]]:
    app = web.Application()
    app[METRICS] = Metrics("test")
    app.router.add_get("/ping", ping)
    app.router.add_post("/echo", echo)
    runner = GuardedRunner(app, limits=ServerSettings(**limits))  # type: ignore[arg-type]
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        yield runner.addresses[0][1], app
    finally:
        await runner.cleanup()


async def connect(
    port: int, source: str = "127.0.0.1"
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))


async def closed_after(reader: asyncio.StreamReader, limit_s: float) -> float:
    """Seconds until the server closes (EOF or reset), failing past ``limit_s``."""
    started = time.monotonic()
    async with asyncio.timeout(limit_s):
        with contextlib.suppress(ConnectionResetError):
            while await reader.read(1024):
                pass
    return time.monotonic() - started


async def answers(port: int, source: str = "127.0.0.1") -> bool:
    reader, writer = await connect(port, source)
    try:
        writer.write(REQUEST)
        async with asyncio.timeout(5):
            head = await reader.readuntil(b"\r\n\r\n")
        return head.startswith(b"HTTP/1.1 200")
    except (ConnectionError, asyncio.IncompleteReadError):
        return False
    finally:
        writer.close()


async def test_a_silent_and_a_trickling_client_are_closed_at_the_header_timeout() -> None:
    async with serving(header_read_timeout_seconds=0.4, keepalive_timeout_seconds=30) as (port, _):
        silent, _w1 = await connect(port)
        trickle, writer = await connect(port)
        dripping = asyncio.create_task(dribble(writer, REQUEST))
        assert 0.3 < await closed_after(silent, 3) < 2
        assert await closed_after(trickle, 3) < 2
        dripping.cancel()
        assert await answers(port)  # a prompt client is served


async def dribble(writer: asyncio.StreamWriter, head: bytes, every_s: float = 0.05) -> None:
    """``head`` a byte at a time, never its last blank line (a slowloris)."""
    with contextlib.suppress(ConnectionError):
        for byte in head[:-2]:
            writer.write(bytes([byte]))
            await asyncio.sleep(every_s)


async def test_a_trickled_second_request_on_a_kept_alive_connection_is_closed() -> None:
    async with serving(header_read_timeout_seconds=0.4, keepalive_timeout_seconds=30) as (port, _):
        reader, writer = await connect(port)
        writer.write(REQUEST)
        await reader.readuntil(b"pong")
        await asyncio.sleep(0.6)  # idle past the header timeout: only the keep-alive one counts
        dripping = asyncio.create_task(dribble(writer, REQUEST))
        assert 0.3 < await closed_after(reader, 3) < 1.5
        dripping.cancel()


async def test_a_slow_body_after_a_prompt_head_is_read_in_full() -> None:
    """The header timeout bounds request heads only: an upload slower than it is not cut."""
    async with serving(header_read_timeout_seconds=0.3, keepalive_timeout_seconds=30) as (port, _):
        reader, writer = await connect(port)
        for _ in range(2):  # the first request, and one on the kept-alive connection
            writer.write(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n")
            for byte in b"slowbody":
                await asyncio.sleep(0.1)
                writer.write(bytes([byte]))
            async with asyncio.timeout(5):
                await reader.readuntil(b"slowbody")
        writer.close()


async def test_an_idle_kept_alive_connection_is_closed_at_the_keepalive_timeout() -> None:
    async with serving(header_read_timeout_seconds=0.2, keepalive_timeout_seconds=1) as (port, _):
        reader, writer = await connect(port)
        writer.write(REQUEST)
        await reader.readuntil(b"pong")
        await asyncio.sleep(0.5)  # past the header timeout: that bounds only the first request
        writer.write(REQUEST)
        await reader.readuntil(b"pong")
        assert 0.5 < await closed_after(reader, 4) < 3


async def test_connections_past_the_per_address_cap_are_closed_and_counted() -> None:
    async with serving(max_connections_per_address=5, header_read_timeout_seconds=30) as (
        port,
        app,
    ):
        held = [await connect(port, FLOOD_ADDRESS) for _ in range(5)]
        extra = [await connect(port, FLOOD_ADDRESS) for _ in range(3)]
        for reader, _ in extra:
            assert await closed_after(reader, 2) < 1
        for reader, _ in held:
            with pytest.raises(TimeoutError):  # still open
                await closed_after(reader, 0.05)
        assert await answers(port)  # another address is not held up
        assert not await answers(port, FLOOD_ADDRESS)
        body, _ = app[METRICS].exposition()
        assert b"wharf_connections_refused_total 4.0" in body
        held[0][1].close()
        await asyncio.sleep(0.2)
        assert await answers(port, FLOOD_ADDRESS)  # below the cap again


def test_the_open_files_limit_is_raised_to_the_hard_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))
    try:
        before, after = raise_open_files_limit()
        assert before == min(256, hard)
        assert after == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        assert after == hard or hard == resource.RLIM_INFINITY
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, after), hard))


@pytest.mark.parametrize(
    ("request_bytes", "detail"),
    [
        (b"GET /ping?q=" + b"a" * 9_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", "request line"),
        (b"GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9_000 + b"\r\n\r\n", "header"),
        (b"GET /ping HTTP/1.1\r\nHost: x\r\nBad\x01Name: 1\r\n\r\n", "not valid"),
    ],
)
async def test_a_request_the_parser_refuses_gets_a_problem(
    request_bytes: bytes, detail: str
) -> None:
    async with serving() as (port, _):
        reader, writer = await connect(port)
        writer.write(request_bytes)
        async with asyncio.timeout(5):
            answer = await reader.read()
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b" ")[1].startswith(b"4"), head
    assert b"Content-Type: application/problem+json" in head
    problem = json.loads(body)
    assert problem["code"] == "invalid-request"
    assert detail in problem["detail"]
    assert b"aaaa" not in body  # nothing sent is echoed
    assert b"bbbb" not in body
