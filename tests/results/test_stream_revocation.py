"""An event stream ends when the credential that opened it is revoked or expires: a session
signed out, a token revoked, a session past its end; with PostgreSQL, on every replica."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from results import keys
from results.store.accounts import stamp
from tests.conftest import ApiClient
from tests.results.people import (
    KEEPALIVE_S,
    EventReader,
    alice_signed_in,
    bearer,
    login,
    make_token,
    make_user,
    page_csrf,
    start,
)
from tests.typing_support import Client


async def subscribe(client: Client, **headers: str) -> EventReader:
    resp = await client.get("/api/v1/events", headers=headers)
    assert resp.status == 200, await resp.text()
    stream = EventReader(resp)
    assert (await stream.next())["event"] == "connected"
    return stream


async def revoked(stream: EventReader) -> None:
    """The stream's last event says why it ends, and then it ends."""
    event = await stream.next()
    assert event["event"] == "error"
    problem = json.loads(event["data"])
    assert (problem["status"], problem["code"]) == (401, "credential-revoked")
    with pytest.raises(EOFError):
        await stream.next()


async def test_signing_out_ends_the_sessions_streams(api_client: ApiClient, tmp_path: Path) -> None:
    client = await start(api_client, tmp_path)
    await make_user(client, "alice")
    token = await make_token(client, "alice")
    await login(client, "alice")
    by_session = await subscribe(client)
    by_token = await subscribe(client, **bearer(token))
    csrf = await page_csrf(client)
    resp = await client.post("/logout", data={"csrf": csrf}, allow_redirects=False)
    assert resp.status == 303
    await revoked(by_session)
    assert await by_token.none_within(KEEPALIVE_S * 2)  # another credential: it goes on
    assert len(client.app[keys.EVENTS].subscriptions) == 1


async def test_revoking_a_token_ends_its_streams(api_client: ApiClient, tmp_path: Path) -> None:
    client = await start(api_client, tmp_path)
    await make_user(client, "alice")
    token, other = await make_token(client, "alice"), await make_token(client, "alice")
    first = await subscribe(client, **bearer(token))
    second = await subscribe(client, **bearer(token))
    kept = await subscribe(client, **bearer(other))
    accounts = client.app[keys.ACCOUNTS]
    alice = await accounts.user("alice")
    mine = [t for t in await accounts.tokens(alice) if t.revoked_at is None]
    await accounts.revoke_token(alice, min(t.id for t in mine))  # the first token made
    await revoked(first)
    await revoked(second)
    assert await kept.none_within(KEEPALIVE_S * 2)


async def test_a_stream_ends_when_its_session_does(api_client: ApiClient, tmp_path: Path) -> None:
    client = await alice_signed_in(api_client, tmp_path)
    # A session 12 hours old, with a fraction of a second left:
    soon = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=0.3)
    await client.app[keys.DATABASE].write("UPDATE sessions SET expires_at = ?", (stamp(soon),))
    stream = await subscribe(client)
    await revoked(stream)  # at the session's end, without anyone polling for it


async def test_a_revocation_on_one_replica_ends_streams_on_another(
    api_client: ApiClient, tmp_path: Path, pg_url: str
) -> None:
    a = await start(api_client, tmp_path / "a", f"results.db.url={pg_url}")
    b = await start(api_client, tmp_path / "b", f"results.db.url={pg_url}")
    await make_user(a, "alice")
    token = await make_token(a, "alice")
    on_b = await subscribe(b, **bearer(token))
    accounts = a.app[keys.ACCOUNTS]
    alice = await accounts.user("alice")
    await accounts.revoke_token(alice, (await accounts.tokens(alice))[0].id)
    await revoked(on_b)  # told through NOTIFY: replica b never looked the token up again
