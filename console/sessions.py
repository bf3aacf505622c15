"""Sign-in sessions behind the ``JSESSIONID`` cookie: random ids, idle expiry, bounded in number.

A browser cannot attach HTTP Basic to a WebSocket handshake, so a session stands in for it. Only
the SHA-256 of a session id is held, so a memory dump reveals no usable cookie. Sessions live in
this process (one admin, one instance); signing out or a restart ends them.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import OrderedDict

import attrs

COOKIE = "JSESSIONID"
#: Beyond this many live sessions the least recently used is dropped: one admin needs a handful.
MAX_SESSIONS = 1000


@attrs.define
class _Session:
    user: str
    expires: float


class SessionStore:
    def __init__(self, *, idle_seconds: float) -> None:
        self.idle_seconds = idle_seconds
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    def create(self, user: str) -> str:
        session_id = secrets.token_urlsafe(32)
        self._sessions[_digest(session_id)] = _Session(user, time.monotonic() + self.idle_seconds)
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return session_id

    def user(self, session_id: str) -> str | None:
        """The session's user, renewing its idle time; None when unknown or expired."""
        key = _digest(session_id)
        session = self._sessions.get(key)
        now = time.monotonic()
        if session is None:
            return None
        if session.expires <= now:
            del self._sessions[key]
            return None
        session.expires = now + self.idle_seconds
        self._sessions.move_to_end(key)
        return session.user

    def end(self, session_id: str) -> None:
        self._sessions.pop(_digest(session_id), None)

    def __len__(self) -> int:
        return len(self._sessions)


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()
