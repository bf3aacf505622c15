"""Helpers for the live-half tests: an SSE stream opened and read over a real response, and the
simulator's own count of open watches."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import attrs

from kubesim import Simulator
from tests.typing_support import Client


@attrs.frozen
class Event:
    event: str
    data: str
    id: str | None = None

    def json(self) -> Any:
        return json.loads(self.data)


class SseReader:
    """Reads events from an open ``text/event-stream`` response; comments are counted."""

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self.resp = resp
        self.comments: list[str] = []

    async def next(self, timeout: float = 5.0) -> Event:
        fields: dict[str, str] = {}
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.resp.content.readline()
                if not raw:
                    raise EOFError("the stream ended")
                line = raw.decode().rstrip("\r\n")
                if not line:
                    if fields:
                        return Event(fields.get("event", "message"), fields.get("data", ""),
                                     fields.get("id"))  # fmt: skip
                    continue
                if line.startswith(":"):
                    self.comments.append(line)
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                fields[name] = f"{fields[name]}\n{value}" if name in fields else value

    async def take(self, count: int, timeout: float = 5.0) -> list[Event]:
        return [await self.next(timeout) for _ in range(count)]

    async def until(self, event: str, timeout: float = 5.0) -> Event:
        while True:
            found = await self.next(timeout)
            if found.event == event:
                return found


async def open_stream(
    client: Client, path: str, headers: dict[str, str] | None = None, **params: str
) -> SseReader:
    """GET ``path`` (with ``params`` as its query) as an event stream: it must answer 200 with
    ``text/event-stream``."""
    resp = await client.get(path, params=params, headers=headers or {})
    assert resp.status == 200, await resp.text()
    assert resp.content_type == "text/event-stream"
    return SseReader(resp)


def upstream_watches(sim: Simulator, group: str, resource: str) -> int:
    """Watches of ``group/resource`` the simulator is serving right now."""
    return sim.call(lambda state: state.objects.store.subscribers((group, resource)))
