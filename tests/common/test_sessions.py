"""The shared session store on its own clock: idle renewal, fixed lifetime, sign-out, memory bound;
and the throttled order of a sign-in."""

from __future__ import annotations

import pytest

from common import credentials
from common.errors import Unauthorized
from common.sessions import MemorySessionRows, SessionStore, revocation_key, session_id
from common.throttle import LoginThrottle, TooManyAttempts


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class DurableRows(MemorySessionRows):
    """Memory rows that count as a database: renewals are spaced out."""

    durable = True

    def __init__(self) -> None:
        super().__init__()
        self.extended = 0

    async def extend_session(self, session_id: str, expires: float) -> None:
        self.extended += 1
        await super().extend_session(session_id, expires)


async def test_a_cookie_is_kept_only_as_its_digest() -> None:
    store = SessionStore(60.0, renew=True, csrf=True, clock=Clock())
    made = await store.create("admin")
    assert made.session.id == credentials.digest(made.cookie) == session_id(made.cookie)
    assert made.cookie not in repr(made)
    assert made.session.csrf is not None
    assert made.session.csrf not in repr(made.session)
    found = await store.find(made.cookie)
    assert found is not None
    assert found.subject == "admin"
    assert await store.find(made.session.id) is None  # the digest is no cookie


async def test_an_idle_session_is_renewed_by_use_and_ends_when_idle() -> None:
    clock = Clock()
    store = SessionStore(60.0, renew=True, clock=clock)
    made = await store.create("admin")
    clock.now += 50
    assert await store.find(made.cookie) is not None  # used: 60 s from now again
    clock.now += 50
    assert await store.find(made.cookie) is not None
    clock.now += 61
    assert await store.find(made.cookie) is None
    assert await store.expires(made.session.id) is None


async def test_a_fixed_session_ends_its_lifetime_after_sign_in_used_or_not() -> None:
    clock = Clock()
    store = SessionStore(60.0, renew=False, clock=clock)
    made = await store.create("7")
    clock.now += 50
    assert await store.find(made.cookie) is not None
    clock.now += 11
    assert await store.find(made.cookie) is None
    assert await store.purge() == 1
    credential = store.stream_credential(made.session.id, made.session.expires)
    assert credential.recheck is None  # its expiry is final


async def test_database_rows_are_renewed_at_most_once_a_minute() -> None:
    clock, rows = Clock(), DurableRows()
    store = SessionStore(1800.0, renew=True, rows=rows, clock=clock)
    made = await store.create("admin")
    for _ in range(5):
        clock.now += 10
        assert await store.find(made.cookie) is not None
    assert rows.extended == 0
    clock.now += 20  # 70 s since sign-in
    found = await store.find(made.cookie)
    assert rows.extended == 1
    assert found is not None
    assert found.expires == clock.now + 1800.0


async def test_signing_out_announces_the_digest_never_the_cookie() -> None:
    ended: list[str] = []

    async def on_end(key: str) -> None:
        ended.append(key)

    store = SessionStore(60.0, renew=True, clock=Clock(), on_end=on_end)
    made = await store.create("admin")
    await store.end(made.session.id)
    assert ended == [revocation_key(made.session.id)] == [f"session:{made.session.id}"]
    assert made.cookie not in ended[0]
    assert await store.find(made.cookie) is None


async def test_memory_keeps_the_most_recently_used_sessions() -> None:
    store = SessionStore(60.0, renew=True, rows=MemorySessionRows(limit=2), clock=Clock())
    first, second = await store.create("a"), await store.create("b")
    assert await store.find(first.cookie) is not None  # first is now the most recent
    await store.create("c")
    assert await store.find(second.cookie) is None
    assert await store.find(first.cookie) is not None


async def test_a_throttled_attempt_counts_failures_and_refuses_while_locked() -> None:
    throttle = LoginThrottle(free_failures=1, clock=Clock())
    checked: list[str] = []

    async def wrong() -> str:
        checked.append("hash")
        raise Unauthorized("bad credentials")

    with pytest.raises(Unauthorized):
        await throttle.attempt("alice", "10.0.0.1", wrong)
    with pytest.raises(TooManyAttempts):
        await throttle.attempt("alice", "10.0.0.1", wrong)
    assert checked == ["hash"]  # the locked attempt cost no hash
