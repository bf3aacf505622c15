"""Named console accounts, made with the real ``wharf console user`` command, signing in by Basic
and by session; the admin login's groups; the anonymous identity's settings."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from console.app import make_policy
from console.identity import Identity
from tests.commands import run_wharf
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN, ADMIN_PASSWORD, make_settings
from tests.guards import assert_problem
from tests.typing_support import Client
from wharf.cli import main

SESSION = "/api/v1/auth/session"
ALICE_PASSWORD = "alice-Password-4321"
ALICE = {"Authorization": aiohttp.encode_basic_auth("alice", ALICE_PASSWORD)}


def wharf(
    data_dir: Path, *args: str, stdin: str = "", sets: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """``wharf console ARGS`` on the database a console with ``data_dir`` uses."""
    settings = [f"console.data-dir={data_dir}", f"console.security.admin.password={ADMIN_PASSWORD}"]
    where = [arg for setting in (*settings, *sets) for arg in ("--set", setting)]
    result = run_wharf("console", *args, *where, stdin=stdin)
    assert ALICE_PASSWORD not in result.stdout + result.stderr
    return result


def add_alice(data_dir: Path, groups: str = "team-a,dev") -> None:
    added = wharf(
        data_dir, "user", "add", "alice", "--groups", groups, "--password-stdin",
        stdin=ALICE_PASSWORD + "\n",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "created account alice (team-a, dev)" in added.stderr


Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """``wharf console ARGS`` as :func:`wharf` runs it, through the same entry point in this
    process: (exit code, stdout, stderr). A subprocess costs a second or more apiece; the
    subprocess path is :func:`add_alice`'s. An async test calls it in a thread."""

    def run(data_dir: Path, *args: str, stdin: str = "") -> tuple[int, str, str]:
        settings = [
            f"console.data-dir={data_dir}",
            f"console.security.admin.password={ADMIN_PASSWORD}",
        ]
        where = [arg for setting in settings for arg in ("--set", setting)]
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        try:
            code = main(["console", *args, *where])
        except SystemExit as exc:  # argparse refusing the command line
            code = int(exc.code or 0)
        out = capsys.readouterr()
        assert ALICE_PASSWORD not in out.out + out.err
        return code, out.out, out.err

    return run


async def who(client: Client, headers: dict[str, str]) -> dict[str, object]:
    resp = await client.post(SESSION, headers=headers)
    assert resp.status == 200, await resp.text()
    body: dict[str, object] = await resp.json()
    return body


async def sign_in(client: Client, headers: dict[str, str]) -> dict[str, str]:
    resp = await client.post(SESSION, headers=headers)
    assert resp.status == 200, await resp.text()
    cookie = resp.cookies["JSESSIONID"].value
    client.session.cookie_jar.clear()
    return {"Cookie": f"JSESSIONID={cookie}"}


async def test_an_account_made_by_the_cli_signs_in_with_its_groups(
    console_app: ConsoleApp, tmp_path: Path
) -> None:
    data = tmp_path / "console"
    add_alice(data)
    listed = wharf(data, "user", "list")
    assert (listed.returncode, listed.stdout) == (0, "alice\tteam-a,dev\n")
    client = await console_app("security.open-mode=false", data_dir=data)
    assert await who(client, ALICE) == {
        "authenticated": True, "user": "alice", "username": "alice", "via": "basic",
        "groups": ["team-a", "dev"], "idleTimeoutSeconds": 1800,
    }  # fmt: skip
    assert (await client.get("/api/v1/clusters", headers=ALICE)).status == 200
    session = await sign_in(client, ALICE)
    assert (await who(client, session))["groups"] == ["team-a", "dev"]
    # A named account is a signed-in person, but cluster management is the admin groups'.
    resp = await client.delete("/api/v1/clusters/alpha", headers=ALICE)
    await assert_problem(resp, 403, code="admin-required")
    wrong = {"Authorization": aiohttp.encode_basic_auth("alice", "nope")}
    await assert_problem(await client.post(SESSION, headers=wrong), 401)
    nobody = {"Authorization": aiohttp.encode_basic_auth("nobody", ALICE_PASSWORD)}
    await assert_problem(await client.post(SESSION, headers=nobody), 401)


