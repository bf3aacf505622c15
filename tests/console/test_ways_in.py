"""The trusted proxy's headers, repeated or conflicting credentials, and public paths that never
read a credential (issue 33's ways in; issue 39, items 10 and 14)."""

from __future__ import annotations

import ipaddress
import logging

import aiohttp
import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from console.identity import Identity
from console.proxy import MAX_LOGGED, TrustedProxy
from tests.addresses import session_from
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN, WRONG
from tests.guards import assert_problem
from tests.scrape import scrape, value
from tests.typing_support import Client

SESSION = "/api/v1/auth/session"
PROXY = (
    "security.proxy.user-header=X-Forwarded-User",
    "security.proxy.groups-header=X-Forwarded-Groups",
    "security.proxy.trusted-networks=127.0.0.1/32",
)
FROM_PROXY = {"X-Forwarded-User": "carol@example.com", "X-Forwarded-Groups": "team-a, ops"}
IGNORED = "console_proxy_headers_ignored_total"


async def sign_in(client: Client) -> str:
    resp = await client.post(SESSION, headers=ADMIN)
    assert resp.status == 200
    client.session.cookie_jar.clear()
    return str(resp.cookies["JSESSIONID"].value)


async def test_a_trusted_proxy_names_the_person_and_their_groups(console_app: ConsoleApp) -> None:
    client = await console_app("security.open-mode=false", *PROXY)
    resp = await client.post(SESSION, headers=FROM_PROXY)
    body = await resp.json()
    assert (body["user"], body["via"], body["groups"]) == (
        "carol@example.com", "proxy", ["team-a", "ops"]
    )  # fmt: skip
    assert (await client.get("/api/v1/clusters", headers=FROM_PROXY)).status == 200
    # The audit trail is the admin groups' (console.security.admin.groups): a proxy's group too.
    await assert_problem(
        await client.get("/api/v1/audit", headers=FROM_PROXY), 403, code="admin-required"
    )
    admins = {**FROM_PROXY, "X-Forwarded-Groups": "ops, wharf:admins"}
    assert (await client.get("/api/v1/audit", headers=admins)).status == 200
    bare = {"X-Forwarded-User": "dave"}
    assert (await (await client.post(SESSION, headers=bare)).json())["groups"] == []
    # The proxy's user and a Basic login of someone else: two people, refused.
    both = {**FROM_PROXY, **ADMIN}
    await assert_problem(await client.get("/api/v1/audit", headers=both), 401)


@pytest.mark.parametrize("open_mode", [True, False])
async def test_proxy_headers_from_elsewhere_are_ignored_counted_and_logged_once(
    console_app: ConsoleApp, open_mode: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="console.proxy")
    client = await console_app(f"security.open-mode={str(open_mode).lower()}", *PROXY)
    async with session_from("127.0.0.2") as elsewhere:
        for _ in range(3):
            url = client.make_url("/api/v1/audit")
            async with elsewhere.get(url, headers=FROM_PROXY) as resp:
                assert resp.status == (200 if open_mode else 401)  # anonymous, as if unsent
            async with elsewhere.delete(
                client.make_url("/api/v1/clusters/alpha"), headers=FROM_PROXY
            ) as resp:
                assert resp.status == 401
    samples = await scrape(client, **ADMIN)
    assert value(samples, IGNORED) == 6
    lines = [r.getMessage() for r in caplog.records if r.name == "console.proxy"]
    assert len(lines) == 1
    assert "127.0.0.2" in lines[0]
    assert "carol" not in lines[0]


async def test_without_trusted_networks_the_proxy_way_is_off(console_app: ConsoleApp) -> None:
    client = await console_app("security.open-mode=false", *PROXY[:2])
    await assert_problem(await client.get("/api/v1/audit", headers=FROM_PROXY), 401)


async def test_a_bad_trusted_network_stops_start_up(console_app: ConsoleApp) -> None:
    with pytest.raises(Exception, match="trusted-networks"):
        await console_app("security.proxy.trusted-networks=10.0.0.0/33")


async def test_a_repeated_credential_is_a_401(console_app: ConsoleApp) -> None:
    """Issue 39, item 10: a good copy beside a bad one never authenticates."""
    client = await console_app("security.open-mode=false")
    cookie = await sign_in(client)
    twice = CIMultiDict([("Authorization", ADMIN["Authorization"]), *WRONG.items()])
    await assert_problem(
        await client.get("/api/v1/audit", headers=twice), 401, code="repeated-credential"
    )
    same_twice = CIMultiDict([*ADMIN.items(), *ADMIN.items()])
    await assert_problem(await client.get("/api/v1/audit", headers=same_twice), 401)
    cookies = {"Cookie": f"JSESSIONID={cookie}; JSESSIONID=forged"}
    await assert_problem(
        await client.get("/api/v1/audit", headers=cookies), 401, code="repeated-credential"
    )
    split = CIMultiDict([("Cookie", f"JSESSIONID={cookie}"), ("Cookie", "JSESSIONID=forged")])
    await assert_problem(await client.get("/api/v1/audit", headers=split), 401)
    assert (
        await client.get("/api/v1/audit", headers={"Cookie": f"JSESSIONID={cookie}"})
    ).status == 200


