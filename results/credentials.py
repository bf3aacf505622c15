"""Password hashes and random credentials: the only place secrets are made or compared.

Passwords are hashed with scrypt (memory-hard, in the standard library) and a per-user salt, in a
self-describing format ``scrypt$n$r$p$salt$hash`` so the cost can be raised later without breaking
stored hashes. API tokens and session cookies are random ``secrets.token_urlsafe`` values that are
stored only as their SHA-256 digest: a database leak reveals no usable credential.

This module must not log, store or return a secret anywhere but to its caller, and it must compare
secrets only with ``hmac.compare_digest``. It does no I/O; hashing is CPU-bound, so async callers
run :func:`verify_password` and :func:`hash_password` in a worker thread.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SCHEME = "scrypt"
#: Settings may carry an already-hashed password, marked the way Spring's DelegatingPasswordEncoder
#: marks one (``{scrypt}scrypt$...``), so a plain secret need never be written into a config file.
HASHED_PREFIX = "{scrypt}"
#: n=2^14, r=8, p=1 is the interactive-login cost RFC 7914 and OWASP name: 16 MiB and tens of ms.
DEFAULT_N, DEFAULT_R, DEFAULT_P = 2**14, 8, 1
SALT_BYTES = 16
KEY_BYTES = 32
#: Bounds on parameters read back from a stored hash (a hand-written ``{scrypt}`` setting may carry
#: any): past these one verification would cost seconds or gigabytes.
MAX_N, MAX_R, MAX_P = 2**20, 32, 16
TOKEN_PREFIX = "wrt_"  # noqa: S105 - recognisable in a leaked log or a secret scanner, like ghp_ or glpat-


class InvalidHash(ValueError):
    """A stored or configured hash that is not in our format (never includes the hash itself)."""


def hash_password(
    password: str, *, n: int = DEFAULT_N, r: int = DEFAULT_R, p: int = DEFAULT_P
) -> str:
    salt = secrets.token_bytes(SALT_BYTES)
    key = _scrypt(password, salt, n, r, p)
    return "$".join((SCHEME, str(n), str(r), str(p), _b64(salt), _b64(key)))


def verify_password(password: str, encoded: str) -> bool:
    """True when ``password`` matches ``encoded``; False for a wrong password or a malformed hash."""
    try:
        n, r, p, salt, expected = parse_hash(encoded)
    except InvalidHash:
        return False
    return hmac.compare_digest(_scrypt(password, salt, n, r, p, size=len(expected)), expected)


def parse_hash(encoded: str) -> tuple[int, int, int, bytes, bytes]:
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
    if len(salt) < 8 or len(key) < 16:
        raise InvalidHash("scrypt salt or hash too short")
    return n, r, p, salt, key


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


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def new_session_secret() -> str:
    return secrets.token_urlsafe(32)


def digest(value: str) -> str:
    """SHA-256 hex of a token or session cookie: what the store keeps and looks up by."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def same_secret(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, *, size: int = KEY_BYTES) -> bytes:
    maxmem = 128 * n * r * p + 1024 * 1024
    return hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=maxmem, dklen=size
    )


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
