"""SQL for users, memberships, API tokens and login sessions, on the results ``Database``.

Implements ``results.accounts.AccountStore`` (and the membership half of
``results.events.EventStore``), including a project's visibility, which is access control. Times are stored as ISO-8601 UTC text with a ``Z``, the format the
run tables use, so they sort and compare as text. Tokens and sessions are found by the SHA-256 of
their value; the value itself never reaches this module.

This module must not hash, generate or log credentials, and must not know HTTP.
"""

from __future__ import annotations

import datetime as dt

import attrs

from common.db import Database, Row
from common.sessions import Session
from results.runs import Visibility
from results.users import ApiToken, Role, StoredUser, User

_USER_COLUMNS = "u.id, u.username, u.display_name, u.email, u.role, u.created_at"
#: The user's columns where a joined table also has ``id`` and ``created_at``.
_JOINED_USER = (
    "u.id AS user_id, u.username, u.display_name, u.email, u.role, u.created_at AS user_created_at"
)
_TOKEN_COLUMNS = "t.id, t.user_id, t.name, t.created_at, t.expires_at, t.last_used_at, t.revoked_at"  # noqa: S105


def stamp(at: dt.datetime) -> str:
    return at.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_stamp(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def _maybe(text: str | None) -> dt.datetime | None:
    return None if text is None else parse_stamp(text)


def user_from_row(row: Row, *, joined: bool = False) -> User:
    return User(
        id=row["user_id" if joined else "id"],
        username=row["username"],
        display_name=row["display_name"],
        email=row["email"],
        role=Role(row["role"]),
        created_at=parse_stamp(row["user_created_at" if joined else "created_at"]),
    )


def token_from_row(row: Row) -> ApiToken:
    return ApiToken(
        id=row["id"],
        user_id=row["user_id"],
        name=row["name"],
        created_at=parse_stamp(row["created_at"]),
        expires_at=_maybe(row["expires_at"]),
        last_used_at=_maybe(row["last_used_at"]),
        revoked_at=_maybe(row["revoked_at"]),
    )


@attrs.define(eq=False)
class SqlAccountStore:
    db: Database
    durable = True

    async def add_user(
        self, *, username: str, display_name: str, email: str, role: Role, password_hash: str
    ) -> User | None:
        sql = """
            INSERT INTO users (username, display_name, email, role, password_hash, created_at)
            VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (username) DO NOTHING RETURNING id
        """
        now = dt.datetime.now(dt.UTC)
        params = (username, display_name, email, role.value, password_hash, stamp(now))
        made = (await self.db.write(sql, params)).first()
        if made is None:
            return None
        return User(made[0], username, display_name, email, role, parse_stamp(stamp(now)))

    async def user_by_name(self, username: str) -> StoredUser | None:
        sql = f"SELECT {_USER_COLUMNS}, u.password_hash FROM users u WHERE u.username = ?"  # noqa: S608
        row = await self.db.fetchone(sql, (username,))
        if row is None:
            return None
        # A user without a password (made outside these tables) can never log in with one.
        return StoredUser(user_from_row(row), row["password_hash"] or "")

    async def user_by_id(self, user_id: int) -> User | None:
        sql = f"SELECT {_USER_COLUMNS} FROM users u WHERE u.id = ?"  # noqa: S608
        row = await self.db.fetchone(sql, (user_id,))
        return None if row is None else user_from_row(row)

    async def project_ids(self, user_id: int) -> frozenset[int]:
        sql = "SELECT project_id FROM memberships WHERE user_id = ?"
        return frozenset(row[0] for row in await self.db.fetchall(sql, (user_id,)))

    async def member_ids(self, project_id: int) -> frozenset[int]:
        sql = "SELECT user_id FROM memberships WHERE project_id = ?"
        return frozenset(row[0] for row in await self.db.fetchall(sql, (project_id,)))

    async def add_membership(self, user_id: int, project_id: int, role: Role) -> None:
        sql = """
            INSERT INTO memberships (user_id, project_id, role) VALUES (?, ?, ?)
            ON CONFLICT (user_id, project_id) DO UPDATE SET role = excluded.role
        """
        await self.db.write(sql, (user_id, project_id, role.value))

    async def project_id(self, name: str) -> int | None:
        row = await self.db.fetchone("SELECT id FROM projects WHERE name = ?", (name,))
        return None if row is None else int(row[0])

    async def set_visibility(self, project_id: int, visibility: Visibility) -> None:
        sql = "UPDATE projects SET visibility = ? WHERE id = ?"
        await self.db.write(sql, (visibility.value, project_id))

    async def add_token(
        self, *, user_id: int, name: str, sha256: str, expires_at: dt.datetime | None
    ) -> ApiToken:
        sql = """
            INSERT INTO tokens (user_id, name, sha256, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?) RETURNING id
        """
        created = parse_stamp(stamp(dt.datetime.now(dt.UTC)))
        expires = None if expires_at is None else stamp(expires_at)
        made = (await self.db.write(sql, (user_id, name, sha256, stamp(created), expires))).first()
        assert made is not None
        return ApiToken(made[0], user_id, name, created, _maybe(expires), None, None)

    async def tokens(self, user_id: int) -> list[ApiToken]:
        sql = f"SELECT {_TOKEN_COLUMNS} FROM tokens t WHERE t.user_id = ? ORDER BY t.id DESC"  # noqa: S608
        return [token_from_row(row) for row in await self.db.fetchall(sql, (user_id,))]

    async def token_by_digest(self, sha256: str) -> tuple[ApiToken, User] | None:
        sql = f"""
            SELECT {_TOKEN_COLUMNS}, {_JOINED_USER}
            FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.sha256 = ?
        """  # noqa: S608 - column lists are constants
        row = await self.db.fetchone(sql, (sha256,))
        if row is None:
            return None
        return token_from_row(row), user_from_row(row, joined=True)

    async def touch_token(self, token_id: int, at: dt.datetime) -> None:
        await self.db.write(
            "UPDATE tokens SET last_used_at = ? WHERE id = ?", (stamp(at), token_id)
        )

    async def revoke_token(self, user_id: int, token_id: int, at: dt.datetime) -> bool:
        sql = """
            UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? AND user_id = ?
        """
        written = await self.db.write(sql, (stamp(at), token_id, user_id))
        return written.rowcount == 1

    async def add_session(self, session: Session) -> None:
        sql = """
            INSERT INTO sessions (id, user_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
        """
        times = (_epoch_stamp(session.created), _epoch_stamp(session.expires))
        await self.db.write(sql, (session.id, int(session.subject), session.csrf, *times))

    async def session(self, session_id: str) -> Session | None:
        sql = "SELECT user_id, csrf, created_at, expires_at FROM sessions WHERE id = ?"
        row = await self.db.fetchone(sql, (session_id,))
        if row is None:
            return None
        created, expires = (parse_stamp(row[k]).timestamp() for k in ("created_at", "expires_at"))
        return Session(session_id, str(row["user_id"]), expires, created, row["csrf"])

    async def extend_session(self, session_id: str, expires: float) -> None:
        sql = "UPDATE sessions SET expires_at = ? WHERE id = ?"
        await self.db.write(sql, (_epoch_stamp(expires), session_id))

    async def delete_session(self, session_id: str) -> None:
        await self.db.write("DELETE FROM sessions WHERE id = ?", (session_id,))

    async def delete_expired_sessions(self, now: float) -> int:
        sql = "DELETE FROM sessions WHERE expires_at <= ?"
        return (await self.db.write(sql, (_epoch_stamp(now),))).rowcount


def _epoch_stamp(seconds: float) -> str:
    return stamp(dt.datetime.fromtimestamp(seconds, dt.UTC))
