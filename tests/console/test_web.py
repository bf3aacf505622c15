"""The login page and the front-end shell over plain HTTP: public in both modes, HTML with a strict
policy, their assets, and nothing else opened up by them (the browser side: ``test_web_browser``)."""

from __future__ import annotations

import re

import pytest

from console.web import PUBLIC_PATHS
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN, WRONG
from tests.console.test_auth import assert_bare_401

PAGES = ("/", "/login")
#: Each asset's types (Python's table says application/javascript before 3.12, text/javascript after).
ASSETS = {
    "/ui/console.js": {"text/javascript", "application/javascript"},
    "/ui/wharf.css": {"text/css"},
}
#: Near the public paths, but not them: each stays behind the login in closed mode.
NOT_PUBLIC = (
    "/ui",
    "/ui/",
    "/ui/other.js",
    "/ui/console.js/",
    "/ui/../api/v1/clusters",
    "/login/",
    "/index.html",
    "/favicon.ico",
    "/ui/icon.svg",
    "/ui/console.css",
    "/static/console.js",
    "/swagger-ui",
    "/v3/api-docs",
    "/api/v1/clusters",
)


def directives(header: str) -> dict[str, str]:
    found = (part.strip().split(" ", 1) for part in header.split(";") if part.strip())
    return dict(found)


def test_the_public_list_is_exactly_the_pages_and_their_assets() -> None:
    assert {*PAGES, *ASSETS} == PUBLIC_PATHS


@pytest.mark.parametrize("open_mode", [True, False])
async def test_pages_are_public_html_with_a_strict_policy(
    console_app: ConsoleApp, open_mode: bool
) -> None:
    client = await console_app(f"security.open-mode={str(open_mode).lower()}")
    for path in PAGES:
        resp = await client.get(path)
        assert resp.status == 200, path
        assert resp.content_type == "text/html"
        assert resp.headers["Cache-Control"] == "no-store"
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        assert resp.headers["X-Frame-Options"] == "DENY"
        policy = directives(resp.headers["Content-Security-Policy"])
        assert policy == {
            "default-src": "'none'",
            "script-src": "'self'",
            "style-src": "'self'",
            "img-src": "'self' data:",
            "connect-src": "'self'",
            "form-action": "'self'",
            "frame-ancestors": "'none'",
            "base-uri": "'none'",
        }
        text = await resp.text()
        # Nothing inline the policy would have to allow, and nothing from another origin.
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), path
        assert "<style" not in text
        assert " style=" not in text
        assert not re.search(r"\son[a-z]+\s*=", text, re.IGNORECASE), path  # no onclick=...
        assert not re.search(r"""(?:src|href)=["'](?:https?:)?//""", text), path
        assert ("open mode" if open_mode else "closed mode") in text
        assert (await client.head(path)).status == 200


@pytest.mark.parametrize("open_mode", [True, False])
async def test_assets_are_public_with_their_types(console_app: ConsoleApp, open_mode: bool) -> None:
    client = await console_app(f"security.open-mode={str(open_mode).lower()}")
    for path, content_types in ASSETS.items():
        resp = await client.get(path)
        assert resp.status == 200, path
        assert resp.content_type in content_types
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        assert resp.headers["Cache-Control"] == "no-cache"
        etag = resp.headers["ETag"]
        again = await client.get(path, headers={"If-None-Match": etag})
        assert again.status == 304, path


async def test_in_closed_mode_nothing_else_became_public(console_app: ConsoleApp) -> None:
    client = await console_app("security.open-mode=false")
    for path in NOT_PUBLIC:
        await assert_bare_401(await client.get(path))
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        for path in ("/", "/login", "/ui/console.js"):
            await assert_bare_401(await client.request(method, path))
    # Signed in, the rest is there as before and the unknown addresses are 404s.
    assert (await client.get("/api/v1/clusters", headers=ADMIN)).status == 200
    assert (await client.get("/ui/other.js", headers=ADMIN)).status == 404
    assert (await client.get("/favicon.ico", headers=ADMIN)).status == 404


async def test_in_open_mode_the_pages_take_no_other_method(console_app: ConsoleApp) -> None:
    client = await console_app()
    for path in ("/", "/login", "/ui/console.js"):
        await assert_bare_401(await client.post(path))  # a non-GET needs the admin first
        assert (await client.post(path, headers=ADMIN)).status == 405, path


async def test_the_pages_ignore_a_wrong_basic_header(console_app: ConsoleApp) -> None:
    """Issue 39, item 14: a browser holding stale credentials must still load the login page."""
    client = await console_app("security.open-mode=false")
    for path in PAGES:
        assert (await client.get(path, headers=WRONG)).status == 200, path
        assert (await client.get(path, headers=ADMIN)).status == 200
