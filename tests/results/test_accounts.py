"""Accounts without HTTP: password hashes, tokens, sessions, bootstrap and visibility, on real SQLite."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from common import credentials
from common.config import ConfigError
from results.accounts import (
    Accounts,
    Credential,
    LoginFailed,
    Principal,
    Role,
    User,
    UserExists,
    can_read,
)
from results.app import create_app
from results.runs import Project, Visibility
from results.store import open_store
from results.store.accounts import SqlAccountStore
from tests.results.support import settings_for

FAST = {"n": 2**10, "r": 8, "p": 1}  # hash cost for tests that make many hashes


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def accounts(db_url: str, clock: Clock) -> AsyncIterator[Accounts]:
    async with open_store(db_url) as store:
        yield Accounts(SqlAccountStore(store.db), clock=clock)


async def alice(accounts: Accounts, password: str = "correct horse") -> User:  # noqa: S107
    encoded = credentials.hash_password(password, **FAST)
    return await accounts.add_user("alice", password_hash=encoded, role=Role.ADMIN)


def test_password_hash_format_and_verification() -> None:
    encoded = credentials.hash_password("s3cret pass")
    scheme, n, r, p, salt, key = encoded.split("$")
    assert (scheme, n, r, p) == ("scrypt", "16384", "8", "1")
    assert len(salt) >= 20
    assert len(key) >= 40
    assert "s3cret" not in encoded
    assert credentials.verify_password("s3cret pass", encoded)
    assert not credentials.verify_password("s3cret pasS", encoded)
    assert credentials.hash_password("s3cret pass") != encoded  # per-hash salt


@pytest.mark.parametrize(
    "encoded",
    [
        "",
        "bcrypt$2b$12$abc",
        "scrypt$16384$8$1$c2FsdA$",
        "scrypt$1000$8$1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5",  # n not a power of two
        "scrypt$4194304$8$1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5",  # n too large to verify
        "scrypt$x$8$1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5",
    ],
)
def test_malformed_or_costly_hashes_never_verify(encoded: str) -> None:
    assert not credentials.verify_password("anything", encoded)


def test_configured_password_plain_or_prehashed() -> None:
    prehashed = credentials.hash_password("from-config", **FAST)
    assert credentials.configured_password_hash("{scrypt}" + prehashed) == prehashed
    fresh = credentials.configured_password_hash("from-config")
    assert credentials.verify_password("from-config", fresh)
    with pytest.raises(credentials.InvalidHash):
        credentials.configured_password_hash("{scrypt}not-a-hash")


async def test_login_issues_a_session_and_logout_ends_it(accounts: Accounts) -> None:
    user = await alice(accounts)
    with pytest.raises(LoginFailed):
        await accounts.login("alice", "wrong")
    with pytest.raises(LoginFailed):
        await accounts.login("nobody", "correct horse")
    logged, new = await accounts.login("ALICE", "correct horse")  # usernames ignore case
    assert logged == user
    assert new.session.id == credentials.digest(new.cookie)
    found = await accounts.session_principal(new.cookie)
    assert found is not None
    assert found.user == user
    assert found.via is Credential.SESSION
    assert found.csrf == new.session.csrf
    assert new.cookie not in repr(new)
    await accounts.logout(new.session.id)
    assert await accounts.session_principal(new.cookie) is None


async def test_sessions_expire(accounts: Accounts, clock: Clock) -> None:
    await alice(accounts)
    _, new = await accounts.login("alice", "correct horse")
    clock.now += accounts.session_ttl + dt.timedelta(seconds=1)
    assert await accounts.session_principal(new.cookie) is None
    assert await accounts.purge_sessions() == 1


async def test_tokens_are_stored_only_as_digests(accounts: Accounts) -> None:
    user = await alice(accounts)
    made = await accounts.create_token(user, "ci")
    assert made.value.startswith("wrt_")
    assert len(made.value) > 40
    assert made.value not in repr(made)
    db = accounts.store.db  # type: ignore[attr-defined]
    rows = [tuple(row) for row in await db.fetchall("SELECT sha256, name FROM tokens")]
    assert rows == [(credentials.digest(made.value), "ci")]
    everything = [tuple(row) for row in await db.fetchall("SELECT * FROM tokens")]
    assert made.value not in repr(everything)


async def test_token_use_revoke_and_last_used(accounts: Accounts, clock: Clock) -> None:
    user = await alice(accounts)
    made = await accounts.create_token(user, "ci")
    found = await accounts.token_principal(made.value)
    assert found is not None
    assert found.user == user
    assert found.via is Credential.TOKEN
    [listed] = await accounts.tokens(user)
    assert listed.last_used_at == clock.now
    assert listed.state(clock.now) == "active"
    assert await accounts.token_principal(made.value + "x") is None
    await accounts.revoke_token(user, made.token.id)
    assert await accounts.token_principal(made.value) is None
    [listed] = await accounts.tokens(user)
    assert listed.state(clock.now) == "revoked"


async def test_tokens_expire(accounts: Accounts, clock: Clock) -> None:
    user = await alice(accounts)
    made = await accounts.create_token(user, "short", expires_days=1)
    assert made.token.expires_at == clock.now + dt.timedelta(days=1)
    assert await accounts.token_principal(made.value) is not None
    clock.now += dt.timedelta(days=1)
    assert await accounts.token_principal(made.value) is None
    assert [t.state(clock.now) for t in await accounts.tokens(user)] == ["expired"]


async def test_another_users_token_cannot_be_revoked(accounts: Accounts) -> None:
    owner = await alice(accounts)
    bob = await accounts.add_user("bob", password_hash=credentials.hash_password("b", **FAST))
    made = await accounts.create_token(owner, "ci")
    with pytest.raises(Exception, match="no token"):
        await accounts.revoke_token(bob, made.token.id)
    assert await accounts.token_principal(made.value) is not None


async def test_usernames_are_unique_regardless_of_case(accounts: Accounts) -> None:
    await alice(accounts)
    with pytest.raises(UserExists):
        await accounts.add_user("Alice", password_hash=credentials.hash_password("x", **FAST))
    with pytest.raises(Exception, match="username"):
        await accounts.add_user("has space", password_hash="x")


async def test_bootstrap_admin_once_and_never_overwrites(accounts: Accounts) -> None:
    made = await accounts.bootstrap_admin("root", "first-password")
    assert made is not None
    assert made.role is Role.ADMIN
    assert await accounts.bootstrap_admin("root", "second-password") is None
    await accounts.login("root", "first-password")
    with pytest.raises(LoginFailed):
        await accounts.login("root", "second-password")


async def test_bootstrap_admin_from_a_prehashed_password(accounts: Accounts) -> None:
    hashed = "{scrypt}" + credentials.hash_password("hashed-in-config", **FAST)
    await accounts.bootstrap_admin("root", hashed)
    user, _ = await accounts.login("root", "hashed-in-config")
    assert user.is_admin


def principal(
    user_id: int, *, role: Role = Role.MEMBER, projects: tuple[int, ...] = ()
) -> Principal:
    user = User(user_id, f"u{user_id}", "", "", role, dt.datetime.now(dt.UTC))
    return Principal(user, frozenset(projects), Credential.TOKEN)


def test_can_read_private_projects_only_as_member_or_admin() -> None:
    public = Project(1, "open", Visibility.PUBLIC, "")
    private = Project(2, "closed", Visibility.PRIVATE, "")
    assert can_read(None, public)
    assert not can_read(None, private)
    assert not can_read(principal(7), private)
    assert can_read(principal(7, projects=(2,)), private)
    assert can_read(principal(8, role=Role.ADMIN), private)


def test_an_admin_name_without_a_password_stops_start_up(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "results.security.admin.username=root")
    with pytest.raises(ConfigError, match=r"admin\.password"):
        create_app(settings)
