"""Sign-in sessions of every service: the one store of browser logins, and their cookie.

A session cookie is a random ``common.credentials.new_secret``; only its SHA-256 (the session's
``id``) is kept, so a dump of the rows reveals no usable cookie. :class:`SessionStore` holds the
rules both services share: a new id at every sign-in, expiry, sign-out, and announcing an ended
session (``revocation_key``) to ``on_end``, which the services wire to ``common.revocation`` so the
event streams the session opened end on every replica. Where the rows live is a
:class:`SessionRows`: this process's memory (:class:`MemorySessionRows`, bounded) or a service's
database table (its store module holds that SQL, on SQLite or PostgreSQL alike).

A session ends ``idle_seconds`` after the last request that renewed it. Two rules, one per
contract: with ``renew`` (the console's ``JSESSIONID``) each request that uses it pushes it
forward (in a database at most once a minute, so a busy browser does not turn every read into a
write); without (the results login) nothing does, so it ends that long after sign-in, used or
not. An expired row is left for the next sign-in or ``purge`` to delete. Times are wall-clock
epoch seconds, the one clock replicas share.

The cookie itself (:func:`set_cookie`, :func:`clear_cookie`) is ``HttpOnly``, ``SameSite=Lax``, on
``/``, and ``Secure`` when the request came over HTTPS. This module must not log or return a
cookie value anywhere but to the caller that signs in, and knows no service's users or tables.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Protocol

import attrs
from aiohttp import web

from common import credentials, sse

#: A session is renewed when less than its idle time minus this much remains.
RENEW_AFTER_S = 60.0
#: Beyond this many sessions in memory the least recently used is dropped: one admin needs a few.
MAX_MEMORY_SESSIONS = 1000


@attrs.frozen
class Session:
    id: str  # SHA-256 of the cookie value
    subject: str  # who signed in, as the service names them (a username, a user id)
    expires: float  # epoch seconds
    created: float = 0.0
    csrf: str | None = attrs.field(default=None, repr=False)  # the session's form/CSRF value


@attrs.frozen
class NewSession:
    session: Session
    cookie: str = attrs.field(repr=False)


class SessionRows(Protocol):
    """Where sessions are kept, by id; nothing here judges expiry but ``delete_expired_sessions``."""

    #: Whether a write is a database write (renewals are then spaced out, see ``RENEW_AFTER_S``).
    durable: bool

    async def add_session(self, session: Session) -> None: ...
    async def session(self, session_id: str) -> Session | None: ...
    async def extend_session(self, session_id: str, expires: float) -> None: ...
    async def delete_session(self, session_id: str) -> None: ...
    async def delete_expired_sessions(self, now: float) -> int: ...


class MemorySessionRows:
    """Sessions of this process only: a restart ends them. Least recently used go first."""

    durable = False

    def __init__(self, *, limit: int = MAX_MEMORY_SESSIONS) -> None:
        self._rows: OrderedDict[str, Session] = OrderedDict()
        self._limit = limit

    async def add_session(self, session: Session) -> None:
        self._rows[session.id] = session
        while len(self._rows) > self._limit:
            self._rows.popitem(last=False)

    async def session(self, session_id: str) -> Session | None:
        return self._rows.get(session_id)

    async def extend_session(self, session_id: str, expires: float) -> None:
        if (found := self._rows.get(session_id)) is not None:
            self._rows[session_id] = attrs.evolve(found, expires=expires)
            self._rows.move_to_end(session_id)

    async def delete_session(self, session_id: str) -> None:
        self._rows.pop(session_id, None)

    async def delete_expired_sessions(self, now: float) -> int:
        ended = [key for key, found in self._rows.items() if found.expires <= now]
        for key in ended:
            del self._rows[key]
        return len(ended)


def revocation_key(session_id: str) -> str:
    """What ending a session is announced as: ``session:<digest>``, never the cookie."""
    return f"session:{session_id}"


def session_id(cookie: str) -> str:
    """The id a cookie value is kept and looked up by."""
    return credentials.digest(cookie)


@attrs.define(eq=False)
class SessionStore:
    idle_seconds: float
    #: Whether each use pushes the expiry ``idle_seconds`` forward; if not, it is the lifetime.
    renew: bool
    rows: SessionRows = attrs.field(factory=MemorySessionRows)
    #: Whether a session carries a CSRF value for forms and cookie-authenticated writes.
    csrf: bool = False
    clock: Callable[[], float] = time.time
    #: Told the ``revocation_key`` of every session ended (its streams end).
    on_end: Callable[[str], Awaitable[None]] | None = None

    async def create(self, subject: str) -> NewSession:
        cookie, now = credentials.new_secret(), self.clock()
        csrf = credentials.new_secret() if self.csrf else None
        made = Session(session_id(cookie), subject, now + self.idle_seconds, now, csrf)
        await self.rows.delete_expired_sessions(now)
        await self.rows.add_session(made)
        return NewSession(made, cookie)

    async def find(self, cookie: str) -> Session | None:
        """The cookie's session, renewed if idle-timed; None when unknown or expired."""
        found, now = await self.rows.session(session_id(cookie)), self.clock()
        if found is None:
            return None
        if found.expires <= now:
            return None  # its row goes at the next sign-in or purge
        if self.renew and (
            not self.rows.durable or found.expires - now < self.idle_seconds - RENEW_AFTER_S
        ):
            found = attrs.evolve(found, expires=now + self.idle_seconds)
            await self.rows.extend_session(found.id, found.expires)
        return found

    async def expires(self, session_id: str) -> float | None:
        """When the session ends if nothing renews it; None when it has ended. Renews nothing."""
        found = await self.rows.session(session_id)
        return found.expires if found is not None and found.expires > self.clock() else None

    async def end(self, session_id: str) -> None:
        """Sign out: the session is gone here and its streams end everywhere."""
        await self.rows.delete_session(session_id)
        if self.on_end is not None:
            await self.on_end(revocation_key(session_id))

    async def purge(self) -> int:
        return await self.rows.delete_expired_sessions(self.clock())

    def stream_credential(self, session_id: str, expires: float) -> sse.Credential:
        """What a request's event streams remember: signed out, or past its expiry, the session
        ends them; an idle-timed one is asked again at its expiry whether a request renewed it."""

        async def recheck() -> float | None:
            return await self.expires(session_id)

        return sse.Credential(
            (revocation_key(session_id),), expires, recheck if self.renew else None
        )


def is_https(request: web.Request) -> bool:
    """The request came over HTTPS, directly or as ``X-Forwarded-Proto: https`` from a TLS proxy."""
    return request.secure or request.headers.get("X-Forwarded-Proto", "").lower() == "https"


def set_cookie(
    response: web.StreamResponse,
    name: str,
    cookie: str,
    *,
    secure: bool,
    max_age: float | None = None,
) -> None:
    """The session cookie: script-proof, not sent on cross-site sub-requests, for the whole site."""
    response.set_cookie(
        name,
        cookie,
        max_age=None if max_age is None else int(max_age),
        path="/",
        httponly=True,
        samesite="Lax",
        secure=secure,
    )


def clear_cookie(response: web.StreamResponse, name: str) -> None:
    response.del_cookie(name, path="/", httponly=True, samesite="Lax")
