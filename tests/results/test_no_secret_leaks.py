"""No results secret reaches a log line or an answer: the bootstrap admin's password (right and
wrong), the session cookie, CSRF values (log only: pages carry them by design), an API token from
creation through ingest to revocation, and a wrong token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientResponse

from tests.conftest import ApiClient
from tests.leaks import LeakScan
from tests.results.people import CSRF_FIELD, bearer, csrf_in, start
from tests.results.support import form, junit_xml

REPORT = junit_xml([("ok", "pass"), ("broken", "fail")])


async def test_no_secret_in_the_results_logs_or_answers(
    api_client: ApiClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    scan = LeakScan(caplog)
    password = scan.secret("admin password", "Leak-Scan-Admin-Password-77")
    wrong = scan.secret("a wrong password", "Leak-Scan-Admin-Password-78")
    client = await start(
        api_client,
        tmp_path,
        "results.security.open-mode=false",
        "results.security.admin.username=root",
        f"results.security.admin.password={password}",
    )

    async def sign_in(given: str, **kwargs: Any) -> ClientResponse:
        page = await scan.send(client, "GET", "/login")
        login_csrf = scan.secret("login CSRF", csrf_in(await page.text()), answers=False)
        form = {"username": "root", "password": given, "csrf": login_csrf}
        return await scan.send(client, "POST", "/login", data=form, **kwargs)

    assert (await sign_in(wrong)).status == 401
    resp = await sign_in(password, allow_redirects=False, may_show=["session"])
    assert resp.status == 303
    scan.secret("session", resp.cookies["results_session"].value)

    resp = await scan.send(client, "GET", "/profile")
    csrf = scan.secret("session CSRF", csrf_in(await resp.text()), answers=False)
    resp = await scan.send(
        client,
        "POST",
        "/profile/tokens",
        data={"name": "ci", "csrf": csrf, "expires_days": "30"},
        may_show=["token"],
    )
    assert resp.status == 200
    token = (await resp.text()).split('<pre id="new-token">')[1].split("</pre>")[0]
    scan.secret("token", token)
    client.session.cookie_jar.clear()  # from here on, the token alone

    resp = await scan.send(client, "GET", "/api/v1/me", headers=bearer(token))
    assert resp.status == 200
    resp = await scan.send(
        client, "POST", "/api/v1/ingest", data=form(junit=[REPORT]), headers=bearer(token)
    )
    assert resp.status == 201, await resp.text()
    resp = await scan.send(
        client,
        "POST",
        "/api/v1/ingest",
        data=form(junit=[REPORT]),
        headers={"X-Results-Token": token},
    )
    assert resp.status == 201, await resp.text()
    bad = scan.secret("a wrong token", token[:-4] + "zzzz")
    resp = await scan.send(client, "GET", "/api/v1/me", headers=bearer(bad))
    assert resp.status == 401
    for path in ("/api/v1/projects", "/"):
        resp = await scan.send(client, "GET", path, headers=bearer(token))
        assert resp.status == 200, path

    # Signed in again: the token list shows the token's name, never the token; revoke it.
    assert (await sign_in(password)).status == 200  # followed the redirect
    resp = await scan.send(client, "GET", "/profile")
    listing = await resp.text()
    csrf = CSRF_FIELD.search(listing).group(1)  # type: ignore[union-attr]
    token_id = listing.split("/profile/tokens/")[1].split("/revoke")[0]
    resp = await scan.send(
        client, "POST", f"/profile/tokens/{token_id}/revoke", data={"csrf": csrf}
    )
    assert resp.status == 200
    resp = await scan.send(client, "GET", "/api/v1/me", headers=bearer(token))
    assert resp.status == 401
    scan.assert_clean()
