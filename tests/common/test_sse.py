"""SSE: the exact keepalive line, proxy headers, Last-Event-ID, and cleanup on departure."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiohttp import ClientSession, web
from pytest_aiohttp import AiohttpClient, AiohttpServer

from common import sse
from common.openapi import Operation, Spec, check_event, load_document
from tests.common.serving import served

KEEPALIVE_S = 0.05


def stream_app(cleaned: asyncio.Event, subscribers: list[str]) -> web.Application:
    async def events(request: web.Request) -> web.StreamResponse:
        async with sse.event_stream(request) as stream:
            subscribers.append(stream.last_event_id or "")
            try:
                await stream.send('{"hello": 1}', event="connected", event_id="1")
                await asyncio.Event().wait()  # a subscriber waiting for events forever
            finally:
                cleaned.set()
        return stream.response

    app = web.Application()
    sse.install(app, keepalive_s=KEEPALIVE_S)
    app.router.add_get("/events", events)
    return app


async def test_keepalive_headers_and_events(aiohttp_client: AiohttpClient) -> None:
    cleaned = asyncio.Event()
    client = await aiohttp_client(stream_app(cleaned, []))
    resp = await client.get("/events")
    assert resp.headers["Content-Type"].startswith("text/event-stream")
    assert resp.headers["X-Accel-Buffering"] == "no"
    assert resp.headers["Cache-Control"] == "no-cache"
    seen = b""
    async with asyncio.timeout(2):
        while seen.count(b":keepalive\n\n") < 2:
            seen += await resp.content.readany()
    assert b'id: 1\r\nevent: connected\r\ndata: {"hello": 1}\r\n\r\n' in seen
    assert b": ping" not in seen
    resp.close()


async def test_departed_client_is_detected_and_cleaned_up(aiohttp_client: AiohttpClient) -> None:
    cleaned = asyncio.Event()
    client = await aiohttp_client(stream_app(cleaned, []))
    resp = await client.get("/events")
    await resp.content.readany()
    resp.close()  # the client goes away
    async with asyncio.timeout(KEEPALIVE_S * 20):
        await cleaned.wait()


async def test_last_event_id_is_passed_to_the_stream(aiohttp_client: AiohttpClient) -> None:
    seen: list[str] = []
    client = await aiohttp_client(stream_app(asyncio.Event(), seen))
    resp = await client.get("/events", headers={"Last-Event-ID": "41"})
    await resp.content.readany()
    assert seen == ["41"]
    resp.close()


async def test_shutdown_closes_open_streams(
    aiohttp_server: AiohttpServer, aiohttp_client: AiohttpClient
) -> None:
    cleaned = asyncio.Event()
    app = stream_app(cleaned, [])
    client = await aiohttp_client(app)
    resp = await client.get("/events")
    await resp.content.readany()
    await app[sse.STREAMS].close_all()
    async with asyncio.timeout(1):
        await cleaned.wait()
        rest = await resp.content.read()
    assert isinstance(rest, bytes)


def quiet_app(cleaned: asyncio.Event, subscribers: list[str]) -> web.Application:
    """``stream_app`` with a keepalive far beyond any test: departures must be seen without one."""
    app = stream_app(cleaned, subscribers)
    app[sse.STREAMS].interval = 60.0
    return app


async def test_a_departure_is_noticed_at_once_not_at_the_next_keepalive() -> None:
    cleaned = asyncio.Event()
    async with served(quiet_app(cleaned, [])) as base, ClientSession() as session:
        resp = await session.get(f"{base}/events")
        assert resp.headers["Connection"] == "close"  # a stream's connection serves nothing else
        await resp.content.readany()
        resp.close()
        async with asyncio.timeout(2):  # the keepalive is 60 s away
            await cleaned.wait()


async def test_one_ticker_writes_every_streams_keepalives(aiohttp_client: AiohttpClient) -> None:
    app = stream_app(asyncio.Event(), [])
    client = await aiohttp_client(app)
    first, second = await client.get("/events"), await client.get("/events")
    tickers = [t for t in asyncio.all_tasks() if t.get_name() == "sse keepalives"]
    assert len(tickers) == 1  # not one per stream
    for resp in (first, second):
        seen = b""
        async with asyncio.timeout(2):
            while b":keepalive\n\n" not in seen:
                seen += await resp.content.readany()
    first.close()
    second.close()
    async with asyncio.timeout(2):
        while not tickers[0].done():  # the last stream gone, the ticker goes too
            await asyncio.sleep(0.01)


async def test_memory_is_given_back_when_a_burst_of_streams_ends(
    aiohttp_client: AiohttpClient,
) -> None:
    app = stream_app(asyncio.Event(), [])
    registry = app[sse.STREAMS]
    registry.release_peak = 8
    client = await aiohttp_client(app)
    opened = [await client.get("/events") for _ in range(8)]
    for resp in opened:
        await resp.content.readany()
    assert (registry.peak, registry.releases) == (8, 0)
    for resp in opened[:5]:
        resp.close()
    await asyncio.sleep(sse.RELEASE_DELAY_S + 0.3)
    assert registry.releases == 0  # 3 of 8 still open: no burst has ended
    for resp in opened[5:]:
        resp.close()
    async with asyncio.timeout(15):  # ample on a loaded machine; the release comes in ~1 s
        while registry.releases == 0:
            await asyncio.sleep(0.05)
    assert registry.peak <= 2  # counting starts again


async def test_a_client_gone_before_its_stream_starts_is_no_server_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A page that navigates away while its watch is still being opened: the connection is gone
    before the stream is prepared. That is a departed client, not an unhandled error."""
    outcome: list[str] = []
    reached = asyncio.Event()

    async def events(request: web.Request) -> web.StreamResponse:
        reached.set()
        while request.transport is not None:  # the handler's own work (a cluster's answer)
            await asyncio.sleep(0.01)
        try:
            async with sse.event_stream(request) as stream:
                outcome.append("streamed")
            return stream.response
        except asyncio.CancelledError:
            outcome.append("departed")
            raise
        except Exception as exc:
            outcome.append(type(exc).__name__)
            raise

    app = web.Application()
    sse.install(app, keepalive_s=KEEPALIVE_S)
    app.router.add_get("/events", events)
    # Served as ``wharf serve`` serves: a departed client's handler is not cancelled (aiohttp's
    # default; its test server cancels them).
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        async with asyncio.timeout(5):
            await reached.wait()
            writer.close()
            while not outcome:
                await asyncio.sleep(0.01)
    finally:
        await runner.cleanup()
    assert outcome == ["departed"]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def _stream_operations() -> list[Operation]:
    root = Path(__file__).resolve().parents[2] / "spec"
    found = []
    for service in ("chartsvc", "results", "console"):
        spec = Spec.from_document(load_document(root / f"{service}.yaml"))
        found += [op for op in spec.operations.values() if op.events]
    return found


def test_every_event_stream_of_the_specs_names_its_events_and_their_data() -> None:
    streams = {op.operation_id: op.events for op in _stream_operations()}
    assert set(streams) == {
        "streamEvents",
        "watchObjects",
        "watchRows",
        "streamLogs",
        "streamPodLog",
    }
    for op_id, events in streams.items():
        assert events.get("error") is not None, op_id  # the in-band end of every stream
        assert all(validator is not None for validator in events.values()), op_id


def test_an_event_the_spec_does_not_name_or_bad_data_fails_the_check() -> None:
    op = next(op for op in _stream_operations() if op.operation_id == "streamEvents")
    check_event(op, "connected", '{"user": null, "replayed": 0}')
    with pytest.raises(AssertionError, match="event 'hello' is not in the spec"):
        check_event(op, "hello", "{}")
    with pytest.raises(AssertionError, match="replayed"):
        check_event(op, "connected", '{"user": null, "replayed": -1}')
