"""``wharf console hash-password``: a ``{scrypt}`` hash for ``console.security.admin.password``.

The password comes only from stdin (a prompt without echo on a terminal, else the first line),
never from argv, where ``ps`` and shell history would keep it. The hash alone goes to stdout so
``HASH=$(wharf console hash-password < pw.txt)`` works. This module never prints a password.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from common.credentials import settings_hash


def register(subparsers: Any) -> None:
    console = subparsers.add_parser("console", help="console administration")
    sub = console.add_subparsers(dest="console_command", metavar="COMMAND", required=True)
    hashing = sub.add_parser(
        "hash-password",
        help="print a {scrypt} hash for console.security.admin.password (password from stdin)",
    )
    hashing.set_defaults(func=_hash_password)


def _hash_password(args: argparse.Namespace) -> int:
    password = getpass.getpass("Password: ") if sys.stdin.isatty() else sys.stdin.readline()
    password = password.rstrip("\r\n")
    if not password:
        print("wharf console: the password must not be empty", file=sys.stderr)
        return 1
    print(settings_hash(password))
    return 0
