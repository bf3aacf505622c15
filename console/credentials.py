"""The admin's password: plain, or a slow hash marked ``{scrypt}``; the only place it is compared.

A hash is written the way Spring's DelegatingPasswordEncoder marks one (``{scrypt}scrypt$n$r$p$salt$
hash``, the same format ``wharf results hash-password`` prints), so a config file need hold no usable
secret; ``{noop}`` marks an explicit plain password. Verifying scrypt costs tens of milliseconds and
HTTP Basic sends the password on every request, so a verified password is remembered as an HMAC
under a per-process random key: a repeat costs one HMAC, and memory never holds the password.

This module does no I/O, never logs, and compares secrets only with ``hmac.compare_digest``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets

from common.config import ConfigError

HASH_PREFIX = "{scrypt}"
PLAIN_PREFIX = "{noop}"
SCHEME = "scrypt"
#: n=2^14, r=8, p=1: the interactive-login cost RFC 7914 and OWASP name (16 MiB, tens of ms).
DEFAULT_N, DEFAULT_R, DEFAULT_P = 2**14, 8, 1
#: Past these a hand-written hash would make one verification cost seconds or gigabytes.
MAX_N, MAX_R, MAX_P = 2**20, 32, 16
_REMEMBERED = 64


def hash_password(
    password: str, *, n: int = DEFAULT_N, r: int = DEFAULT_R, p: int = DEFAULT_P
) -> str:
    """``{scrypt}scrypt$n$r$p$salt$hash`` for the settings file."""
    salt = secrets.token_bytes(16)
    key = _scrypt(password, salt, n, r, p, 32)
    return HASH_PREFIX + "$".join((SCHEME, str(n), str(r), str(p), _b64(salt), _b64(key)))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, size: int) -> bytes:
    return hashlib.scrypt(
        password.encode(), salt=salt, n=n, r=r, p=p, dklen=size, maxmem=128 * r * (n + p + 2) * 2
    )


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _parse_hash(encoded: str) -> tuple[int, int, int, bytes, bytes]:
    parts = encoded.split("$")
    if len(parts) != 6 or parts[0] != SCHEME:
        raise ValueError("expected scrypt$n$r$p$salt$hash")
    n, r, p = (int(v) for v in parts[1:4])
    if not (1 < n <= MAX_N and n & (n - 1) == 0 and 0 < r <= MAX_R and 0 < p <= MAX_P):
        raise ValueError("scrypt parameters out of range")
    salt, key = _unb64(parts[4]), _unb64(parts[5])
    if not salt or len(key) < 16:
        raise ValueError("salt or hash too short")
    return n, r, p, salt, key


class AdminCredentials:
    """Checks a username and password against the configured admin."""

    def __init__(self, username: str, password: str | None) -> None:
        self.username = username
        self._plain: bytes | None = None
        self._hash: tuple[int, int, int, bytes, bytes] | None = None
        if password is not None and password.startswith(HASH_PREFIX):
            try:
                self._hash = _parse_hash(password.removeprefix(HASH_PREFIX))
            except ValueError:
                raise ConfigError(
                    "console.security.admin.password",
                    "a plain password or {scrypt}scrypt$n$r$p$salt$hash "
                    "(wharf console hash-password)",
                ) from None
        elif password:
            self._plain = password.removeprefix(PLAIN_PREFIX).encode()
        self._key = secrets.token_bytes(32)
        self._verified: dict[bytes, None] = {}

    def __repr__(self) -> str:
        return f"AdminCredentials(username={self.username!r}, password_set={self.password_set})"

    @property
    def password_set(self) -> bool:
        return self._plain is not None or self._hash is not None

    async def check(self, username: str, password: str) -> bool:
        user_ok = hmac.compare_digest(username.encode(), self.username.encode())
        password_ok = await self._password_ok(password)
        return user_ok and password_ok

    async def _password_ok(self, password: str) -> bool:
        if self._plain is not None:
            return hmac.compare_digest(password.encode(), self._plain)
        if self._hash is None:
            return False
        mark = hmac.new(self._key, password.encode(), hashlib.sha256).digest()
        if any(hmac.compare_digest(mark, known) for known in self._verified):
            return True
        n, r, p, salt, key = self._hash
        derived = await asyncio.to_thread(_scrypt, password, salt, n, r, p, len(key))
        if not hmac.compare_digest(derived, key):
            return False
        if len(self._verified) >= _REMEMBERED:
            self._verified.pop(next(iter(self._verified)))
        self._verified[mark] = None
        return True
