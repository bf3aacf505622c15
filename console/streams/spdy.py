"""The client side of SPDY/3.1 inside a WebSocket: how ``kubectl port-forward`` (1.31+) reaches a
pod, with every local connection a pair of streams on one upstream socket.

The WebSocket (subprotocol ``SPDY/3.1+portforward.k8s.io``) carries a byte stream of SPDY frames.
The client opens streams with SYN_STREAM (odd ids, header blocks zlib-compressed with the SPDY
dictionary, one compression context per direction for the whole connection), the server accepts
with SYN_REPLY; DATA frames carry bytes, the FIN flag half-closes, RST_STREAM aborts a stream,
PINGs are answered. Flow control (WINDOW_UPDATE) is not enforced by Kubernetes' spdystream and is
ignored here as well; a stream's unread data is capped instead (:data:`MAX_BUFFERED`).

This module knows frames and streams only; what a stream carries is up to ``portforward``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import struct
import zlib
from collections.abc import Mapping

import aiohttp

PROTOCOL = "SPDY/3.1+portforward.k8s.io"
VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, PING, GOAWAY, HEADERS = 1, 2, 3, 6, 7, 8
FIN = 0x01
CANCEL = 5  # RST_STREAM status: the stream is no longer needed
#: Bytes a stream may hold unread before it is reset (the local client stopped reading).
MAX_BUFFERED = 8 * 1024 * 1024
#: Largest DATA frame sent (frames up to 16 MiB are legal; 64 KiB is one read of a local socket).
MAX_DATA = 64 * 1024

# The SPDY/3 header dictionary (draft-mbelshe-httpbis-spdy-00, 2.6.10.1): each of these words
# (``_`` stands for a space) with its length as 4 big-endian bytes, then the fixed tail.
_WORDS = (
    "options head post put delete trace accept accept-charset accept-encoding accept-language "
    "accept-ranges age allow authorization cache-control connection content-base "
    "content-encoding content-language content-length content-location content-md5 "
    "content-range content-type date etag expect expires from host if-match if-modified-since "
    "if-none-match if-range if-unmodified-since last-modified location max-forwards pragma "
    "proxy-authenticate proxy-authorization range referer retry-after server te trailer "
    "transfer-encoding upgrade user-agent vary via warning www-authenticate method get status "
    "200_OK version HTTP/1.1 url public set-cookie keep-alive origin"
)
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 "
    "Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service "
    "UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, "
    "Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml"
    "+xml,text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso"
    "-8859-1,utf-,*,enq=0."
)
DICTIONARY = (
    b"".join(struct.pack(">I", len(w)) + w.replace("_", " ").encode() for w in _WORDS.split())
    + _TAIL.encode()
)


class TunnelClosed(ConnectionError):
    """The upstream socket is gone (or refused a stream): streams on it end."""


def _control(kind: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(payload)) + payload


def _header_block(headers: Mapping[str, str]) -> bytes:
    out = [struct.pack(">I", len(headers))]
    for name, value in headers.items():
        key, val = name.lower().encode(), value.encode()
        out += [struct.pack(">I", len(key)), key, struct.pack(">I", len(val)), val]
    return b"".join(out)


class Stream:
    """One SPDY stream: what arrived (``read``), what to send (``write``), half-close (``close``)."""

    def __init__(self, tunnel: Tunnel, stream_id: int) -> None:
        self.tunnel, self.id = tunnel, stream_id
        self._chunks: collections.deque[bytes] = collections.deque()
        self._buffered = 0
        self._ended = False  # the server sent FIN, reset the stream, or the tunnel died
        self._more = asyncio.Event()
        self._sent_fin = False

    def _feed(self, data: bytes, *, end: bool = False) -> None:
        if data:
            self._chunks.append(data)
            self._buffered += len(data)
        self._ended = self._ended or end
        self._more.set()

    async def read(self) -> bytes:
        """The next bytes from the server; ``b""`` once it half-closed or the stream ended."""
        while not self._chunks:
            if self._ended:
                return b""
            self._more.clear()
            await self._more.wait()
        data = self._chunks.popleft()
        self._buffered -= len(data)
        return data

    async def write(self, data: bytes) -> None:
        for start in range(0, len(data), MAX_DATA):
            await self.tunnel.send(self._data(data[start : start + MAX_DATA]))

    async def close(self) -> None:
        """Half-close: nothing more from this side (a DATA frame with FIN)."""
        if not self._sent_fin:
            self._sent_fin = True
            await self.tunnel.send(self._data(b"", fin=True))

    def _data(self, payload: bytes, *, fin: bool = False) -> bytes:
        flags_length = ((FIN if fin else 0) << 24) | len(payload)
        return struct.pack(">II", self.id, flags_length) + payload


class Tunnel:
    """SPDY streams over one upstream WebSocket, read by one task of its own (:meth:`start`)."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.streams: dict[int, Stream] = {}
        self._next_id = 1
        self._buf = bytearray()
        self._deflate = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zdict=DICTIONARY)
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._reader: asyncio.Task[None] | None = None
        self._send_lock = asyncio.Lock()  # a SYN_STREAM's compressed headers go out in order

    @property
    def alive(self) -> bool:
        return not self.ws.closed and self._reader is not None and not self._reader.done()

    def start(self) -> None:
        self._reader = asyncio.create_task(self._read())

    async def open_stream(self, headers: Mapping[str, str], *, fin: bool = False) -> Stream:
        """A new stream with ``headers`` (``fin``: nothing will be sent on it)."""
        async with self._send_lock:
            stream_id, self._next_id = self._next_id, self._next_id + 2
            stream = Stream(self, stream_id)
            self.streams[stream_id] = stream
            block = self._deflate.compress(_header_block(headers))
            block += self._deflate.flush(zlib.Z_SYNC_FLUSH)
            # stream id, associated-to id 0, priority 0 and slot 0, then the header block
            payload = struct.pack(">IIH", stream_id, 0, 0) + block
            stream._sent_fin = fin
            await self.send(_control(SYN_STREAM, FIN if fin else 0, payload))
        return stream

    async def send(self, frame: bytes) -> None:
        if self.ws.closed:
            raise TunnelClosed("the upstream socket is closed")
        await self.ws.send_bytes(frame)

    async def reset(self, stream: Stream) -> None:
        """Abort ``stream`` (RST_STREAM CANCEL) unless it is gone already, and forget it."""
        if self.streams.pop(stream.id, None) is None:
            return
        stream._feed(b"", end=True)
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.send(_control(RST_STREAM, 0, struct.pack(">II", stream.id, CANCEL)))

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        await self.ws.close()

    async def _read(self) -> None:
        try:
            async for msg in self.ws:
                if msg.type == aiohttp.WSMsgType.BINARY:
                    await self._frames(msg.data)
        finally:
            for stream in self.streams.values():
                stream._feed(b"", end=True)
            self.streams.clear()

    async def _frames(self, chunk: bytes) -> None:
        self._buf += chunk
        while len(self._buf) >= 8:
            word, flags_length = struct.unpack_from(">II", self._buf, 0)
            length = flags_length & 0xFFFFFF
            if len(self._buf) < 8 + length:
                return
            flags = flags_length >> 24
            payload = bytes(self._buf[8 : 8 + length])
            del self._buf[: 8 + length]
            if not word & 0x80000000:
                await self._data(word, flags, payload)
            else:
                await self._control(word & 0xFFFF, payload)

    async def _data(self, stream_id: int, flags: int, payload: bytes) -> None:
        stream = self.streams.get(stream_id)
        if stream is None:
            return
        stream._feed(payload, end=bool(flags & FIN))
        if stream._buffered > MAX_BUFFERED:  # its reader stopped reading: drop it, not the rest
            await self.reset(stream)

    async def _control(self, kind: int, payload: bytes) -> None:
        if kind in (SYN_REPLY, HEADERS):
            self._inflate.decompress(payload[4:])  # keeps the shared context in step
        elif kind == RST_STREAM:
            (stream_id,) = struct.unpack_from(">I", payload, 0)
            stream = self.streams.pop(stream_id & 0x7FFFFFFF, None)
            if stream is not None:
                stream._feed(b"", end=True)
        elif kind == PING:
            await self.send(_control(PING, 0, payload[:4]))
        elif kind == GOAWAY:
            await self.ws.close()
        elif kind == SYN_STREAM:  # a server push: port-forward has none, so refuse it
            (stream_id,) = struct.unpack_from(">I", payload, 0)
            self._inflate.decompress(payload[10:])
            await self.send(_control(RST_STREAM, 0, struct.pack(">II", stream_id, 1)))
