"""Loopback addresses and ports for tests: a free port, and requests from another address.

A test server started by port number (a subprocess, a database server) takes :func:`free_port`.
Requests from another loopback address are how a test is a second client machine:

Linux answers on all of 127.0.0.0/8, so a client socket bound to 127.0.0.2 reaches a test server
on 127.0.0.1 and the server sees a different peer address, as it would a different machine.
Nothing leaves the loopback interface.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator

import aiohttp


@contextlib.asynccontextmanager
async def session_from(address: str) -> AsyncIterator[aiohttp.ClientSession]:
    """A client session whose connections come from ``address`` (a loopback one)."""
    connector = aiohttp.TCPConnector(local_addr=(address, 0))
    jar = aiohttp.CookieJar(unsafe=True)  # keep cookies of an IP-addressed test server
    async with aiohttp.ClientSession(connector=connector, cookie_jar=jar) as session:
        yield session


def free_port() -> int:
    """A loopback port nothing listens on now (the caller binds it soon after)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
