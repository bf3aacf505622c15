"""Console accounts in the console store, on SQLite and on PostgreSQL, and checked by ``Accounts``."""

from __future__ import annotations

import pytest

from common.db import open_database
from common.errors import BadRequest
from console.accounts import Account, AccountExists, AccountNotFound, Accounts
from console.accountstore import SqlAccountStore
from console.clusters.store import SCHEMA
from console.credentials import AdminCredentials
from console.identity import Identity


async def test_accounts_round_trip_and_sign_in(db_url: str) -> None:
    async with open_database(db_url, SCHEMA) as db:
        accounts = Accounts(SqlAccountStore(db), AdminCredentials("admin", "admin-pw"))
        await accounts.add("alice", "alice-pw", ["team-a", "dev", "team-a"])
        with pytest.raises(AccountExists):
            await accounts.add("alice", "other", [])
        assert await accounts.list() == [Account("alice", ("team-a", "dev"))]
        assert await accounts.check("alice", "alice-pw") == Identity("alice", ("team-a", "dev"))
        assert await accounts.check("alice", "alice-pw") is not None  # remembered, still right
        assert await accounts.check("alice", "wrong") is None
        assert await accounts.check("bob", "alice-pw") is None
        assert await accounts.check("admin", "admin-pw") == Identity("admin", ("wharf:admins",))
        await accounts.set_password("alice", "new-pw")
        assert await accounts.check("alice", "alice-pw") is None  # the remembered one is stale
        assert await accounts.check("alice", "new-pw") is not None
        await accounts.set_groups("alice", ["ops"])
        assert await accounts.lookup("alice") == Identity("alice", ("ops",))
        await accounts.remove("alice")
        assert await accounts.lookup("alice") is None
        for call in (accounts.remove("alice"), accounts.set_groups("alice", [])):
            with pytest.raises(AccountNotFound):
                await call
        with pytest.raises(BadRequest, match="admin login"):
            await accounts.add("admin", "pw", [])
