"""``wharf console ...``: the admin password's hash, and the console's named accounts.

``hash-password`` prints a ``{scrypt}`` hash for ``console.security.admin.password``. The ``user``
commands manage accounts (``console.accounts``) in the database the server uses: each takes the
same ``--config``/``--set`` as ``wharf serve console`` (SQLite's busy timeout lets it run beside a
live server, and the server reads an account on every request, so a change holds at once).
Passwords come only from stdin (a prompt without echo on a terminal, else the first line), never
from argv, where ``ps`` and shell history would keep them; as ``wharf results`` does. Results go to
stdout (``user list``), everything else to stderr. This module never prints a password and holds
no SQL or account rules. A command imports the accounts and their store when it runs: every
``wharf`` command (``wharf serve`` of any service) registers these, and none needs them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from common import cli
from console.settings import ConsoleSettings, Settings, StoreBackend

if TYPE_CHECKING:
    from console.accounts import Accounts

    Action = Callable[[Accounts, argparse.Namespace], Awaitable[int]]


def register(subparsers: Any) -> None:
    console = subparsers.add_parser("console", help="console administration: accounts, hashes")
    sub = console.add_subparsers(dest="console_command", metavar="COMMAND", required=True)
    cli.add_hash_password(sub, "console")
    _user_commands(sub)


def _user_commands(sub: Any) -> None:
    users = sub.add_parser("user", help="named console accounts and their groups")
    commands = users.add_subparsers(dest="user_command", metavar="COMMAND", required=True)
    add = commands.add_parser("add", help="create an account; the password is read from stdin")
    add.add_argument("name")
    _groups_arg(add)
    add.add_argument("--password-stdin", action="store_true", required=True)
    _runs(add, _add)
    remove = commands.add_parser("remove", help="remove an account (its sessions end with it)")
    remove.add_argument("name")
    _runs(remove, _remove)
    _runs(commands.add_parser("list", help="list accounts and their groups"), _list)
    password = commands.add_parser("set-password", help="change a password (read from stdin)")
    password.add_argument("name")
    password.add_argument("--password-stdin", action="store_true", required=True)
    _runs(password, _set_password)
    groups = commands.add_parser("set-groups", help="replace an account's groups")
    groups.add_argument("name")
    _groups_arg(groups)
    _runs(groups, _set_groups)


def _groups_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--groups", default="", help="comma-separated groups sent to clusters, e.g. team-a,dev"
    )


def _runs(parser: argparse.ArgumentParser, action: Action) -> None:
    """``parser``'s command runs ``action`` on the accounts of the console's database."""
    cli.settings_args(parser)

    def run(args: argparse.Namespace) -> int:
        svc = cli.load_command_settings(Settings, args).console
        if svc.clusters.store.backend is StoreBackend.MEMORY:
            print(
                "wharf console: accounts need a database (console.clusters.store.backend=sqlite)",
                file=sys.stderr,
            )
            return 1
        return cli.run_command(_with_accounts(svc, action, args), prog="wharf console")

    parser.set_defaults(func=run)


async def _with_accounts(svc: ConsoleSettings, action: Action, args: argparse.Namespace) -> int:
    from common.db import open_database
    from console.accounts import Accounts
    from console.accountstore import SqlAccountStore
    from console.clusters.store import SCHEMA
    from console.credentials import AdminCredentials

    admin = AdminCredentials(svc.security.admin.username, svc.security.admin.password)
    async with open_database(svc.store_url, SCHEMA) as db:
        return await action(Accounts(SqlAccountStore(db), admin), args)


async def _add(accounts: Accounts, args: argparse.Namespace) -> int:
    account = await accounts.add(args.name, cli.read_password(), _groups(args))
    print(f"created account {account.username} ({_shown(account.groups)})", file=sys.stderr)
    return 0


async def _remove(accounts: Accounts, args: argparse.Namespace) -> int:
    await accounts.remove(args.name)
    print(f"removed account {args.name}", file=sys.stderr)
    return 0


async def _list(accounts: Accounts, args: argparse.Namespace) -> int:
    for account in await accounts.list():
        print(f"{account.username}\t{','.join(account.groups)}")
    return 0


async def _set_password(accounts: Accounts, args: argparse.Namespace) -> int:
    await accounts.set_password(args.name, cli.read_password())
    print(f"password of {args.name} changed", file=sys.stderr)
    return 0


async def _set_groups(accounts: Accounts, args: argparse.Namespace) -> int:
    account = await accounts.set_groups(args.name, _groups(args))
    print(f"groups of {account.username}: {_shown(account.groups)}", file=sys.stderr)
    return 0


def _groups(args: argparse.Namespace) -> tuple[str, ...]:
    from console.accounts import check_groups

    return check_groups(str(args.groups).split(","))


def _shown(groups: tuple[str, ...]) -> str:
    return ", ".join(groups) or "no groups"
