"""``wharf results ...`` as a user runs it: real subprocesses on the database the server then uses."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.commands import run_wharf
from tests.conftest import ApiClient
from tests.results.people import bearer, csrf_in, start
from tests.results.support import form, junit_xml

PASSWORD = "cli-Password-9876"


def wharf(
    tmp_path: Path, *args: str, stdin: str = "", settings: bool = True
) -> subprocess.CompletedProcess[str]:
    data = tmp_path / "results-data"  # what tests.results.support.settings_for uses
    where = ["--set", f"results.data-dir={data}"] if settings else []
    return run_wharf("results", *args, *where, stdin=stdin)


def no_password(result: subprocess.CompletedProcess[str]) -> None:
    assert PASSWORD not in result.stdout
    assert PASSWORD not in result.stderr


async def test_user_add_and_token_create_then_use_the_token(
    api_client: ApiClient, tmp_path: Path
) -> None:
    added = wharf(
        tmp_path,
        *("user", "add", "admin", "--role", "ADMIN", "--password-stdin"),
        *("--email", "admin@x.test", "--display-name", "The Admin"),
        stdin=PASSWORD + "\n",
    )
    assert added.returncode == 0, added.stderr
    no_password(added)
    made = wharf(
        tmp_path, "token", "create", "--user", "admin", "--name", "ci", "--expires-days", "7"
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert token.startswith("wrt_")
    assert "shown only this once" in made.stderr
    client = await start(api_client, tmp_path)
    resp = await client.get("/api/v1/me", headers=bearer(token))
    assert await resp.json() == {
        "username": "admin",
        "displayName": "The Admin",
        "email": "admin@x.test",
        "role": "ADMIN",
        "authenticatedBy": "token",
    }
    page = await client.get("/login")
    assert page.status == 200


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (("user", "add", "bad name", "--password-stdin"), "x\n", "username"),
        (("user", "add", "empty", "--password-stdin"), "\n", "password must not be empty"),
        (("token", "create", "--user", "ghost", "--name", "ci"), "", "no user ghost"),
    ],
)
def test_refusals_are_one_line_and_exit_1(
    tmp_path: Path, args: tuple[str, ...], stdin: str, message: str
) -> None:
    result = wharf(tmp_path, *args, stdin=stdin)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_duplicate_user_is_refused(tmp_path: Path) -> None:
    first = wharf(tmp_path, "user", "add", "bob", "--password-stdin", stdin=PASSWORD)
    assert first.returncode == 0
    again = wharf(tmp_path, "user", "add", "BOB", "--password-stdin", stdin=PASSWORD)
    assert again.returncode == 1
    assert "already exists" in again.stderr


async def test_private_project_membership_from_the_shell(
    api_client: ApiClient, tmp_path: Path
) -> None:
    wharf(tmp_path, "user", "add", "dev", "--password-stdin", stdin=PASSWORD)
    token = wharf(tmp_path, "token", "create", "--user", "dev", "--name", "t").stdout.strip()
    client = await start(api_client, tmp_path)
    report = junit_xml([("ok", "pass")])
    assert (
        await client.post("/api/v1/ingest", data=form(project="vault", junit=[report]))
    ).status == 201
    await client.close()
    hidden = wharf(tmp_path, "project", "visibility", "vault", "PRIVATE")
    assert hidden.returncode == 0, hidden.stderr
    member = wharf(tmp_path, "member", "add", "--user", "dev", "--project", "vault")
    assert member.returncode == 0, member.stderr
    client = await start(api_client, tmp_path)
    query = {"project": "vault", "branch": "main"}
    assert (await client.get("/api/v1/gate", params=query)).status == 404
    assert (await client.get("/api/v1/gate", params=query, headers=bearer(token))).status == 200


async def test_hash_password_feeds_the_admin_bootstrap(
    api_client: ApiClient, tmp_path: Path
) -> None:
    hashed = wharf(
        tmp_path, "hash-password", "--password-stdin", stdin=PASSWORD + "\n", settings=False
    )
    assert hashed.returncode == 0
    value = hashed.stdout.strip()
    assert value.startswith("{scrypt}scrypt$")
    no_password(hashed)
    client = await start(
        api_client,
        tmp_path,
        "results.security.admin.username=root",
        f"results.security.admin.password={value}",
    )
    page = await client.get("/login")
    data = {"username": "root", "password": PASSWORD, "csrf": csrf_in(await page.text())}
    resp = await client.post("/login", data=data, allow_redirects=False)
    assert resp.status == 303
    me = await (await client.get("/api/v1/me")).json()
    assert me["role"] == "ADMIN"
