"""The browser side over real HTTP: login with CSRF, cookie flags, logout, profile tokens, dashboard."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from results.keys import LOGIN_THROTTLE
from tests.addresses import session_from
from tests.conftest import ApiClient
from tests.results.people import (
    bearer,
    csrf_in,
    login,
    make_user,
    page_csrf,
    start,
)
from tests.results.support import coverage_for, form, junit_xml
from tests.typing_support import Client

PASSWORD = "pw-alice-secret"


@pytest.fixture
async def client(api_client: ApiClient, tmp_path: Path) -> Client:
    client = await start(api_client, tmp_path)
    await make_user(client, "alice")
    return client


async def post_login(client: Client, **fields: str) -> tuple[int, str, dict[str, str]]:
    resp = await client.post("/login", data=fields, allow_redirects=False)
    cookies = {k: v.value for k, v in resp.cookies.items()}
    return resp.status, await resp.text(), cookies


async def test_login_refuses_missing_or_wrong_csrf(client: Client) -> None:
    page = await client.get("/login")
    csrf = csrf_in(await page.text())
    cookie = page.cookies["results_login_csrf"]
    assert cookie["httponly"]
    assert cookie["samesite"] == "Strict"
    status, text, cookies = await post_login(client, username="alice", password=PASSWORD)
    assert status == 403
    assert "CSRF" in text
    assert "results_session" not in cookies
    status, _, cookies = await post_login(
        client, username="alice", password=PASSWORD, csrf=csrf + "x"
    )
    assert status == 403
    assert "results_session" not in cookies
    client.session.cookie_jar.clear()  # a form posted without its cookie (another site's form)
    status, _, cookies = await post_login(client, username="alice", password=PASSWORD, csrf=csrf)
    assert status == 403
    assert "results_session" not in cookies


async def test_login_sets_a_hardened_session_cookie(client: Client) -> None:
    page = await client.get("/login?next=/profile")
    csrf = csrf_in(await page.text())
    data = {"username": "alice", "password": PASSWORD, "csrf": csrf, "next": "/profile"}
    resp = await client.post("/login", data=data, allow_redirects=False)
    assert resp.status == 303
    assert resp.headers["Location"] == "/profile"
    cookie = resp.cookies["results_session"]
    assert cookie["httponly"]
    assert cookie["samesite"] == "Lax"
    assert cookie["path"] == "/"
    assert not cookie["secure"]  # plain HTTP here; see the next test for HTTPS
    me = await (await client.get("/api/v1/me")).json()
    assert me["username"] == "alice"
    assert me["authenticatedBy"] == "session"


@pytest.mark.parametrize(
    ("sent", "location"), [("/x\ry", "/x%0Dy"), ("/a\r\nSet-Cookie: x=1", "/a%0D%0ASet-Cookie:%20x=1"),
                           ("/caf\u00e9?q=1#top", "/caf%C3%A9?q=1#top")],
)  # fmt: skip
async def test_login_redirects_to_a_next_path_with_controls_encoded(
    client: Client, sent: str, location: str
) -> None:
    csrf = csrf_in(await (await client.get("/login")).text())
    data = {"username": "alice", "password": PASSWORD, "csrf": csrf, "next": sent}
    resp = await client.post("/login", data=data, allow_redirects=False)
    assert (resp.status, resp.headers["Location"]) == (303, location)
    assert "x" not in resp.cookies


async def test_session_cookie_is_secure_behind_https(client: Client) -> None:
    page = await client.get("/login", headers={"X-Forwarded-Proto": "https"})
    assert page.cookies["results_login_csrf"]["secure"]
    csrf = csrf_in(await page.text())
    data = {"username": "alice", "password": PASSWORD, "csrf": csrf}
    resp = await client.post(
        "/login",
        data=data,
        allow_redirects=False,
        headers={"X-Forwarded-Proto": "https"},
        cookies={"results_login_csrf": csrf},  # the jar keeps Secure cookies from plain HTTP
    )
    assert resp.cookies["results_session"]["secure"]


async def test_wrong_password_and_open_redirects(client: Client) -> None:
    page = await client.get("/login")
    csrf = csrf_in(await page.text())
    status, text, cookies = await post_login(client, username="alice", password="nope", csrf=csrf)
    assert status == 401
    assert "wrong username or password" in text
    assert "results_session" not in cookies
    csrf = csrf_in(text)
    data = {"username": "alice", "password": PASSWORD, "csrf": csrf, "next": "//evil.test/x"}
    resp = await client.post("/login", data=data, allow_redirects=False)
    assert resp.headers["Location"] == "/"


async def test_logout_needs_csrf_and_invalidates_the_session(client: Client) -> None:
    await login(client, "alice")
    old = client.session.cookie_jar.filter_cookies(client.make_url("/"))["results_session"].value
    resp = await client.post("/logout", data={"csrf": "forged"}, allow_redirects=False)
    assert resp.status == 403
    assert (await client.get("/api/v1/me")).status == 200
    csrf = await page_csrf(client, "/profile")
    resp = await client.post("/logout", data={"csrf": csrf}, allow_redirects=False)
    assert resp.status == 303
    assert resp.headers["Location"] == "/login"
    assert (await client.get("/api/v1/me")).status == 401
    # The old cookie value is dead on the server, not just dropped by this browser.
    resp = await client.get("/api/v1/me", cookies={"results_session": old})
    assert resp.status == 401


async def test_profile_creates_lists_and_revokes_tokens(client: Client) -> None:
    resp = await client.get("/profile", allow_redirects=False)
    assert resp.status == 302
    assert resp.headers["Location"] == "/login?next=/profile"
    await login(client, "alice")
    csrf = await page_csrf(client)
    resp = await client.post("/profile/tokens", data={"name": "ci", "csrf": "wrong"})
    assert resp.status == 403
    resp = await client.post(
        "/profile/tokens", data={"name": "ci", "csrf": csrf, "expires_days": "30"}
    )
    assert resp.status == 200
    assert resp.headers["Cache-Control"] == "no-store"
    html = await resp.text()
    token = html.split('<pre id="new-token">')[1].split("</pre>")[0]
    assert token.startswith("wrt_")
    assert (await client.get("/api/v1/me", headers=bearer(token))).status == 200
    listing = await (await client.get("/profile")).text()
    assert "ci" in listing
    assert token not in listing  # shown once only
    assert "active" in listing
    token_id = listing.split("/profile/tokens/")[1].split("/revoke")[0]
    resp = await client.post(f"/profile/tokens/{token_id}/revoke", data={"csrf": csrf})
    assert resp.status == 200  # followed the 303 back to /profile
    assert "revoked" in await resp.text()
    assert (await client.get("/api/v1/me", headers=bearer(token))).status == 401


async def test_passwords_never_reach_logs_or_responses(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "Very-Distinct-Password-4711"
    await make_user(client, "bob", password=secret)
    bodies = []
    with caplog.at_level(logging.DEBUG):
        page = await client.get("/login")
        csrf = csrf_in(await page.text())
        for password in (secret + "-wrong", secret):
            data = {"username": "bob", "password": password, "csrf": csrf}
            resp = await client.post("/login", data=data)
            bodies.append(await resp.text())
            csrf = csrf_in(bodies[-1]) if resp.status == 401 else csrf
        bodies.append(await (await client.get("/api/v1/me")).text())
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert secret not in logged
    assert all(secret not in body for body in bodies)
    assert '"username": "bob"' in bodies[-1]


async def test_dashboard_pages_show_runs_escaped(client: Client) -> None:
    hostile = "&lt;script&gt;alert(1)&lt;/script&gt;"  # XML-escaped in the report
    report = junit_xml([("ok", "pass"), (hostile, "fail"), ("s", "skip")])
    resp = await client.post(
        "/api/v1/ingest", data=form(project="shop", junit=[report], jacoco=[coverage_for(80)])
    )
    assert resp.status == 201
    run = await resp.json()
    index = await client.get("/")
    assert index.headers["Content-Security-Policy"].startswith("default-src 'none'")
    html = await index.text()
    assert 'href="/projects/1"' in html
    assert "shop" in html
    project = await (await client.get(f"/projects/{run['projectId']}")).text()
    assert f'href="/runs/{run["runId"]}"' in project
    page = await (await client.get(f"/runs/{run['runId']}")).text()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "boom" in page  # the failure message
    assert "80.0 %" in page
    assert "src/app.py" in page
    missing = await client.get("/runs/999")
    assert missing.status == 404
    assert missing.content_type == "text/html"


async def test_login_guessing_is_throttled_per_account(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path)
    client.app[LOGIN_THROTTLE].clock = lambda: 1000.0  # its 1 s lock must not run out mid-test
    await make_user(client, "alice")
    page = await (await client.get("/login")).text()
    for _ in range(5):  # each answer is a fresh form with a fresh CSRF value
        guess = {"username": "alice", "password": "wrong", "csrf": csrf_in(page)}
        resp = await client.post("/login", data=guess, allow_redirects=False)
        assert resp.status == 401
        page = await resp.text()
    guess = {"username": "alice", "password": "wrong", "csrf": csrf_in(page)}
    resp = await client.post("/login", data=guess, allow_redirects=False)
    assert resp.status == 429
    assert int(resp.headers["Retry-After"]) >= 1
    page = await resp.text()
    assert "too many failed sign-ins" in page
    right = {"username": "alice", "password": "pw-alice-secret", "csrf": csrf_in(page)}
    assert (await client.post("/login", data=right, allow_redirects=False)).status == 429


async def test_guessing_from_another_address_never_locks_the_user_out(
    api_client: ApiClient, tmp_path: Path
) -> None:
    """Issue 39, item 4: wrong passwords for alice from 127.0.0.2 lock that address only."""
    client = await start(api_client, tmp_path)
    client.app[LOGIN_THROTTLE].clock = lambda: 1000.0
    await make_user(client, "alice")
    status = 0
    async with session_from("127.0.0.2") as elsewhere:
        for _ in range(10):
            async with elsewhere.get(client.make_url("/login")) as resp:
                page = await resp.text()
            guess = {"username": "alice", "password": "wrong", "csrf": csrf_in(page)}
            url = client.make_url("/login")
            async with elsewhere.post(url, data=guess, allow_redirects=False) as resp:
                status = resp.status
                assert status in (401, 429)
        assert status == 429
    page = await (await client.get("/login")).text()
    right = {"username": "alice", "password": "pw-alice-secret", "csrf": csrf_in(page)}
    assert (await client.post("/login", data=right, allow_redirects=False)).status == 303


async def test_a_page_refusing_a_bad_token_is_a_page_with_its_challenge(client: Client) -> None:
    """Pages answer errors as pages, the refusal's headers kept (a client reading the challenge
    learns why); the API answers the same refusal as a problem."""
    bad = {"Authorization": "Bearer not-a-token"}
    resp = await client.get("/", headers=bad)
    assert (resp.status, resp.content_type) == (401, "text/html")
    assert 'error="invalid_token"' in resp.headers["WWW-Authenticate"]
    assert "not valid" in await resp.text()
    resp = await client.get("/api/v1/projects", headers=bad)
    assert (resp.status, resp.content_type) == (401, "application/problem+json")
