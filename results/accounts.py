"""Accounts: creating users, password login sessions, personal API tokens, memberships.

Everything the HTTP layer, the shell commands and the event stream need to do with a person goes
through :class:`Accounts`; the values it hands out are ``results.users`` (re-exported here, with
``can_read``), and the SQL behind it is ``results.store.accounts`` (an :class:`AccountStore`).
A raw token or session cookie exists only in the caller's hands and in the one response that shows
it: here it is digested at once (``common.credentials``). This module must not know HTTP, log a
secret, or put one in a ``repr``.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Awaitable, Callable

import attrs

from common import credentials
from common.errors import BadRequest, Conflict, NotFound, Unauthorized
from common.sessions import NewSession, Session, SessionStore
from results.errors import ProjectNotFound
from results.runs import Visibility
from results.users import (
    AccountStore,
    ApiToken,
    Credential,
    NewToken,
    Principal,
    Role,
    StoredUser,
    User,
    can_read,
    revocation_key,
    utcnow,
)

__all__ = [
    "AccountStore",
    "Accounts",
    "ApiToken",
    "Credential",
    "LoginFailed",
    "NewSession",
    "NewToken",
    "Principal",
    "Role",
    "Session",
    "StoredUser",
    "User",
    "UserExists",
    "UserNotFound",
    "can_read",
]

logger = logging.getLogger(__name__)
#: Recognisable in a leaked log or by a secret scanner, like ``ghp_`` or ``glpat-``.
TOKEN_PREFIX = "wrt_"  # noqa: S105 - a prefix, not a secret

USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
MAX_TOKEN_NAME = 100
MAX_TOKEN_DAYS = 3650
#: A token's last-used time is written at most this often: exact to the minute is all a person
#: reading their token list needs, and a write per API call would queue behind every ingest.
TOUCH_EVERY = dt.timedelta(seconds=60)


class UserExists(Conflict, code="user-exists"):
    def __init__(self, username: str) -> None:
        super().__init__(f"user {username} already exists")


class UserNotFound(NotFound, code="user-not-found"):
    def __init__(self, username: str) -> None:
        super().__init__(f"no user {username}")


class TokenNotFound(NotFound, code="token-not-found"):
    def __init__(self, token_id: int) -> None:
        super().__init__(f"no token {token_id} of yours")


class LoginFailed(Unauthorized, code="login-failed"):
    def __init__(self) -> None:
        super().__init__("wrong username or password")


@attrs.define
class Accounts:
    store: AccountStore
    session_ttl: dt.timedelta = dt.timedelta(hours=12)
    clock: Callable[[], dt.datetime] = utcnow
    #: Told the ``revocation_key`` of every session ended and token revoked (their streams end).
    on_revoke: Callable[[str], Awaitable[None]] | None = None
    _hasher: credentials.Hasher = attrs.field(factory=credentials.Hasher)
    #: Login sessions: a fixed lifetime, a CSRF value each, rows in ``store``.
    sessions: SessionStore = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.sessions = SessionStore(
            self.session_ttl.total_seconds(),
            renew=False,
            rows=self.store,
            csrf=True,
            clock=lambda: self.clock().timestamp(),
            on_end=self._revoked,
        )

    async def add_user(
        self,
        username: str,
        *,
        password_hash: str,
        role: Role = Role.MEMBER,
        email: str = "",
        display_name: str = "",
    ) -> User:
        """Create a user from an already-computed hash (see :meth:`hash`)."""
        check_username(username)
        user = await self.store.add_user(
            username=username,
            display_name=display_name or username,
            email=email,
            role=role,
            password_hash=password_hash,
        )
        if user is None:
            raise UserExists(username)
        logger.info("user %s created with role %s", username, role)
        return user

    async def hash(self, password: str) -> str:
        return await self._hasher.hash(password)

    async def login(self, username: str, password: str) -> tuple[User, NewSession]:
        stored = await self.store.user_by_name(username)
        # Checked even for an unknown name (against a dummy hash): timing tells nothing.
        ok = await self._hasher.verify(password, stored.password_hash if stored else None)
        if stored is None or not ok:
            raise LoginFailed()
        return stored.user, await self.sessions.create(str(stored.user.id))

    async def logout(self, session_id: str) -> None:
        await self.sessions.end(session_id)

    async def _revoked(self, key: str) -> None:
        if self.on_revoke is not None:
            await self.on_revoke(key)

    async def session_principal(self, cookie: str) -> Principal | None:
        """The principal of a session cookie, or None for an unknown or expired one."""
        session = await self.sessions.find(cookie)
        user = await self.store.user_by_id(int(session.subject)) if session is not None else None
        if session is None or user is None:
            return None
        ids = await self.store.project_ids(user.id)
        expires_at = dt.datetime.fromtimestamp(session.expires, dt.UTC)
        return Principal(
            user, ids, Credential.SESSION, csrf=session.csrf, session_id=session.id,
            expires_at=expires_at,
        )  # fmt: skip

    async def token_principal(self, value: str) -> Principal | None:
        """The principal of an API token, or None for an unknown, revoked or expired one."""
        found = await self.store.token_by_digest(credentials.digest(value))
        now = self.clock()
        if found is None or found[0].state(now) != "active":
            return None
        token, user = found
        if token.last_used_at is None or now - token.last_used_at >= TOUCH_EVERY:
            await self.store.touch_token(token.id, now)
        ids = await self.store.project_ids(user.id)
        return Principal(
            user, ids, Credential.TOKEN, token_id=token.id, expires_at=token.expires_at
        )

    async def create_token(
        self, user: User, name: str, *, expires_days: int | None = None
    ) -> NewToken:
        name = name.strip()
        if not 0 < len(name) <= MAX_TOKEN_NAME:
            raise BadRequest(f"a token name has 1 to {MAX_TOKEN_NAME} characters")
        expires_at = None
        if expires_days is not None:
            if not 0 < expires_days <= MAX_TOKEN_DAYS:
                raise BadRequest(f"a token expires after 1 to {MAX_TOKEN_DAYS} days")
            expires_at = self.clock() + dt.timedelta(days=expires_days)
        value = TOKEN_PREFIX + credentials.new_secret()
        token = await self.store.add_token(
            user_id=user.id, name=name, sha256=credentials.digest(value), expires_at=expires_at
        )
        logger.info("token %d (%s) created for %s", token.id, name, user.username)
        return NewToken(token=token, value=value)

    async def tokens(self, user: User) -> list[ApiToken]:
        return await self.store.tokens(user.id)

    async def revoke_token(self, user: User, token_id: int) -> None:
        if not await self.store.revoke_token(user.id, token_id, self.clock()):
            raise TokenNotFound(token_id)
        logger.info("token %d of %s revoked", token_id, user.username)
        await self._revoked(revocation_key(Credential.TOKEN, str(token_id)))

    async def bootstrap_admin(self, username: str, password: str) -> User | None:
        """Create the configured admin unless that user exists; never changes an existing one."""
        if await self.store.user_by_name(username) is not None:
            return None
        if password.startswith(credentials.HASHED_PREFIX):
            encoded = credentials.configured_password_hash(password)
        else:
            encoded = await self.hash(password)
        try:
            return await self.add_user(username, password_hash=encoded, role=Role.ADMIN)
        except UserExists:
            return None  # another worker made it first

    async def user(self, username: str) -> User:
        stored = await self.store.user_by_name(username)
        if stored is None:
            raise UserNotFound(username)
        return stored.user

    async def grant(self, username: str, project: str, *, role: Role = Role.MEMBER) -> None:
        """Make ``username`` a member of ``project``, which lets them read it when PRIVATE."""
        user = await self.user(username)
        await self.store.add_membership(user.id, await self._project_id(project), role)
        logger.info("%s is now a %s of project %s", username, role, project)

    async def set_visibility(self, project: str, visibility: Visibility) -> None:
        await self.store.set_visibility(await self._project_id(project), visibility)
        logger.info("project %s is now %s", project, visibility)

    async def _project_id(self, name: str) -> int:
        project_id = await self.store.project_id(name)
        if project_id is None:
            raise ProjectNotFound(name)
        return project_id

    async def purge_sessions(self) -> int:
        return await self.sessions.purge()


def check_username(username: str) -> None:
    if not USERNAME.match(username):
        raise BadRequest(
            "a username is 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a "
            "letter or digit",
            code="invalid-username",
        )
