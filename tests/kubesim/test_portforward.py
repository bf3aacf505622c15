"""pods/portforward: kubernetes-asyncio's WebSocket client, the v4 channel framing, and SPDY frames."""

from __future__ import annotations

import asyncio
import struct
import zlib
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager
from typing import cast

import aiohttp
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.stream import WsApiClient

from kubesim import Simulator
from kubesim.http import spdy
from tests.kubesim.livesim import demo_simulator, pods, wait_for


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    yield from demo_simulator(tmp_path_factory.mktemp("kubesim"), nodes=1)


async def _frames(ws: aiohttp.ClientWebSocketResponse) -> AsyncIterator[tuple[int, bytes]]:
    async for msg in ws:
        if msg.type == aiohttp.WSMsgType.BINARY:
            yield msg.data[0], msg.data[1:]


async def test_http_through_a_kubernetes_asyncio_port_forward(
    sim: Simulator, ws_api: WsApiClient
) -> None:
    pod = wait_for(sim, lambda st: pods(st, "shop", "frontend"))[0]["metadata"]["name"]
    core = client.CoreV1Api(ws_api)
    # Through WsApiClient the call answers with the WebSocket to open, and ``ports`` is the API's
    # comma-separated list; the client's stubs describe the plain client (an int in, text out).
    opening = await core.connect_get_namespaced_pod_portforward(
        pod,
        "shop",
        ports="80,9999",  # type: ignore[arg-type]
        _preload_content=False,
    )
    ws = cast(AbstractAsyncContextManager[aiohttp.ClientWebSocketResponse], opening)
    async with ws as conn:
        frames = _frames(conn)
        first = [await anext(frames) for _ in range(4)]
        assert first == [
            (0, struct.pack("<H", 80)),
            (1, struct.pack("<H", 80)),
            (2, struct.pack("<H", 9999)),
            (3, struct.pack("<H", 9999)),
        ]
        assert (await anext(frames))[0] == 3  # nothing listens on 9999: the error channel says so
        await conn.send_bytes(b"\x00GET / HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n")
        response = b""
        async for channel, data in frames:
            assert channel == 0
            response += data
            if b"\r\n\r\n" in response:
                head, _, body = response.partition(b"\r\n\r\n")
                length = int(
                    next(
                        h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")
                    ).split(b":")[1]
                )
                if len(body) >= length:
                    break
    head, _, body = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK")
    assert b"\r\nServer: nginx/1.27.3\r\n" in head
    assert b"<h1>Welcome to nginx!</h1>" in body  # the nginx image's own page


def _syn_stream(deflate: zlib._Compress, stream_id: int, headers: dict[str, str]) -> bytes:
    block = deflate.compress(spdy.encode_headers(headers)) + deflate.flush(zlib.Z_SYNC_FLUSH)
    return spdy.control(spdy.SYN_STREAM, 0, struct.pack(">IIH", stream_id, 0, 0) + block)


async def test_spdy_session_forwards_streams_in_pairs() -> None:
    sent: list[bytes] = []
    pairs: list[spdy.Stream] = []

    async def send(frame: bytes) -> None:
        sent.append(frame)

    async def on_stream(stream: spdy.Stream) -> None:
        pairs.append(stream)

    session = spdy.Session(send, on_stream)
    deflate = zlib.compressobj(zdict=spdy.DICTIONARY)
    await session.feed(
        _syn_stream(deflate, 1, {"streamtype": "error", "port": "80", "requestid": "0"})
    )
    await session.feed(
        _syn_stream(deflate, 3, {"streamtype": "data", "port": "80", "requestid": "0"})
    )
    assert [s.headers["streamtype"] for s in pairs] == ["error", "data"]
    inflate = zlib.decompressobj(zdict=spdy.DICTIONARY)
    replies = [f for f in sent if f[:4] == struct.pack(">HH", 0x8003, spdy.SYN_REPLY)]
    assert len(replies) == 2
    assert spdy.decode_headers(inflate.decompress(replies[0][12:])) == {}
    frame = spdy.data(3, b"GET / HTTP/1.1\r\n\r\n", fin=True)
    await session.feed(frame[:5])
    await session.feed(frame[5:] + spdy.control(spdy.PING, 0, struct.pack(">I", 7)))
    assert await asyncio.wait_for(pairs[1].read(), 1) == b"GET / HTTP/1.1\r\n\r\n"
    assert sent[-1] == spdy.control(spdy.PING, 0, struct.pack(">I", 7))
    await pairs[1].write(b"ok")
    await pairs[1].close()
    assert sent[-2:] == [spdy.data(3, b"ok"), spdy.data(3, b"", fin=True)]


def test_dictionary_is_the_spdy3_one() -> None:
    assert len(spdy.DICTIONARY) == 1423
    assert zlib.adler32(spdy.DICTIONARY) == 0xE3C6A7C2
