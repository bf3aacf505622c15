"""A person's long-lived streams end when their account changes under them (issue 33): another
writer of the store (what ``wharf console user`` does, or a PostgreSQL replica) removes an account
or changes its password or groups, and within ``access-review-ttl`` every stream that account
opened ends: an SSE watch or log stream with an ``error`` event (401 ``credential-revoked``
naming the reason), the exec WebSocket with close code 1008, a port-forward stops. Another
person's streams go on. On a simulator enforcing RBAC, as alice (``edit`` in namespace a) and
bob (``view`` everywhere), impersonated."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import pytest

from common.db import open_database
from console.accounts import Accounts
from console.accountstore import SqlAccountStore
from console.clusters.store import SCHEMA
from console.credentials import AdminCredentials
from console.keys import AUTH
from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.identity_support import Spaces, people, shell_running, sleeper_pod
from tests.console.live_cluster import sim
from tests.console.live_support import SseReader, open_stream
from tests.console.resources_support import eventually
from tests.console.support import ADMIN, ADMIN_USER, ALICE, BOB, add_people
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

API = "/api/v1/clusters/alpha"
WATCH = f"{API}/resources/configmaps/watch"
TTL = 0.5
#: How long past the TTL an ending may take on a loaded machine (the recheck itself is quick).
SLACK = 2.0


@pytest.fixture(scope="module")
def spaces(sim: Simulator) -> Spaces:
    return people(sim, sleeper_pod("shell"))


async def _console(console_app: ConsoleApp, *more: str, data_dir: Path | None = None) -> Client:
    return await console_app(
        "clusters.impersonate=on", f"security.access-review-ttl={TTL}",
        "security.open-mode=false", *more, data_dir=data_dir,
    )  # fmt: skip


@pytest.fixture
async def client(console_app: ConsoleApp, tmp_path: Path) -> Client:
    """A console in closed mode whose store (under ``tmp_path / "console"``) has alice and bob."""
    made = await _console(console_app, data_dir=tmp_path / "console")
    await add_people(made)
    return made


@contextlib.asynccontextmanager
async def other_writer(data_dir: Path) -> AsyncIterator[Accounts]:
    """The accounts as ``wharf console user`` reaches them (``console.commands``): its own
    connection to the store, beside the running console's. (``test_people`` runs the command
    itself; starting it here would cost seconds.)"""
    async with open_database(f"sqlite:{data_dir / 'clusters.db'}", SCHEMA) as db:
        yield Accounts(SqlAccountStore(db), AdminCredentials(ADMIN_USER, None))


async def session_of(client: Client, who: dict[str, str]) -> dict[str, str]:
    resp = await client.post("/api/v1/auth/session", headers=who)
    assert resp.status == 200, await resp.text()
    client.session.cookie_jar.clear()
    return {"Cookie": f"JSESSIONID={resp.cookies['JSESSIONID'].value}"}


async def ended(stream: SseReader, reason: str) -> None:
    event = await stream.until("error", timeout=TTL + SLACK)
    problem = event.json()
    assert (problem["status"], problem["code"]) == (401, "credential-revoked"), problem
    assert reason in problem["detail"], problem
    with pytest.raises(EOFError):
        await stream.next(timeout=SLACK)


async def still_open(stream: SseReader, seconds: float) -> bool:
    """Whether ``stream`` goes on for ``seconds`` without an ``error`` event or its end."""
    try:
        async with asyncio.timeout(seconds):
            while (await stream.next(timeout=seconds + 1)).event != "error":
                pass
    except TimeoutError:
        return True
    except EOFError:
        pass
    return False


async def _shell(client: Client, who: dict[str, str], ns: str) -> aiohttp.ClientWebSocketResponse:
    """An interactive ``sh`` in the pod (it waits on stdin: it lasts until something ends it)."""
    query = urlencode({"cluster": "alpha", "namespace": ns, "pod": "shell", "command": "sh"})
    return await client.ws_connect(f"/ws/exec?{query}", headers=who)


async def _closed(ws: aiohttp.ClientWebSocketResponse) -> tuple[int | None, str]:
    """The close code and reason the console ended the socket with."""
    async with asyncio.timeout(TTL + SLACK):
        msg = await ws.receive()
        while msg.type not in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            msg = await ws.receive()
    assert msg.type == aiohttp.WSMsgType.CLOSE, msg
    return int(msg.data), str(msg.extra or "")


async def test_changing_alices_groups_in_the_store_ends_every_stream_she_opened(
    client: Client, spaces: Spaces, tmp_path: Path
) -> None:
    a = spaces.a
    await shell_running(client, a)
    cookie = await session_of(client, ALICE)
    by_basic = await open_stream(client, WATCH, ALICE, namespace=a)
    by_session = await open_stream(client, f"{API}/pods/{a}/shell/log/stream", cookie)
    shell = await _shell(client, ALICE, a)
    body = {"kind": "pod", "namespace": a, "name": "shell", "remotePort": 80}
    started = await client.post(f"{API}/port-forwards", json=body, headers=ALICE)
    assert started.status == 201, await started.text()
    forward = await started.json()
    bobs = await open_stream(client, WATCH, BOB, namespace=a)

    async with other_writer(
        tmp_path / "console"
    ) as accounts:  # what `wharf console user set-groups` does
        await accounts.set_groups("alice", ["team-a", "dev"])
    since = time.monotonic()
    await ended(by_basic, "the groups of account alice changed")
    await ended(by_session, "the groups of account alice changed")
    code, reason = await _closed(shell)
    assert code == aiohttp.WSCloseCode.POLICY_VIOLATION, (code, reason)
    assert "groups of account alice changed" in reason
    assert time.monotonic() - since < TTL + SLACK

    async def forward_gone() -> bool:
        listed = await (await client.get(f"{API}/port-forwards", headers=ADMIN)).json()
        return forward["id"] not in [f["id"] for f in listed]

    await eventually(forward_gone, what="alice's port-forward to stop")
    assert await still_open(bobs, 0.2)
    # She comes back with her new groups, reviewed afresh (admitted: team-a may edit a).
    again = await open_stream(client, WATCH, ALICE, namespace=a)
    assert (await again.next(timeout=SLACK)).event == "ADDED"


async def test_a_new_password_or_a_removed_account_ends_the_streams_and_sessions(
    client: Client, spaces: Spaces, tmp_path: Path
) -> None:
    a = spaces.a
    cookie = await session_of(client, ALICE)
    by_basic = await open_stream(client, WATCH, ALICE, namespace=a)
    by_session = await open_stream(client, WATCH, cookie, namespace=a)
    renewed = "another-Password-9876"
    async with other_writer(tmp_path / "console") as accounts:
        await accounts.set_password("alice", renewed)
        await ended(by_basic, "the password of account alice changed")
        await ended(by_session, "the password of account alice changed")
        await assert_problem(await client.get(WATCH, headers=ALICE), 401)
        # A new password signs her out everywhere: the old session is gone too.
        await assert_problem(await client.get(WATCH, params={"namespace": a}, headers=cookie), 401)
        alice = {"Authorization": aiohttp.encode_basic_auth("alice", renewed)}
        cookie = await session_of(client, alice)
        by_session = await open_stream(client, WATCH, cookie, namespace=a)
        await accounts.remove("alice")
        await ended(by_session, "the account alice was removed")
    await assert_problem(await client.get(WATCH, params={"namespace": a}, headers=cookie), 401)


async def test_a_replica_ends_the_streams_of_an_account_removed_on_another(
    console_app: ConsoleApp, spaces: Spaces, pg_url: str, tmp_path: Path
) -> None:
    shared = (f"clusters.store.url={pg_url}", "clusters.store.encryption-key=" + "k" * 32)
    one = await _console(console_app, *shared, data_dir=tmp_path / "one")
    other = await _console(console_app, *shared, data_dir=tmp_path / "other")
    await add_people(one)
    stream = await open_stream(other, WATCH, ALICE, namespace=spaces.a)
    bobs = await open_stream(other, WATCH, BOB, namespace=spaces.a)
    await one.app[AUTH].accounts.remove("alice")
    await ended(stream, "the account alice was removed")
    assert await still_open(bobs, 0.2)
