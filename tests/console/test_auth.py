"""Open and closed mode, with and without credentials; the session cookie; bare 401s."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from common.config import ConfigError
from common.credentials import HASHED_PREFIX, hash_password
from console.app import create_app
from tests.addresses import session_from
from tests.conftest import ApiClient
from tests.console.conftest import ConsoleApp
from tests.console.support import (
    ADMIN,
    ADMIN_PASSWORD,
    WRONG,
    make_settings,
    stop_the_throttle_clock,
)
from tests.guards import assert_problem
from tests.typing_support import Client

#: Reads anyone may make in open mode and only the admin in closed mode.
GUARDED_READS = (
    "/api/v1/clusters",
    "/api/v1/about",
    "/api/v1/audit",
    "/actuator/metrics",
    "/actuator/prometheus",
    "/v3/api-docs",
)
SECRET_PATHS = [
    "/ws/exec?cluster=alpha&namespace=default&pod=p&container=c",
    "/api/v1/clusters/alpha/pods/default/web-1/files?path=/",
    "/api/v1/clusters/alpha/pods/default/web-1/files/content?path=/etc/hosts",
    "/api/v1/clusters/alpha/pods/default/web-1/files/download",
    "/api/v1/helm/values",
    "/api/v1/helm/values/base",
    "/api/v1/clusters/alpha/helm/releases/default/web/values",
]


SESSION = "/api/v1/auth/session"


async def assert_bare_401(resp: aiohttp.ClientResponse) -> None:
    await assert_problem(resp, 401, code="unauthorized")
    assert "WWW-Authenticate" not in resp.headers


async def test_open_mode_reads_are_public_and_writes_need_the_admin(
    console_app: ConsoleApp,
) -> None:
    client = await console_app()
    for path in (*GUARDED_READS, "/actuator/health"):
        assert (await client.get(path)).status == 200, path
    resp = await client.post("/api/v1/clusters/contexts", json={"kubeconfig": "x"})
    await assert_bare_401(resp)
    await assert_bare_401(await client.delete("/api/v1/clusters/alpha"))
    await assert_bare_401(await client.put("/api/v1/clusters/alpha", json={}))
    resp = await client.delete("/api/v1/clusters/alpha", headers=ADMIN)
    await assert_problem(resp, 409, code="cluster-conflict")  # authenticated, then refused


async def test_a_wrong_basic_login_is_a_bare_401_everywhere(console_app: ConsoleApp) -> None:
    client = await console_app()
    for method, path in (
        ("GET", "/api/v1/audit"),
        ("POST", "/api/v1/clusters"),
        ("POST", "/api/v1/auth/session"),
        ("GET", "/api/v1/clusters/alpha/namespaces"),
    ):
        await assert_bare_401(await client.request(method, path, headers=WRONG))
    for header in ("Basic !!!", "Basic " + "bm9jb2xvbg==", "Basic"):  # not base64; no colon
        await assert_bare_401(await client.get("/api/v1/audit", headers={"Authorization": header}))


@pytest.mark.parametrize("open_mode", [True, False])
async def test_paths_returning_secrets_need_the_admin_in_both_modes(
    console_app: ConsoleApp, open_mode: bool
) -> None:
    client = await console_app(f"security.open-mode={str(open_mode).lower()}")
    for path in SECRET_PATHS:
        await assert_bare_401(await client.get(path))
        resp = await client.get(path, headers=ADMIN)
        assert resp.status != 401, path  # past authentication (404 until the route lands)
    encoded = "/api/v1/clusters/alpha/pods/default/web-1/%66iles"  # "files", percent-encoded
    await assert_bare_401(await client.get(encoded))


async def test_closed_mode_needs_the_admin_except_health_info_and_sign_in(
    console_app: ConsoleApp,
) -> None:
    client = await console_app("security.open-mode=false")
    for path in (
        "/actuator/health",
        "/actuator/health/liveness",
        "/actuator/health/readiness",
        "/actuator/info",
    ):
        assert (await client.get(path)).status == 200, path
    for path in (*GUARDED_READS, "/api/v1/nowhere"):
        await assert_bare_401(await client.get(path))
        assert (await client.get(path, headers=ADMIN)).status in (200, 404), path
    await assert_bare_401(await client.post("/api/v1/auth/session"))
    assert (await client.delete("/api/v1/auth/session")).status == 204


async def sign_in(client: Client, headers: dict[str, str] = ADMIN) -> str:
    resp = await client.post("/api/v1/auth/session", headers=headers)
    assert resp.status == 200, await resp.text()
    cookie = resp.cookies["JSESSIONID"]
    assert cookie["httponly"]
    assert cookie["samesite"] == "Lax"
    assert cookie["path"] == "/"
    client.session.cookie_jar.clear()  # the tests send the cookie themselves
    return str(cookie.value)


async def test_session_cookie_flow(console_app: ConsoleApp) -> None:
    client = await console_app("security.open-mode=false")
    session = {"Cookie": f"JSESSIONID={await sign_in(client)}"}
    assert (await client.get("/api/v1/clusters", headers=session)).status == 200
    resp = await client.post("/api/v1/auth/session", headers=session)
    assert await resp.json() == {
        "authenticated": True,
        "user": "admin",
        "username": "admin",
        "via": "session",
        "groups": ["wharf:admins"],
        "idleTimeoutSeconds": 1800,
    }
    assert "JSESSIONID" not in resp.cookies  # answered from the session, nothing new issued
    # Credentials sent with the cookie are verified; the cookie does not stand in for them.
    await assert_bare_401(await client.post("/api/v1/auth/session", headers={**session, **WRONG}))
    resp = await client.delete("/api/v1/auth/session", headers=session)
    assert resp.status == 204
    assert resp.cookies["JSESSIONID"].value == ""
    await assert_bare_401(await client.get("/api/v1/clusters", headers=session))
    await assert_bare_401(await client.post("/api/v1/auth/session", headers=session))


async def test_signing_in_again_replaces_the_session(console_app: ConsoleApp) -> None:
    client = await console_app("security.open-mode=false")
    first = await sign_in(client)
    second = await sign_in(client, {**ADMIN, "Cookie": f"JSESSIONID={first}"})
    assert first != second
    await assert_bare_401(
        await client.get("/api/v1/about", headers={"Cookie": f"JSESSIONID={first}"})
    )
    resp = await client.get("/api/v1/about", headers={"Cookie": f"JSESSIONID={second}"})
    assert resp.status == 200
    await assert_bare_401(
        await client.get("/api/v1/about", headers={"Cookie": "JSESSIONID=forged"})
    )


async def test_a_session_opens_writes_in_open_mode(console_app: ConsoleApp) -> None:
    client = await console_app()
    session = {"Cookie": f"JSESSIONID={await sign_in(client)}"}
    resp = await client.delete("/api/v1/clusters/alpha", headers=session)
    await assert_problem(resp, 409, code="cluster-conflict")


async def test_websocket_handshakes_with_a_cookie_must_come_from_this_origin(
    console_app: ConsoleApp,
) -> None:
    client = await console_app()
    cookie = f"JSESSIONID={await sign_in(client)}"
    upgrade = {"Cookie": cookie, "Upgrade": "websocket", "Connection": "Upgrade"}
    resp = await client.get("/ws/exec", headers={**upgrade, "Origin": "https://evil.example"})
    await assert_problem(resp, 403, code="csrf-rejected")
    host = f"http://{client.host}:{client.port}"
    resp = await client.get("/ws/exec", headers={**upgrade, "Origin": host})
    assert resp.status not in (401, 403)


async def test_hashed_password(tmp_path: Path, api_client: ApiClient) -> None:
    hashed = HASHED_PREFIX + hash_password(ADMIN_PASSWORD, n=2**10)
    settings = make_settings(tmp_path, f"security.admin.password={hashed}")
    client = await api_client(create_app(settings, environ={}))
    for _ in range(2):  # the second time from the verified-password memory
        resp = await client.delete("/api/v1/clusters/default", headers=ADMIN)
        await assert_problem(resp, 409, code="cluster-conflict")
    await assert_bare_401(await client.delete("/api/v1/clusters/default", headers=WRONG))


@pytest.mark.parametrize("value", ["{scrypt}nonsense", "{scrypt}scrypt$3$8$1$c2FsdA$aGFzaA"])
def test_a_malformed_hash_stops_start_up(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError, match=r"console\.security\.admin\.password"):
        create_app(make_settings(tmp_path, f"security.admin.password={value}"), environ={})


async def test_without_a_password_nobody_is_admin(tmp_path: Path, api_client: ApiClient) -> None:
    settings = make_settings(tmp_path, "security.admin.password=")
    client = await api_client(create_app(settings, environ={}))
    await assert_bare_401(await client.delete("/api/v1/clusters/default", headers=ADMIN))
    assert (await client.get("/api/v1/clusters")).status == 200


async def test_another_username_is_refused(console_app: ConsoleApp) -> None:
    client = await console_app()
    other = {"Authorization": aiohttp.encode_basic_auth("root", ADMIN_PASSWORD)}
    await assert_bare_401(await client.post("/api/v1/auth/session", headers=other))


@pytest.mark.parametrize("open_mode", [True, False])
async def test_probes_ignore_any_credential_sent(console_app: ConsoleApp, open_mode: bool) -> None:
    client = await console_app(f"security.open-mode={str(open_mode).lower()}")
    for path in ("/actuator/health", "/actuator/health/readiness", "/actuator/info"):
        for headers in (WRONG, {"Authorization": "Basic !!!"}, ADMIN):
            assert (await client.get(path, headers=headers)).status == 200, (path, headers)


async def test_wrong_passwords_are_throttled_before_the_hash_is_computed(
    console_app: ConsoleApp,
) -> None:
    client = await console_app()
    stop_the_throttle_clock(client)
    for _ in range(5):
        await assert_bare_401(await client.get("/api/v1/audit", headers=WRONG))
    locked = await client.post("/api/v1/auth/session", headers=WRONG)
    body = await assert_problem(locked, 429, code="too-many-attempts")
    assert int(locked.headers["Retry-After"]) >= 1
    assert "try again" in body["detail"]
    # While locked even the right password waits: the lock is checked before any password.
    locked = await client.post("/api/v1/auth/session", headers=ADMIN)
    await assert_problem(locked, 429, code="too-many-attempts")
    # Requests without credentials are not affected.
    assert (await client.get("/api/v1/clusters")).status == 200


async def test_guessing_from_another_address_never_locks_the_admin_out(
    console_app: ConsoleApp,
) -> None:
    """Issue 39, item 4: wrong passwords for the admin from 127.0.0.2, Basic on API calls and
    sign-ins alike, lock only that address; the admin at 127.0.0.1 signs in all along."""
    client = await console_app()
    stop_the_throttle_clock(client)
    async with session_from("127.0.0.2") as elsewhere:
        for _ in range(40):
            async with elsewhere.get(client.make_url("/api/v1/audit"), headers=WRONG) as resp:
                assert resp.status in (401, 429)
            async with elsewhere.post(client.make_url(SESSION), headers=WRONG) as resp:
                assert resp.status in (401, 429)
        async with elsewhere.post(client.make_url(SESSION), headers=ADMIN) as resp:
            await assert_problem(resp, 429, code="too-many-attempts")  # that address is locked
    assert (await client.post(SESSION, headers=ADMIN)).status == 200
    assert (await client.get("/api/v1/audit", headers=ADMIN)).status == 200
