"""What the accounts, auth, events, web and command tests share: an app client, users, tokens, login.

Users and tokens are made through the running app's own ``Accounts`` (the real store on a real
SQLite file); login goes through the real form, CSRF and all.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from aiohttp import ClientResponse

from results import keys
from results.accounts import Role, User
from results.app import create_app
from tests.conftest import ApiClient
from tests.results.support import settings_for
from tests.typing_support import Client

KEEPALIVE_S = 0.2
CSRF_FIELD = re.compile(r'name="csrf" value="([^"]+)"')


async def start(api_client: ApiClient, tmp_path: Path, *sets: str) -> Client:
    return await api_client(create_app(settings_for(tmp_path, *sets), keepalive_s=KEEPALIVE_S))


async def make_user(
    client: Client, name: str, *, password: str | None = None, role: Role = Role.MEMBER
) -> User:
    accounts = client.app[keys.ACCOUNTS]
    encoded = await accounts.hash(password or f"pw-{name}-secret")
    return await accounts.add_user(name, password_hash=encoded, role=role, email=f"{name}@x.test")


async def make_token(client: Client, name: str, **kwargs: Any) -> str:
    accounts = client.app[keys.ACCOUNTS]
    made = await accounts.create_token(await accounts.user(name), "test", **kwargs)
    return made.value


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def csrf_in(html: str) -> str:
    found = CSRF_FIELD.search(html)
    assert found, "no csrf field in the page"
    return found.group(1)


async def login(client: Client, name: str, password: str | None = None) -> None:
    """Log in through the form; the client's cookie jar then holds the session."""
    page = await client.get("/login")
    csrf = csrf_in(await page.text())
    form = {"username": name, "password": password or f"pw-{name}-secret", "csrf": csrf}
    resp = await client.post("/login", data=form, allow_redirects=False)
    assert resp.status == 303, await resp.text()


async def alice_signed_in(api_client: ApiClient, tmp_path: Path, *sets: str) -> Client:
    """A client of a new app (``sets`` applied) on which ``alice`` holds a session."""
    client = await start(api_client, tmp_path, *sets)
    await make_user(client, "alice")
    await login(client, "alice")
    return client


async def page_csrf(client: Client, path: str = "/profile") -> str:
    return csrf_in(await (await client.get(path)).text())


class EventReader:
    """Reads SSE events (``event``, ``id``, ``data``) from a response, skipping comment lines."""

    def __init__(self, resp: ClientResponse) -> None:
        self.resp = resp
        self.buffer = ""

    async def next(self, *, timeout: float = 3.0) -> dict[str, str]:
        async with asyncio.timeout(timeout):
            while True:
                block, sep, rest = self.buffer.replace("\r\n", "\n").partition("\n\n")
                if sep:
                    self.buffer = rest
                    event = _fields(block)
                    if event:
                        return event
                    continue
                chunk = await self.resp.content.readany()
                if not chunk:
                    raise EOFError("the stream ended")
                self.buffer += chunk.decode()

    async def none_within(self, seconds: float) -> bool:
        """True when no event (comments aside) arrives for ``seconds``."""
        try:
            await self.next(timeout=seconds)
        except TimeoutError:
            return True
        return False


def _fields(block: str) -> dict[str, str]:
    fields = {}
    for line in block.split("\n"):
        if line and not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
    return fields