async def test_changes_by_the_cli_hold_at_the_next_request_sessions_included(
    console_app: ConsoleApp, tmp_path: Path, cli: Cli
) -> None:
    data = tmp_path / "console"
    add_alice(data)
    client = await console_app("security.open-mode=false", data_dir=data)
    session = await sign_in(client, ALICE)
    code, _, err = await asyncio.to_thread(
        cli, data, "user", "set-groups", "alice", "--groups", "team-b"
    )
    assert code == 0, err
    assert (await who(client, session))["groups"] == ["team-b"]
    assert (await who(client, ALICE))["groups"] == ["team-b"]
    new_password = "alice-New-Password-77"
    code, _, err = await asyncio.to_thread(
        cli, data, "user", "set-password", "alice", "--password-stdin", stdin=new_password
    )
    assert code == 0, err
    await assert_problem(await client.get("/api/v1/clusters", headers=ALICE), 401)
    # A new password ends the sessions signed in with the old one (the jar's one too).
    await assert_problem(await client.get("/api/v1/clusters", headers=session), 401)
    client.session.cookie_jar.clear()
    renewed = {"Authorization": aiohttp.encode_basic_auth("alice", new_password)}
    assert (await client.get("/api/v1/clusters", headers=renewed)).status == 200
    session = await sign_in(client, renewed)
    code, _, err = await asyncio.to_thread(cli, data, "user", "remove", "alice")
    assert code == 0, err
    await assert_problem(await client.get("/api/v1/clusters", headers=session), 401)
    await assert_problem(await client.get("/api/v1/clusters", headers=renewed), 401)
    assert await asyncio.to_thread(cli, data, "user", "list") == (0, "", "")


def test_the_cli_refuses_what_it_cannot_keep(tmp_path: Path, cli: Cli) -> None:
    """The refusals, through the same ``wharf`` entry point in this process (``cli``)."""
    data = tmp_path / "console"
    add_alice(data)

    def run(*args: str, stdin: str = "") -> tuple[int, str]:
        code, _, err = cli(data, *args, stdin=stdin)
        return code, err

    assert run("user", "add", "alice", "--password-stdin", stdin="x-password\n") == (
        1, "wharf console: account alice already exists\n"
    )  # fmt: skip
    for args, stdin, says in (
        (("user", "add", "admin", "--password-stdin"), "pw\n", "admin login's name"),
        (("user", "add", "system:x", "--password-stdin"), "pw\n", "an account name is"),
        (("user", "add", "bob", "--password-stdin"), "\n", "must not be empty"),
        (("user", "add", "bob", "--groups", "a," + "b" * 300, "--password-stdin"), "pw\n", "group"),
        (("user", "remove", "bob"), "", "no account bob"),
        (("user", "set-groups", "bob", "--groups", "x"), "", "no account bob"),
        (("user", "set-password", "bob", "--password-stdin"), "pw\n", "no account bob"),
        (("user", "list", "--set", "console.clusters.store.backend=memory"), "", "need a database"),
    ):
        code, err = run(*args, stdin=stdin)
        assert code == 1, args
        assert says in err, (args, err)
    # No password on argv: the flag is required and nothing else takes one.
    code, err = run("user", "add", "bob", stdin="pw\n")
    assert code == 2
    assert "--password-stdin" in err


async def test_the_admin_login_stays_and_carries_the_configured_groups(
    console_app: ConsoleApp,
) -> None:
    client = await console_app("security.admin.groups=ops,wharf:admins")
    body = await who(client, ADMIN)
    assert (body["user"], body["groups"]) == ("admin", ["ops", "wharf:admins"])
    default = await console_app()
    assert (await who(default, ADMIN))["groups"] == ["wharf:admins"]


def test_the_anonymous_identity_comes_from_the_settings(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path, "security.anonymous.user=guest", "security.anonymous.groups=viewers,guests"
    )
    policy = make_policy(settings.console)
    assert policy.anonymous == Identity("guest", ("viewers", "guests"), anonymous=True)
    default = make_policy(make_settings(tmp_path).console).anonymous
    assert default == Identity("system:anonymous", ("system:unauthenticated",), anonymous=True)
