"""The admin password: plain, {noop} or {scrypt}; and ``wharf console hash-password``."""

from __future__ import annotations

import argparse
import io
import sys

import pytest

from common import credentials
from common.config import ConfigError
from common.credentials import HASHED_PREFIX, hash_password
from console import commands
from console.credentials import AdminCredentials


def main(argv: list[str]) -> int:
    """``wharf console ...`` as the CLI parses it, without the other services' commands."""
    parser = argparse.ArgumentParser(prog="wharf")
    commands.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


async def test_plain_and_noop_passwords() -> None:
    for configured in ("s3cret", "{noop}s3cret"):
        creds = AdminCredentials("admin", configured)
        assert await creds.check("admin", "s3cret")
        assert not await creds.check("admin", "S3cret")
        assert not await creds.check("Admin", "s3cret")
        assert "s3cret" not in repr(creds)


async def test_scrypt_hash() -> None:
    creds = AdminCredentials("admin", HASHED_PREFIX + hash_password("pw", n=2**10))
    assert not await creds.check("admin", "wrong")
    assert await creds.check("admin", "pw")
    assert await creds.check("admin", "pw")  # remembered
    assert not await creds.check("other", "pw")


async def test_unset_password_never_matches() -> None:
    creds = AdminCredentials("admin", None)
    assert not creds.password_set
    assert not await creds.check("admin", "")


def test_hash_password_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("horse battery\n"))
    assert main(["console", "hash-password"]) == 0
    out = capsys.readouterr()
    printed = out.out.strip()
    assert printed.startswith("{scrypt}scrypt$16384$8$1$")
    assert "horse" not in out.out + out.err
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
    assert main(["console", "hash-password"]) == 1


async def test_a_printed_hash_verifies() -> None:
    creds = AdminCredentials("admin", HASHED_PREFIX + hash_password("horse battery"))
    assert await creds.check("admin", "horse battery")


def test_a_hash_results_refuses_is_refused_here_too() -> None:
    """One format, one error: a 4-byte salt is no salt, for the console as for results."""
    short_salt = "scrypt$1024$8$1$c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5"
    with pytest.raises(credentials.InvalidHash):
        credentials.parse_hash(short_salt)
    with pytest.raises(ConfigError, match=r"console\.security\.admin\.password"):
        AdminCredentials("admin", HASHED_PREFIX + short_salt)
