"""SQL for console accounts (``console.accounts.AccountStore``), on the console store's database.

The table is the console store's migration 4 (``console.clusters.store.SCHEMA``), so accounts live
wherever clusters and sessions do: a SQLite file by default, PostgreSQL shared by replicas. With
the memory cluster store there is no database, and :class:`MemoryAccountStore` holds none (only
the admin login signs in). This module must not hash, verify or log a password.
"""

from __future__ import annotations

import json
import time

import attrs

from common.db import Database, Row
from console.accounts import Account, StoredAccount


def _account(row: Row) -> Account:
    return Account(row["username"], tuple(json.loads(row["groups_json"])))


@attrs.define(eq=False)
class SqlAccountStore:
    db: Database

    async def add_account(self, account: Account, password_hash: str) -> bool:
        sql = """
            INSERT INTO accounts (username, password_hash, groups_json, created)
            VALUES (?, ?, ?, ?) ON CONFLICT (username) DO NOTHING
        """
        groups = json.dumps(list(account.groups))
        params = (account.username, password_hash, groups, time.time())
        return (await self.db.write(sql, params)).rowcount == 1

    async def account(self, username: str) -> StoredAccount | None:
        sql = "SELECT username, password_hash, groups_json FROM accounts WHERE username = ?"
        row = await self.db.fetchone(sql, (username,))
        return StoredAccount(_account(row), row["password_hash"]) if row is not None else None

    async def accounts(self) -> list[Account]:
        sql = "SELECT username, groups_json FROM accounts ORDER BY username"
        return [_account(row) for row in await self.db.fetchall(sql)]

    async def remove_account(self, username: str) -> bool:
        sql = "DELETE FROM accounts WHERE username = ?"
        return (await self.db.write(sql, (username,))).rowcount == 1

    async def set_password(self, username: str, password_hash: str) -> bool:
        sql = "UPDATE accounts SET password_hash = ? WHERE username = ?"
        return (await self.db.write(sql, (password_hash, username))).rowcount == 1

    async def set_groups(self, username: str, groups: tuple[str, ...]) -> bool:
        sql = "UPDATE accounts SET groups_json = ? WHERE username = ?"
        return (await self.db.write(sql, (json.dumps(list(groups)), username))).rowcount == 1


class MemoryAccountStore:
    """No accounts: the memory cluster store keeps nothing a command could have written."""

    async def add_account(self, account: Account, password_hash: str) -> bool:
        return False

    async def account(self, username: str) -> StoredAccount | None:
        return None

    async def accounts(self) -> list[Account]:
        return []

    async def remove_account(self, username: str) -> bool:
        return False

    async def set_password(self, username: str, password_hash: str) -> bool:
        return False

    async def set_groups(self, username: str, groups: tuple[str, ...]) -> bool:
        return False
