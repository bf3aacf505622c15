"""Passwords and random secrets for every service: the one place they are made, hashed or compared.

Passwords are hashed with scrypt (memory-hard, in the standard library) and a per-hash salt, in a
self-describing format ``scrypt$n$r$p$salt$hash`` so the cost can be raised later without breaking
stored hashes. A setting may carry an already-hashed password marked the way Spring's
DelegatingPasswordEncoder marks one (``{scrypt}scrypt$...``, what ``wharf results|console
hash-password`` print), so a config file need hold no usable secret; ``{noop}`` marks an explicit
plain one. Session cookies and API tokens are random ``secrets.token_urlsafe`` values kept only as
their SHA-256 digest: a database or memory dump reveals no usable credential.

This module must not log, store or return a secret anywhere but to its caller, and it compares
secrets only with ``hmac.compare_digest``. It does no I/O; hashing is CPU-bound, so async callers
run :func:`verify_password`, :func:`hash_password` and :func:`matches` in a worker thread, as the
accounts of every service do through one :class:`Hasher`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets

import attrs

from common.config import ConfigError
from common.errors import BadRequest

SCHEME = "scrypt"
HASHED_PREFIX = "{scrypt}"
PLAIN_PREFIX = "{noop}"
#: n=2^14, r=8, p=1 is the interactive-login cost RFC 7914 and OWASP name: 16 MiB and tens of ms.
DEFAULT_N, DEFAULT_R, DEFAULT_P = 2**14, 8, 1
SALT_BYTES = 16
KEY_BYTES = 32
#: Bounds on parameters read back from a stored hash (a hand-written ``{scrypt}`` setting may carry
#: any): past these one verification would cost seconds or gigabytes.
MAX_N, MAX_R, MAX_P = 2**20, 32, 16
#: A salt shorter than this is no salt worth the name; a key shorter than 16 bytes is guessable.
MIN_SALT_BYTES, MIN_KEY_BYTES = 8, 16


class InvalidHash(ValueError):
    """A stored or configured hash that is not in our format (never includes the hash itself)."""


@attrs.frozen(repr=False)
class ScryptHash:
    """A parsed ``scrypt$n$r$p$salt$hash``; ``repr`` shows the cost only."""

    n: int
    r: int
    p: int
    salt: bytes
    key: bytes

    def __repr__(self) -> str:
        return f"ScryptHash(n={self.n}, r={self.r}, p={self.p})"


def hash_password(
    password: str, *, n: int = DEFAULT_N, r: int = DEFAULT_R, p: int = DEFAULT_P
) -> str:
    """``scrypt$n$r$p$salt$hash`` with a fresh salt: what a store keeps."""
    salt = secrets.token_bytes(SALT_BYTES)
    key = _scrypt(password, salt, n, r, p, KEY_BYTES)
    return "$".join((SCHEME, str(n), str(r), str(p), _b64(salt), _b64(key)))


def settings_hash(password: str) -> str:
    """``{scrypt}scrypt$...``: what the ``hash-password`` commands print for a settings file."""
    return HASHED_PREFIX + hash_password(password)


def parse_hash(encoded: str) -> ScryptHash:
    parts = encoded.split("$")
    if len(parts) != 6 or parts[0] != SCHEME:
        raise InvalidHash("expected scrypt$n$r$p$salt$hash")
    try:
        n, r, p = (int(v) for v in parts[1:4])
        salt, key = _unb64(parts[4]), _unb64(parts[5])
    except ValueError:
        raise InvalidHash("scrypt parameters must be integers and base64") from None
    if not (1 < n <= MAX_N and n & (n - 1) == 0 and 0 < r <= MAX_R and 0 < p <= MAX_P):
        raise InvalidHash("scrypt parameters out of range")
    if len(salt) < MIN_SALT_BYTES or len(key) < MIN_KEY_BYTES:
        raise InvalidHash("scrypt salt or hash too short")
    return ScryptHash(n, r, p, salt, key)


def matches(password: str, stored: ScryptHash) -> bool:
    """Whether ``password`` derives ``stored``'s key under its salt and cost."""
    derived = _scrypt(password, stored.salt, stored.n, stored.r, stored.p, len(stored.key))
    return hmac.compare_digest(derived, stored.key)


def verify_password(password: str, encoded: str) -> bool:
    """True when ``password`` matches ``encoded``; False for a wrong password or a malformed hash."""
    try:
        stored = parse_hash(encoded)
    except InvalidHash:
        return False
    return matches(password, stored)


def setting_hash(value: str, *, setting: str) -> ScryptHash | None:
    """The hash a ``{scrypt}``-marked password setting carries; None for a plain password. A
    malformed one stops start-up with the same error in every service, naming ``setting``."""
    if not value.startswith(HASHED_PREFIX):
        return None
    try:
        return parse_hash(value.removeprefix(HASHED_PREFIX))
    except InvalidHash:
        service = setting.partition(".")[0]
        raise ConfigError(
            setting,
            f"a plain password or {{scrypt}}scrypt$n$r$p$salt$hash (wharf {service} hash-password)",
        ) from None


def configured_password_hash(value: str) -> str:
    """The hash to store for a password given in settings: plain text, or ``{scrypt}``-prefixed."""
    if value.startswith(HASHED_PREFIX):
        encoded = value.removeprefix(HASHED_PREFIX)
        parse_hash(encoded)
        return encoded
    return hash_password(value)


def dummy_hash() -> str:
    """A hash to verify against when the user does not exist, so timing does not reveal that."""
    return hash_password(secrets.token_urlsafe(16))


def new_secret() -> str:
    """A random session id or CSRF value (256 bits)."""
    return secrets.token_urlsafe(32)


def digest(value: str) -> str:
    """SHA-256 hex of a token or session cookie: what a store keeps and looks up by."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def same_secret(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, size: int) -> bytes:
    maxmem = 128 * n * r * p + 1024 * 1024
    return hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=maxmem, dklen=size
    )


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


#: Password hashes computed at once; each is ~16 MiB and tens of ms of CPU, and logins are not
#: throttled.
HASH_SLOTS = 2


@attrs.define
class Hasher:
    """Hashes and checks the passwords of a service's accounts in worker threads, at most
    ``HASH_SLOTS`` at once."""

    _slots: asyncio.Semaphore = attrs.field(factory=lambda: asyncio.Semaphore(HASH_SLOTS))
    _dummy: str | None = attrs.field(default=None, repr=False)

    async def hash(self, password: str) -> str:
        if not password:
            raise BadRequest("the password must not be empty", code="empty-password")
        async with self._slots:
            return await asyncio.to_thread(hash_password, password)

    async def verify(self, password: str, encoded: str | None) -> bool:
        """Whether ``password`` matches ``encoded``. No hash (no such account) is never a match,
        but costs the same hash as a real one, so timing does not tell unknown names apart."""
        if encoded is None and self._dummy is None:
            self._dummy = await asyncio.to_thread(dummy_hash)
        against = encoded if encoded is not None else self._dummy
        assert against is not None
        async with self._slots:
            ok = await asyncio.to_thread(verify_password, password, against)
        return ok and encoded is not None