async def test_a_bad_cookie_beside_good_basic_is_a_401_except_when_signing_in(
    console_app: ConsoleApp,
) -> None:
    client = await console_app("security.open-mode=false")
    stale = {**ADMIN, "Cookie": "JSESSIONID=forged"}
    await assert_problem(
        await client.get("/api/v1/audit", headers=stale), 401, code="conflicting-credentials"
    )
    live = {**ADMIN, "Cookie": f"JSESSIONID={await sign_in(client)}"}
    assert (await client.get("/api/v1/audit", headers=live)).status == 200
    # Signing in replaces the cookie, whatever it was: a browser with a stale one can sign in.
    assert (await client.post(SESSION, headers=stale)).status == 200


@pytest.mark.parametrize("open_mode", [True, False])
async def test_public_pages_never_read_a_credential(
    console_app: ConsoleApp, open_mode: bool
) -> None:
    """Issue 39, item 14: a browser holding stale credentials still loads the login page."""
    client = await console_app(f"security.open-mode={str(open_mode).lower()}")
    odd = CIMultiDict([*WRONG.items(), *ADMIN.items(), ("Cookie", "JSESSIONID=a; JSESSIONID=b")])
    for path in ("/login", "/", "/ui/console.js", "/ui/wharf.css"):
        for headers in (WRONG, {"Authorization": "Basic !!!"}, odd):
            resp = await client.get(path, headers=headers)
            assert resp.status == 200, (path, headers)


async def test_open_mode_cluster_list_and_about_read_credentials_leniently(
    console_app: ConsoleApp,
) -> None:
    client = await console_app()
    for path in ("/api/v1/clusters", "/api/v1/about"):
        assert (await client.get(path, headers=WRONG)).status == 200, path
    about = await (await client.get("/api/v1/about", headers=WRONG)).json()
    assert about["security"]["authenticated"] is False
    about = await (await client.get("/api/v1/about", headers=ADMIN)).json()
    assert about["security"]["authenticated"] is True
    closed = await console_app("security.open-mode=false")
    await assert_problem(await closed.get("/api/v1/clusters", headers=WRONG), 401)


async def test_basic_for_an_unknown_user_costs_a_hash_and_is_refused(
    console_app: ConsoleApp,
) -> None:
    client = await console_app()
    stranger = {"Authorization": aiohttp.encode_basic_auth("stranger", "x")}
    await assert_problem(await client.post(SESSION, headers=stranger), 401)


async def test_a_proxied_websocket_handshake_must_come_from_this_origin(
    console_app: ConsoleApp,
) -> None:
    """The browser sends the proxy's cookie on its own, so a cross-site page could ride it."""
    client = await console_app(*PROXY)
    upgrade = {**FROM_PROXY, "Upgrade": "websocket", "Connection": "Upgrade"}
    resp = await client.get("/ws/exec", headers={**upgrade, "Origin": "https://evil.example"})
    await assert_problem(resp, 403, code="csrf-rejected")
    host = f"http://{client.host}:{client.port}"
    resp = await client.get("/ws/exec", headers={**upgrade, "Origin": host})
    assert resp.status not in (401, 403)


def test_the_proxy_remembers_a_bounded_number_of_logged_addresses(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="console.proxy")
    counted: list[int] = []
    proxy = TrustedProxy("X-Forwarded-User", None, (ipaddress.ip_network("10.0.0.0/8"),))
    proxy.ignored = lambda: counted.append(1)
    headers = CIMultiDictProxy(CIMultiDict({"X-Forwarded-User": "mallory"}))
    for i in range(MAX_LOGGED * 3):
        assert proxy.identity(headers, f"192.168.{i // 256}.{i % 256}") is None
    assert len(counted) == MAX_LOGGED * 3
    assert len(caplog.records) == MAX_LOGGED * 3  # each address once
    assert len(proxy._logged) == MAX_LOGGED
    assert proxy.identity(headers, "10.1.2.3") == Identity("mallory")
    assert not proxy.trusts(None)
    assert not proxy.trusts("::1")
    assert not proxy.trusts("not-an-address")
