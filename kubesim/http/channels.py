"""The Kubernetes channel protocols over WebSocket (``*.channel.k8s.io``), framing only.

Every message carries one channel byte then data: 0 stdin, 1 stdout, 2 stderr, 3 error/status,
4 resize (exec/attach), or per-port data/error pairs (port-forward). ``base64`` variants send text
frames with the channel as an ASCII digit and base64 data. ``v5`` adds the CLOSE message
(``255, <channel>``) that half-closes a stream. This module never interprets channel contents.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

EXEC_PROTOCOLS = (
    "v5.channel.k8s.io",
    "v4.channel.k8s.io",
    "v4.base64.channel.k8s.io",
    "v3.channel.k8s.io",
    "v2.channel.k8s.io",
    "channel.k8s.io",
    "base64.channel.k8s.io",
)
PORTFORWARD_PROTOCOLS = (
    "v4.channel.k8s.io",
    "v4.base64.channel.k8s.io",
    "channel.k8s.io",
    "base64.channel.k8s.io",
)
CLOSE = 255


def offered(request: web.Request) -> list[str]:
    return [
        p.strip()
        for h in request.headers.getall("Sec-WebSocket-Protocol", [])
        for p in h.split(",")
        if p.strip()
    ]


def choose(request: web.Request, supported: tuple[str, ...]) -> str | None:
    """The protocol to answer with: the client's first that we speak (client-go's order rules)."""
    return next((p for p in offered(request) if p in supported), None)


class Channels:
    def __init__(self, ws: web.WebSocketResponse, protocol: str) -> None:
        self.ws = ws
        self.protocol = protocol or "channel.k8s.io"
        self.base64 = "base64" in self.protocol
        head = self.protocol.split(".", 1)[0]
        self.version = int(head[1:]) if head.startswith("v") and head[1:].isdigit() else 1

    async def send(self, channel: int, data: bytes) -> None:
        if self.ws.closed:
            return
        if self.base64:
            await self.ws.send_str(str(channel) + base64.b64encode(data).decode())
        else:
            await self.ws.send_bytes(bytes([channel]) + data)

    async def messages(self) -> AsyncIterator[tuple[int, bytes]]:
        """Incoming (channel, data) until the client closes; malformed frames are skipped."""
        async for msg in self.ws:
            if msg.type == aiohttp.WSMsgType.BINARY and msg.data:
                yield msg.data[0], bytes(msg.data[1:])
            elif msg.type == aiohttp.WSMsgType.TEXT and msg.data and self.base64:
                try:
                    yield int(msg.data[0]), base64.b64decode(msg.data[1:])
                except ValueError:
                    continue
            elif msg.type in (aiohttp.WSMsgType.ERROR, aiohttp.WSMsgType.CLOSE):
                return
