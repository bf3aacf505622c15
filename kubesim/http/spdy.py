"""A server side of SPDY/3.1 framing, enough for ``kubectl port-forward``'s streams.

kubectl 1.31+ tunnels SPDY inside a WebSocket (subprotocol ``SPDY/3.1+portforward.k8s.io``): the
client opens streams with SYN_STREAM (zlib-compressed header blocks, shared dictionary per
connection), sends DATA frames with FIN to half-close, answers PINGs. The server must reply
SYN_REPLY to accept a stream. Flow control (WINDOW_UPDATE) is ignored, as moby/spdystream does.
This module only frames; what a stream means is up to ``portforward``.
"""

from __future__ import annotations

import asyncio
import struct
import zlib
from collections.abc import Awaitable, Callable

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = (
    1,
    2,
    3,
    4,
    6,
    7,
    8,
    9,
)
FLAG_FIN = 0x01
MAX_DATA = 16 * 1024

_WORDS = [
    "options",
    "head",
    "post",
    "put",
    "delete",
    "trace",
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "connection",
    "content-base",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-md5",
    "content-range",
    "content-type",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "location",
    "max-forwards",
    "pragma",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "retry-after",
    "server",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "vary",
    "via",
    "warning",
    "www-authenticate",
    "method",
    "get",
    "status",
    "200 OK",
    "version",
    "HTTP/1.1",
    "url",
    "public",
    "set-cookie",
    "keep-alive",
    "origin",
]
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 "
    "Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service "
    "UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, "
    "Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml"
    "+xml,text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso"
    "-8859-1,utf-,*,enq=0."
)
# The SPDY/3 header compression dictionary (draft-mbelshe-httpbis-spdy-00 §2.6.10.1).
DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()


class SpdyError(Exception):
    pass


def encode_headers(headers: dict[str, str]) -> bytes:
    out = [struct.pack(">I", len(headers))]
    for k, v in headers.items():
        out += [struct.pack(">I", len(k)), k.encode(), struct.pack(">I", len(v)), v.encode()]
    return b"".join(out)


def decode_headers(block: bytes) -> dict[str, str]:
    (count,) = struct.unpack_from(">I", block, 0)
    pos, out = 4, {}
    for _ in range(count):
        (n,) = struct.unpack_from(">I", block, pos)
        name = block[pos + 4 : pos + 4 + n].decode()
        pos += 4 + n
        (m,) = struct.unpack_from(">I", block, pos)
        out[name] = block[pos + 4 : pos + 4 + m].decode()
        pos += 4 + m
    return out


def control(kind: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(payload)) + payload


def data(stream_id: int, payload: bytes, *, fin: bool = False) -> bytes:
    return (
        struct.pack(">II", stream_id & 0x7FFFFFFF, ((FLAG_FIN if fin else 0) << 24) | len(payload))
        + payload
    )


class Stream:
    def __init__(self, session: Session, stream_id: int, headers: dict[str, str]) -> None:
        self.session, self.id, self.headers = session, stream_id, headers
        self._buf = bytearray()
        self._eof = False
        self._more = asyncio.Event()
        self.closed = False

    def _feed(self, payload: bytes, fin: bool) -> None:
        self._buf += payload
        self._eof = self._eof or fin
        self._more.set()

    async def read(self) -> bytes:
        while not self._buf and not self._eof:
            self._more.clear()
            await self._more.wait()
        out = bytes(self._buf)
        self._buf.clear()
        return out

    async def write(self, payload: bytes) -> None:
        for i in range(0, len(payload), MAX_DATA):
            await self.session.send(data(self.id, payload[i : i + MAX_DATA]))

    async def close(self) -> None:
        """Half-close: a DATA frame with FIN, as spdystream's ``Stream.Close`` sends."""
        if not self.closed:
            self.closed = True
            await self.session.send(data(self.id, b"", fin=True))


class Session:
    """Frames in through :meth:`feed`, frames out through ``send``; new streams go to ``on_stream``."""

    def __init__(
        self,
        send: Callable[[bytes], Awaitable[None]],
        on_stream: Callable[[Stream], Awaitable[None]],
    ) -> None:
        self.send = send
        self.on_stream = on_stream
        self.streams: dict[int, Stream] = {}
        self._buf = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(
            zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, 15, 8, zlib.Z_DEFAULT_STRATEGY, DICTIONARY
        )
        self.goaway = False

    def _headers(self, block: bytes) -> dict[str, str]:
        return decode_headers(self._inflate.decompress(block)) if block else {}

    def _compressed(self, headers: dict[str, str]) -> bytes:
        return self._deflate.compress(encode_headers(headers)) + self._deflate.flush(
            zlib.Z_SYNC_FLUSH
        )

    async def feed(self, chunk: bytes) -> None:
        self._buf += chunk
        while len(self._buf) >= 8:
            word, flags_len = struct.unpack_from(">II", self._buf, 0)
            length = flags_len & 0xFFFFFF
            if len(self._buf) < 8 + length:
                return
            flags = flags_len >> 24
            payload = bytes(self._buf[8 : 8 + length])
            del self._buf[: 8 + length]
            if word & 0x80000000:
                await self._control(word & 0xFFFF, flags, payload)
            else:
                stream = self.streams.get(word & 0x7FFFFFFF)
                if stream is not None:
                    stream._feed(payload, bool(flags & FLAG_FIN))

    async def _control(self, kind: int, flags: int, payload: bytes) -> None:
        if kind == SYN_STREAM:
            (stream_id,) = struct.unpack_from(">I", payload, 0)
            stream_id &= 0x7FFFFFFF
            stream = Stream(self, stream_id, self._headers(payload[10:]))
            self.streams[stream_id] = stream
            if flags & FLAG_FIN:
                stream._feed(b"", True)
            await self.send(
                control(SYN_REPLY, 0, struct.pack(">I", stream_id) + self._compressed({}))
            )
            await self.on_stream(stream)
        elif kind in (HEADERS, SYN_REPLY):
            self._headers(payload[4:])  # keeps the shared zlib context in step
        elif kind == RST_STREAM:
            (stream_id,) = struct.unpack_from(">I", payload, 0)
            reset = self.streams.pop(stream_id & 0x7FFFFFFF, None)
            if reset is not None:
                reset.closed = True
                reset._feed(b"", True)
        elif kind == PING:
            await self.send(control(PING, 0, payload[:4]))
        elif kind == GOAWAY:
            self.goaway = True
