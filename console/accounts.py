"""People of the console: named accounts with groups, beside the contract's single admin login.

An account is a user name, a password hash (``common.credentials``' scrypt, exactly as results
keeps its users') and the groups the person is sent to a cluster with (``Identity``). The admin
login stays as the contract has it (``console.credentials``) and is a person too, in the groups
``console.security.admin.groups``. Accounts live in the console store (``console.accountstore``)
and are managed with ``wharf console user ...``; the server reads an account on every request
that names it, so removing one or changing its groups takes effect at the next request, sessions
included, and a new password ends the sessions made with the old one (``Standing``). Long-lived
streams are re-validated on an interval (``console.standing``).

Why not results' account model in ``common``: results' users carry roles, project memberships and
API tokens, the console's carry groups and nothing else; one shared model would make each service
hold the other's concepts. What is truly shared — the hash format, its cost and checks — already
lives in ``common.credentials``, and both stores use it.

Basic sends the password on every request and scrypt costs tens of milliseconds, so a verified
password is remembered as an HMAC (per-process random key) of the user, the stored hash and the
password: a changed password misses it. This module must not know HTTP, log a password or put a
hash in a ``repr``.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import time
from collections.abc import Iterable
from typing import Protocol

import attrs

from common import credentials
from common.errors import BadRequest, Conflict, NotFound
from console.credentials import AdminCredentials
from console.identity import Identity

logger = logging.getLogger(__name__)

#: Like results' user names; no ``:`` so no account can pose as a ``system:`` identity.
USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
#: A Kubernetes group name: printable, no comma (the proxy header and the CLI separate by commas).
GROUP = re.compile(r"^[^\s,\x00-\x1f\x7f][^,\x00-\x1f\x7f]{0,252}$")
DEFAULT_ADMIN_GROUPS = ("wharf:admins",)
#: How long an account read for a recheck serves other rechecks: the streams due at one moment
#: (a person's many tabs, a burst of rechecks) share one read of the store.
RECHECK_SHARED_S = 0.2
_REMEMBERED = 256


@attrs.frozen
class Account:
    username: str
    groups: tuple[str, ...]

    @property
    def identity(self) -> Identity:
        return Identity(self.username, self.groups)


@attrs.frozen
class StoredAccount:
    account: Account
    password_hash: str = attrs.field(repr=False)


@attrs.frozen
class Standing:
    """Who signed in and what their account was at that moment: its groups and a digest of its
    password hash (``stamp``; None for the admin login, which only a restart changes). A person's
    long-lived streams keep it and end once the account no longer matches it, and a session
    keeps the stamp so that a new password ends it (``session_subject``)."""

    identity: Identity
    stamp: str | None = attrs.field(default=None, repr=False)

    @property
    def session_subject(self) -> str:
        """What a session signed in as this person is kept under: the user name, and for a named
        account its stamp after a space (no account name holds one)."""
        user = self.identity.user
        return user if self.stamp is None else f"{user} {self.stamp}"


def session_person(subject: str) -> tuple[str, str | None]:
    """The user name and stamp a session was kept under (``Standing.session_subject``)."""
    user, _, stamp = subject.partition(" ")
    return user, stamp or None


class AccountStore(Protocol):
    """The SQL side (``console.accountstore``); each method one statement."""

    async def add_account(self, account: Account, password_hash: str) -> bool: ...  # False: taken
    async def account(self, username: str) -> StoredAccount | None: ...
    async def accounts(self) -> list[Account]: ...
    async def remove_account(self, username: str) -> bool: ...
    async def set_password(self, username: str, password_hash: str) -> bool: ...
    async def set_groups(self, username: str, groups: tuple[str, ...]) -> bool: ...


class AccountExists(Conflict, code="account-exists"):
    def __init__(self, username: str) -> None:
        super().__init__(f"account {username} already exists")


class AccountNotFound(NotFound, code="account-not-found"):
    def __init__(self, username: str) -> None:
        super().__init__(f"no account {username}")


@attrs.define
class Accounts:
    """Checks sign-ins (the admin's and every account's) and manages accounts."""

    store: AccountStore
    admin: AdminCredentials
    admin_groups: tuple[str, ...] = DEFAULT_ADMIN_GROUPS
    _hasher: credentials.Hasher = attrs.field(factory=credentials.Hasher)
    _key: bytes = attrs.field(factory=lambda: secrets.token_bytes(32), repr=False)
    _verified: dict[bytes, None] = attrs.field(factory=dict, repr=False)
    _read: dict[str, tuple[float, StoredAccount | None]] = attrs.field(factory=dict, repr=False)

    @property
    def admin_identity(self) -> Identity:
        return Identity(self.admin.username, self.admin_groups)

    async def check(self, username: str, password: str) -> Identity | None:
        """Who ``username`` is if ``password`` is theirs; None otherwise."""
        standing = await self.verify(username, password)
        return standing.identity if standing is not None else None

    async def verify(self, username: str, password: str) -> Standing | None:
        """``check``, with what the account was when it held (``Standing``)."""
        if credentials.same_secret(username, self.admin.username):
            return (
                Standing(self.admin_identity)
                if await self.admin.check(username, password)
                else None
            )
        stored = await self.store.account(username) if USERNAME.match(username) else None
        if stored is None:
            await self._hasher.verify(password, None)  # the same cost as a real one
            return None
        mark = self._mark(stored, password)
        if mark in self._verified or await self._hasher.verify(password, stored.password_hash):
            self._remember(mark)
            return self._standing(stored)
        return None

    async def lookup(self, username: str) -> Identity | None:
        """Who a session's ``username`` is now; None once the account is gone."""
        standing = await self.standing(username)
        return standing.identity if standing is not None else None

    async def standing(self, username: str) -> Standing | None:
        """``lookup``, with what the account is now (``Standing``)."""
        if username == self.admin.username:
            return Standing(self.admin_identity)
        stored = await self.store.account(username) if USERNAME.match(username) else None
        return self._standing(stored) if stored is not None else None

    async def changed(self, standing: Standing) -> str | None:
        """Why the account no longer is what ``standing`` saw (removed, another password, other
        groups); None while it is. Reads the store at most once per ``RECHECK_SHARED_S`` per
        account, however many streams ask."""
        if standing.stamp is None:
            return None
        username = standing.identity.user
        now = time.monotonic()
        read = self._read.get(username)
        if read is None or now - read[0] > RECHECK_SHARED_S:
            if len(self._read) >= _REMEMBERED:
                self._read.clear()
            read = self._read[username] = (now, await self.store.account(username))
        stored = read[1]
        if stored is None:
            return f"the account {username} was removed"
        if not hmac.compare_digest(_stamp(stored), standing.stamp):
            return f"the password of account {username} changed"
        if stored.account.groups != standing.identity.groups:
            return f"the groups of account {username} changed"
        return None

    def _standing(self, stored: StoredAccount) -> Standing:
        return Standing(stored.account.identity, _stamp(stored))

    async def add(self, username: str, password: str, groups: Iterable[str]) -> Account:
        self._check_name(username)
        account = Account(username, check_groups(groups))
        if not await self.store.add_account(account, await self.hash(password)):
            raise AccountExists(username)
        logger.info("console account %s created", username)
        return account

    async def remove(self, username: str) -> None:
        if not await self.store.remove_account(username):
            raise AccountNotFound(username)
        logger.info("console account %s removed", username)

    async def list(self) -> list[Account]:
        return await self.store.accounts()

    async def set_password(self, username: str, password: str) -> None:
        if not await self.store.set_password(username, await self.hash(password)):
            raise AccountNotFound(username)
        logger.info("password of console account %s changed", username)

    async def set_groups(self, username: str, groups: Iterable[str]) -> Account:
        checked = check_groups(groups)
        if not await self.store.set_groups(username, checked):
            raise AccountNotFound(username)
        logger.info("groups of console account %s set", username)
        return Account(username, checked)

    async def hash(self, password: str) -> str:
        return await self._hasher.hash(password)

    def _check_name(self, username: str) -> None:
        if not USERNAME.match(username):
            raise BadRequest(
                "an account name is 1 to 64 letters, digits, '.', '_', '@' or '-', starting with "
                "a letter or digit",
                code="invalid-username",
            )
        if username == self.admin.username:
            raise BadRequest(
                f"{username} is the admin login's name (console.security.admin.username)",
                code="invalid-username",
            )

    def _mark(self, stored: StoredAccount, password: str) -> bytes:
        text = "\0".join((stored.account.username, stored.password_hash, password))
        return hmac.new(self._key, text.encode(), hashlib.sha256).digest()

    def _remember(self, mark: bytes) -> None:
        if mark in self._verified:
            return
        if len(self._verified) >= _REMEMBERED:
            self._verified.pop(next(iter(self._verified)))
        self._verified[mark] = None


def _stamp(stored: StoredAccount) -> str:
    """A digest of the password hash: another password, another stamp. Not keyed, so that
    replicas agree on it (a session made on one is checked on another); a digest of a salted
    scrypt hash reveals nothing of the password."""
    return hashlib.sha256(stored.password_hash.encode()).hexdigest()[:32]


def check_groups(groups: Iterable[str]) -> tuple[str, ...]:
    """The groups, each checked, duplicates dropped, in the order given."""
    checked = tuple(dict.fromkeys(g.strip() for g in groups if g.strip()))
    for group in checked:
        if not GROUP.match(group):
            raise BadRequest(
                f"group {group[:64]!r}: a group is 1 to 253 printable characters without a comma",
                code="invalid-group",
            )
    return checked
