"""Credentials in URLs and chart references are masked the way a client reads the authority, in
answers and in the access log (issue 39 item 11)."""

from __future__ import annotations

import asyncio
import logging

import aiohttp
import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from common.logs import AccessLogger
from common.redact import redacted, redacted_target


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("oci://u:p@h/x:1", "oci://***@h/x:1"),
        ("oci://u:a@PW@h/x:1", "oci://***@h/x:1"),  # the last @ of the authority splits
        (" oci://u:PW@h/x", " oci://***@h/x"),  # a leading blank hides nothing
        ("oci://u:a/PW@h/x", "oci://***@h/x"),  # a "/" in the password
        ("u:PW@h/x", "***@h/x"),  # no scheme
        ("oci://h/x@sha256:" + "a" * 64, "oci://h/x@sha256:" + "a" * 64),  # a digest stays
        ("https://h/charts", "https://h/charts"),
    ],
)
def test_redacted(given: str, shown: str) -> None:
    assert redacted(given) == shown


def test_redacted_target_masks_urls_in_query_values_only() -> None:
    assert redacted_target("/a?b=1") == "/a?b=1"
    assert "PW" not in redacted_target("/show?chartRef=oci://u:a@PW@h/x&v=1")
    assert "PW" not in redacted_target("/show?chartRef=oci%3A%2F%2Fu%3Aa%40PW%40h%2Fx")
    assert redacted_target("/show?chartRef=oci://u:PW@h/x&v=1").endswith("@h/x&v=1")
    assert redacted_target("/u@h/x?q=a@b") == "/u@h/x?q=a@b"  # no URL in the query: as sent


async def test_the_access_log_masks_credentials_in_the_target(
    aiohttp_server: AiohttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    async def hello(_: web.Request) -> web.Response:
        return web.Response(text="hello")

    app = web.Application()
    app.router.add_get("/show", hello)
    server = await aiohttp_server(app, access_log_class=AccessLogger)
    with caplog.at_level(logging.INFO, logger="aiohttp.access"):
        async with aiohttp.ClientSession() as session:
            url = server.make_url("/show").with_query(chartRef="oci://robot:a@hunter2@h/x:1")
            await (await session.get(url)).read()
        await asyncio.sleep(0)
    [record] = [r for r in caplog.records if r.name == "aiohttp.access"]
    assert "hunter2" not in record.getMessage()
    assert "***@h" in record.getMessage()
