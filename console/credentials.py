"""The admin's password: plain, ``{noop}``, or a slow hash marked ``{scrypt}``; checked only here.

The hash format and its parsing are ``common.credentials`` (the same as ``wharf results
hash-password`` prints). Verifying scrypt costs tens of milliseconds and HTTP Basic sends the
password on every request, so a verified password is remembered as an HMAC under a per-process
random key: a repeat costs one HMAC, and memory never holds the password.

This module does no I/O, never logs, and compares secrets only in constant time.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets

from common import credentials

_REMEMBERED = 64
SETTING = "console.security.admin.password"


class AdminCredentials:
    """Checks a username and password against the configured admin."""

    def __init__(self, username: str, password: str | None) -> None:
        self.username = username
        self._plain: str | None = None
        self._hash: credentials.ScryptHash | None = None
        if password is not None:
            self._hash = credentials.setting_hash(password, setting=SETTING)
        if password and self._hash is None:
            self._plain = password.removeprefix(credentials.PLAIN_PREFIX)
        self._key = secrets.token_bytes(32)
        self._verified: dict[bytes, None] = {}

    def __repr__(self) -> str:
        return f"AdminCredentials(username={self.username!r}, password_set={self.password_set})"

    @property
    def password_set(self) -> bool:
        return self._plain is not None or self._hash is not None

    async def check(self, username: str, password: str) -> bool:
        user_ok = credentials.same_secret(username, self.username)
        password_ok = await self._password_ok(password)
        return user_ok and password_ok

    async def _password_ok(self, password: str) -> bool:
        if self._plain is not None:
            return credentials.same_secret(password, self._plain)
        if self._hash is None:
            return False
        mark = hmac.new(self._key, password.encode(), hashlib.sha256).digest()
        if any(hmac.compare_digest(mark, known) for known in self._verified):
            return True
        if not await asyncio.to_thread(credentials.matches, password, self._hash):
            return False
        if len(self._verified) >= _REMEMBERED:
            self._verified.pop(next(iter(self._verified)))
        self._verified[mark] = None
        return True
