"""Sign-in sessions behind the ``JSESSIONID`` cookie: random ids, idle expiry, bounded in number.

A browser cannot attach HTTP Basic to a WebSocket handshake, so a session stands in for it. Only
the SHA-256 of a session id is held (``common.credentials``), so a dump reveals no usable cookie.
With a PostgreSQL cluster store, sessions live in that database (``use``): every replica shares
them, so a cookie issued by one works on all and signing out ends it everywhere. Otherwise (one
replica) they live in this process: signing out or a restart ends them.

Times are wall-clock seconds, the one clock replicas share. A session's expiry is pushed forward
at most once a minute, so a busy browser does not turn every read into a database write.

An ended session is announced to ``on_end`` (``revocation_key``), which ends the event streams it
opened; a stream reaching its session's expiry asks :meth:`SessionStore.expires` whether other
requests renewed it meanwhile.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

import attrs

from common import credentials
from common.db import Database

COOKIE = "JSESSIONID"
#: Beyond this many live sessions the least recently used is dropped: one admin needs a handful.
MAX_SESSIONS = 1000
#: A session is renewed when less than its idle time minus this much remains.
RENEW_AFTER_S = 60.0


@attrs.frozen
class SignedIn:
    user: str
    expires: float  # epoch seconds, unless renewed by a later request


def revocation_key(session_id: str) -> str:
    """What ending a session is announced as: its digest, never the cookie."""
    return f"session:{credentials.digest(session_id)}"


class SessionStore:
    def __init__(self, *, idle_seconds: float) -> None:
        self.idle_seconds = idle_seconds
        self._memory: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._db: Database | None = None
        self.on_end: Callable[[str], Awaitable[None]] | None = None

    def use(self, db: Database | None) -> None:
        """Keep sessions in ``db`` from now on (None: back to this process's memory)."""
        self._db = db

    async def create(self, user: str) -> str:
        session_id = credentials.new_secret()
        key, expires = credentials.digest(session_id), time.time() + self.idle_seconds
        if self._db is None:
            self._memory[key] = (user, expires)
            while len(self._memory) > MAX_SESSIONS:
                self._memory.popitem(last=False)
            return session_id
        async with self._db.transaction() as conn:
            await conn.execute("DELETE FROM sessions WHERE expires <= ?", (time.time(),))
            await conn.execute(
                "INSERT INTO sessions (id, username, expires) VALUES (?, ?, ?)",
                (key, user, expires),
            )
        return session_id

    async def signed_in(self, session_id: str) -> SignedIn | None:
        """The session's user, renewing its idle time; None when unknown or expired."""
        key, now = credentials.digest(session_id), time.time()
        found = await self._find(key)
        if found is None:
            return None
        user, expires = found
        if expires <= now:
            await self._end(key)
            return None
        if expires - now < self.idle_seconds - RENEW_AFTER_S or self._db is None:
            expires = now + self.idle_seconds
            await self._renew(key, user, expires)
        return SignedIn(user, expires)

    async def expires(self, session_id: str) -> float | None:
        """When the session ends if nothing renews it; None when it has ended. Renews nothing."""
        found = await self._find(credentials.digest(session_id))
        return found[1] if found is not None and found[1] > time.time() else None

    async def end(self, session_id: str) -> None:
        await self._end(credentials.digest(session_id))
        if self.on_end is not None:
            await self.on_end(revocation_key(session_id))

    async def _find(self, key: str) -> tuple[str, float] | None:
        if self._db is None:
            return self._memory.get(key)
        row = await self._db.fetchone("SELECT username, expires FROM sessions WHERE id = ?", (key,))
        return (row[0], float(row[1])) if row is not None else None

    async def _renew(self, key: str, user: str, expires: float) -> None:
        if self._db is None:
            self._memory[key] = (user, expires)
            self._memory.move_to_end(key)
            return
        await self._db.write("UPDATE sessions SET expires = ? WHERE id = ?", (expires, key))

    async def _end(self, key: str) -> None:
        if self._db is None:
            self._memory.pop(key, None)
        else:
            await self._db.write("DELETE FROM sessions WHERE id = ?", (key,))
