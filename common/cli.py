"""What every ``wharf`` command shares: logging set-up (``common.logs``) and the settings options.

The command itself (argv, the service table, ``serve``) lives in :mod:`wharf.cli`, the composition
root; a service's own subcommands (``<service>/commands.py``) use these helpers so every command
reads settings and logs the same way. Only the commands read the environment.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from common import credentials
from common.config import load_settings
from common.errors import WharfError
from common.logs import configure_logging

__all__ = [
    "add_hash_password",
    "configure_logging",
    "load_command_settings",
    "read_password",
    "run_command",
    "settings_args",
]

S = TypeVar("S")


def settings_args(parser: argparse.ArgumentParser) -> None:
    """The options every command that reads settings takes: ``--config`` and ``--set``."""
    parser.add_argument("--config", type=Path, help="YAML settings file")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one setting (repeatable), e.g. chartsvc.security.mode=FULL",
    )


def load_command_settings(settings_cls: type[S], args: argparse.Namespace) -> S:
    """``settings_cls`` from defaults, ``--config``, the environment and ``--set``."""
    return load_settings(
        settings_cls, config_file=args.config, environ=os.environ, overrides=args.overrides
    )


def read_password() -> str:
    """A password from stdin, never argv: a prompt without echo on a terminal, else the first
    line (``--password-stdin``)."""
    if sys.stdin.isatty():
        return getpass.getpass("Password: ")
    return sys.stdin.readline().rstrip("\r\n")


def run_command(work: Coroutine[Any, Any, int], *, prog: str) -> int:
    """A command's ``work`` on a fresh event loop, its exit status; an error of ours it raises is
    one line on stderr (``<prog>: <detail>``) and status 1, never a traceback."""
    try:
        return asyncio.run(work)
    except WharfError as exc:
        print(f"{prog}: {exc.detail}", file=sys.stderr)
        return 1


def add_hash_password(commands: Any, service: str) -> argparse.ArgumentParser:
    """``wharf <service> hash-password``: prints a ``{scrypt}`` hash, for the admin password
    setting, of a password read as :func:`read_password` reads it (never from argv)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "hash-password",
        help=f"print a {{scrypt}} hash for {service}.security.admin.password (read from stdin)",
    )

    def run(_: argparse.Namespace) -> int:
        password = read_password()
        if not password:
            print(f"wharf {service}: the password must not be empty", file=sys.stderr)
            return 1
        print(credentials.settings_hash(password))
        return 0

    parser.set_defaults(func=run)
    return parser
