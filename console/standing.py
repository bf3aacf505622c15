"""What keeps a person's long-lived streams open: their account, re-validated in one place.

An event stream (watch, logs, events), an exec or attach WebSocket and a port-forward live far
longer than the request that opened them. Each remembers the credential of that request
(``common.sse.Credential``, which the auth middleware puts on every request a named account
makes, by Basic or session) and joins the app's stream registry (``common.sse.StreamRegistry``):
the registry asks the credential again every ``console.security.access-review-ttl`` seconds, and
the credential answers from the account as the store holds it now. An account removed, given
another password or other groups by ``wharf console user ...`` (on this host or, with
PostgreSQL, any replica's) ends the streams it opened within that interval: an SSE stream with
a last ``error`` event (401 ``credential-revoked``, the reason in its detail), a WebSocket with
close code 1008 and the reason, a port-forward stops. Reconnecting signs in again, so new groups
are reviewed afresh. No endpoint re-validates on its own, and no stream polls anything.

The admin login (from the settings) and a trusted proxy's people (named anew on every request)
have nothing here to re-validate; a session's own end (sign-out, idle expiry) still ends its
streams as ``common.sessions`` says. This module must not know what a stream carries.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import attrs
from aiohttp import WSCloseCode, web

from common import sse
from common.errors import WharfError
from console.accounts import Accounts, Standing

#: A WebSocket close reason is at most 123 bytes.
MAX_REASON = 123


def credential(
    accounts: Accounts, standing: Standing, *, every_s: float, session: sse.Credential | None
) -> sse.Credential | None:
    """What a request's long-lived streams remember: ``session`` (if it came with one), and, for
    a named account, the account as ``standing`` saw it, asked again every ``every_s`` seconds."""
    if standing.stamp is None:
        return session  # the admin login: only a restart changes it

    def due(session_ends: float | None) -> float:
        soon = time.time() + every_s
        return soon if session_ends is None else min(soon, session_ends)

    # A sign-out reaches the streams at once (a revocation); the session's store is asked again
    # only once its known expiry has come (an idle session may have been renewed meanwhile).
    session_ends = session.expires if session is not None else None

    async def recheck() -> float | None:
        nonlocal session_ends
        reason = await accounts.changed(standing)
        if reason is not None:
            raise sse.CredentialRevoked(reason)
        if session is None or session_ends is None:
            return due(None)
        if session_ends <= time.time():
            session_ends = await session.recheck() if session.recheck is not None else None
        if session_ends is None or session_ends <= time.time():
            return None
        return due(session_ends)

    keys = session.keys if session is not None else ()
    return sse.Credential(keys, due(session_ends), recheck)


@attrs.define(eq=False)
class GuardedSocket:
    """A WebSocket session as the stream registry holds it: ended by closing it with 1008."""

    ws: web.WebSocketResponse
    credential: sse.Credential | None
    closing: bool = False
    _closer: asyncio.Task[bool] | None = None

    def end(self, error: WharfError) -> None:
        if self.closing:
            return
        self.closing = True
        reason = f"{error.code}: {error.detail}".encode()[:MAX_REASON]
        self._closer = asyncio.create_task(
            self.ws.close(code=WSCloseCode.POLICY_VIOLATION, message=reason),
            name="websocket credential ended",
        )

    async def finish(self) -> None:
        self.closing = True
        if self._closer is not None:
            await self._closer


@contextlib.asynccontextmanager
async def guarded(request: web.Request, ws: web.WebSocketResponse) -> AsyncIterator[None]:
    """While inside: ``ws`` is closed once the credential that opened it no longer holds."""
    registry = request.app[sse.STREAMS]
    held = GuardedSocket(ws, request.get(sse.CREDENTIAL))
    registry.guard(held)
    try:
        yield
    finally:
        registry.unguard(held)
        await held.finish()
