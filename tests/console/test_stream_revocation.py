"""An event stream opened with a session ends when the session does: signed out (on another
replica too: ``test_replicas``) or idle past its expiry. Streams opened with HTTP Basic are not
affected."""

from __future__ import annotations

import asyncio

import pytest

from console.keys import AUTH
from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.live_support import SseReader, open_stream
from tests.console.support import ADMIN
from tests.typing_support import Client

WATCH = "/api/v1/clusters/alpha/resources/configmaps/watch"


async def session_of(client: Client) -> dict[str, str]:
    resp = await client.post("/api/v1/auth/session", headers=ADMIN)
    assert resp.status == 200, await resp.text()
    client.session.cookie_jar.clear()  # the cookie is sent by hand
    return {"Cookie": f"JSESSIONID={resp.cookies['JSESSIONID'].value}"}


async def watching(client: Client, headers: dict[str, str]) -> SseReader:
    return await open_stream(client, WATCH, headers, namespace="default")


async def ended(stream: SseReader) -> None:
    """The stream's last event says why it ends, and then it ends."""
    event = await stream.until("error", timeout=5)
    assert (event.json()["status"], event.json()["code"]) == (401, "credential-revoked")
    with pytest.raises(EOFError):
        await stream.next(timeout=5)


async def still_open(stream: SseReader, seconds: float) -> bool:
    try:
        await stream.next(timeout=seconds)
    except TimeoutError:
        return True
    return False


async def test_signing_out_ends_the_sessions_streams(
    console_app: ConsoleApp, sim: Simulator
) -> None:
    client = await console_app("security.open-mode=false")
    cookie = await session_of(client)
    by_session = await watching(client, cookie)
    by_basic = await watching(client, ADMIN)
    assert (await client.delete("/api/v1/auth/session", headers=cookie)).status == 204
    await ended(by_session)
    assert await still_open(by_basic, 0.3)


async def test_an_idle_session_ends_its_streams_unless_renewed(
    console_app: ConsoleApp, sim: Simulator
) -> None:
    client = await console_app("security.open-mode=false")
    cookie = await session_of(client)
    client.app[AUTH].sessions.idle_seconds = 0.6
    stream = await watching(client, cookie)  # its session ends in 0.6 s unless used
    await asyncio.sleep(0.3)
    assert (await client.get("/api/v1/clusters", headers=cookie)).status == 200  # renewed
    assert await still_open(stream, 0.5)  # the first expiry passed: the session still held
    await ended(stream)  # then idle: it ends with the session
