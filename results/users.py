"""People as values: users and roles, API tokens, login sessions, principals, and who may read what.

Plain immutable records that the accounts service (``results.accounts``), its store
(``results.store.accounts``), the auth middleware and the event hub pass around, and
:class:`AccountStore`, the SQL side's interface. Login sessions are ``common.sessions`` ones, whose
subject is the user's id. Secrets never appear here except in the field of :class:`NewToken`, which
holds a value only on its way to the one response that shows it, and is excluded from ``repr``.
This module must not do I/O or know HTTP.
"""

from __future__ import annotations

import datetime as dt
import enum
from typing import Protocol

import attrs

from common import sessions
from common.sessions import SessionRows
from results.runs import Project, Visibility


class Role(enum.StrEnum):
    ADMIN = "ADMIN"
    MEMBER = "MEMBER"


class Credential(enum.StrEnum):
    """How a request proved who it is; API writes accept only a token (cookies invite CSRF)."""

    SESSION = "session"
    TOKEN = "token"  # noqa: S105 - a credential kind, not a secret


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@attrs.frozen
class User:
    id: int
    username: str
    display_name: str
    email: str
    role: Role
    created_at: dt.datetime

    @property
    def is_admin(self) -> bool:
        return self.role is Role.ADMIN


@attrs.frozen
class StoredUser:
    user: User
    password_hash: str = attrs.field(repr=False)


@attrs.frozen
class ApiToken:
    """A token's record; the value itself is never stored and appears only in :class:`NewToken`."""

    id: int
    user_id: int
    name: str
    created_at: dt.datetime
    expires_at: dt.datetime | None
    last_used_at: dt.datetime | None
    revoked_at: dt.datetime | None

    def state(self, now: dt.datetime) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"


@attrs.frozen
class NewToken:
    token: ApiToken
    value: str = attrs.field(repr=False)


@attrs.frozen
class Principal:
    """Who a request runs as; memberships are read when the request authenticates."""

    user: User
    project_ids: frozenset[int]
    via: Credential
    csrf: str | None = attrs.field(default=None, repr=False)  # the session's, for page forms
    session_id: str | None = attrs.field(default=None, repr=False)
    token_id: int | None = None
    expires_at: dt.datetime | None = None  # when the session or token stops being valid

    @property
    def revocation_key(self) -> str:
        """What revoking this principal's credential is announced as (``revocation_key``)."""
        if self.via is Credential.TOKEN:
            return revocation_key(Credential.TOKEN, str(self.token_id))
        return sessions.revocation_key(str(self.session_id))

    @property
    def username(self) -> str:
        return self.user.username

    @property
    def is_admin(self) -> bool:
        return self.user.is_admin


def revocation_key(kind: Credential, ident: str) -> str:
    """``token:<id>`` (a session's is ``common.sessions``'): names a credential, not its value."""
    return f"{kind}:{ident}"


def can_read(principal: Principal | None, project: Project) -> bool:
    """PUBLIC projects are anyone's; PRIVATE ones only their members' and admins'."""
    if project.visibility is not Visibility.PRIVATE:
        return True
    if principal is None:
        return False
    return principal.is_admin or project.id in principal.project_ids


class AccountStore(SessionRows, Protocol):
    """The SQL side of accounts (``results.store.accounts``), login sessions included; times are
    aware UTC datetimes (a session's, epoch seconds)."""

    async def add_user(
        self, *, username: str, display_name: str, email: str, role: Role, password_hash: str
    ) -> User | None: ...  # None when the username is taken
    async def user_by_name(self, username: str) -> StoredUser | None: ...
    async def user_by_id(self, user_id: int) -> User | None: ...
    async def project_ids(self, user_id: int) -> frozenset[int]: ...
    async def member_ids(self, project_id: int) -> frozenset[int]: ...
    async def add_membership(self, user_id: int, project_id: int, role: Role) -> None: ...
    async def project_id(self, name: str) -> int | None: ...
    async def set_visibility(self, project_id: int, visibility: Visibility) -> None: ...
    async def add_token(
        self, *, user_id: int, name: str, sha256: str, expires_at: dt.datetime | None
    ) -> ApiToken: ...
    async def tokens(self, user_id: int) -> list[ApiToken]: ...
    async def token_by_digest(self, sha256: str) -> tuple[ApiToken, User] | None: ...
    async def touch_token(self, token_id: int, at: dt.datetime) -> None: ...
    async def revoke_token(self, user_id: int, token_id: int, at: dt.datetime) -> bool: ...
