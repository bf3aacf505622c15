"""``wharf results ...``: account administration from the shell, on the service's own database.

Each command takes the same ``--config``/``--set`` as ``wharf serve results``, so it opens exactly
the database the server uses (SQLite's busy timeout lets it run beside a live server). Passwords
come only from stdin (``--password-stdin``) or an interactive prompt, never from argv, where
``ps`` and shell history would keep them. A created token is printed once, alone on stdout, so
``TOKEN=$(wharf results token create ...)`` works; everything else goes to stderr.

This module must not print or log a password, and must not hold SQL or account rules. A command
imports the store and the accounts when it runs: every ``wharf`` command (``wharf serve`` of any
service) registers these, and none needs them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from common import cli
from results.ci import commands as ci
from results.runs import Visibility
from results.settings import Settings
from results.users import Role

if TYPE_CHECKING:
    from results.accounts import Accounts

    Action = Callable[[Accounts, argparse.Namespace], Awaitable[int]]


def register(subparsers: Any) -> None:
    results = subparsers.add_parser(
        "results", help="administer the results service's accounts; upload and gate from CI"
    )
    sub = results.add_subparsers(dest="results_command", metavar="COMMAND", required=True)
    _user_commands(sub)
    _token_commands(sub)
    _member_commands(sub)
    _project_commands(sub)
    hashing = cli.add_hash_password(sub, "results")
    hashing.add_argument("--password-stdin", action="store_true", required=True)
    ci.register(sub, os.environ)  # CI tokens and variables come from the environment


def _user_commands(sub: Any) -> None:
    add = _command(sub, "user", "users", "add", "create a user; the password is read from stdin")
    add.add_argument("name")
    add.add_argument("--role", choices=[r.value for r in Role], default=Role.MEMBER.value)
    add.add_argument("--password-stdin", action="store_true", required=True)
    add.add_argument("--email", default="")
    add.add_argument("--display-name", default="")
    _runs(add, _user_add)


def _token_commands(sub: Any) -> None:
    help_ = "create an API token and print it (only this once)"
    create = _command(sub, "token", "API tokens", "create", help_)
    create.add_argument("--user", required=True)
    create.add_argument("--name", required=True, help="label, e.g. ci-upload")
    create.add_argument("--expires-days", type=int, help="days until it expires (default never)")
    _runs(create, _token_create)


def _member_commands(sub: Any) -> None:
    help_ = "let a user read a project (needed when it is PRIVATE)"
    add = _command(sub, "member", "project memberships", "add", help_)
    add.add_argument("--user", required=True)
    add.add_argument("--project", required=True)
    _runs(add, _member_add)


def _project_commands(sub: Any) -> None:
    commands = sub.add_parser("project", help="projects").add_subparsers(
        dest="project_command", metavar="COMMAND", required=True
    )
    vis = commands.add_parser("visibility", help="make a project PUBLIC or PRIVATE")
    vis.add_argument("project")
    vis.add_argument("visibility", choices=[v.value for v in Visibility])
    _runs(vis, _project_visibility)
    help_ = "set a project's own patch-coverage gate floor, or 'unset' it"
    floor = commands.add_parser("patch-coverage-min", help=help_)
    floor.add_argument("project")
    floor.add_argument(
        "percent", type=_percent, help="0-100, or 'unset' to use results.gate.patch-coverage-min"
    )
    cli.settings_args(floor)
    floor.set_defaults(func=_project_patch_floor)


def _command(
    sub: Any, group: str, group_help: str, name: str, help_: str
) -> argparse.ArgumentParser:
    """``wharf results GROUP NAME``: a group of commands holding the one named ``name``."""
    commands = sub.add_parser(group, help=group_help).add_subparsers(
        dest=f"{group}_command", metavar="COMMAND", required=True
    )
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help_)
    return parser


def _project_patch_floor(args: argparse.Namespace) -> int:
    value: float | None = args.percent
    settings = cli.load_command_settings(Settings, args).results

    async def run() -> bool:
        from results.store import open_store

        async with open_store(settings.db_url, busy_timeout_ms=settings.db.busy_timeout_ms,
                              pool_size=settings.db.pool_size) as store:  # fmt: skip
            return await store.set_patch_coverage_min(args.project, value)

    if not asyncio.run(run()):
        print(f"wharf results: no project {args.project!r}", file=sys.stderr)
        return 1
    said = "the setting's" if value is None else f"{value:g}%"
    print(f"project {args.project} gates patch coverage at {said}", file=sys.stderr)
    return 0


def _percent(text: str) -> float | None:
    if text == "unset":
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage 0-100 or 'unset'")
    return value


def _runs(parser: argparse.ArgumentParser, action: Action) -> None:
    """``parser``'s command runs ``action`` on the accounts of the configured database."""
    cli.settings_args(parser)

    def run(args: argparse.Namespace) -> int:
        settings = cli.load_command_settings(Settings, args).results
        return cli.run_command(_with_accounts(settings, action, args), prog="wharf results")

    parser.set_defaults(func=run)


async def _with_accounts(settings: Any, action: Action, args: argparse.Namespace) -> int:
    from results.accounts import Accounts
    from results.store import open_store
    from results.store.accounts import SqlAccountStore

    async with open_store(
        settings.db_url,
        busy_timeout_ms=settings.db.busy_timeout_ms,
        pool_size=settings.db.pool_size,
    ) as store:
        return await action(Accounts(SqlAccountStore(store.db)), args)


async def _user_add(accounts: Accounts, args: argparse.Namespace) -> int:
    encoded = await accounts.hash(cli.read_password())
    user = await accounts.add_user(
        args.name,
        password_hash=encoded,
        role=Role(args.role),
        email=args.email,
        display_name=args.display_name,
    )
    print(f"created user {user.username} ({user.role.value})", file=sys.stderr)
    return 0


async def _token_create(accounts: Accounts, args: argparse.Namespace) -> int:
    user = await accounts.user(args.user)
    made = await accounts.create_token(user, args.name, expires_days=args.expires_days)
    expiry = made.token.expires_at.isoformat() if made.token.expires_at else "never"
    print(
        f"token {made.token.id} '{made.token.name}' for {user.username}, expires {expiry}; "
        "it is shown only this once",
        file=sys.stderr,
    )
    print(made.value)
    return 0


async def _member_add(accounts: Accounts, args: argparse.Namespace) -> int:
    await accounts.grant(args.user, args.project)
    print(f"{args.user} is a member of {args.project}", file=sys.stderr)
    return 0


async def _project_visibility(accounts: Accounts, args: argparse.Namespace) -> int:
    await accounts.set_visibility(args.project, Visibility(args.visibility))
    print(f"project {args.project} is {args.visibility}", file=sys.stderr)
    return 0
