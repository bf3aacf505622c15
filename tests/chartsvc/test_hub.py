"""Artifact Hub search against a loopback server that answers in the hub's real JSON shape.

The server records each query, so the tests check what we ask (kind=0, limit clamped to 60) as well
as what we make of the answer; every upstream failure must surface as a 502 problem.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from chartsvc.hub import HubClient, HubResult, HubUnavailable
from common.netguard import AddressPolicy, AddressRefused

LOOPBACK = AddressPolicy(allow=(ipaddress.ip_network("127.0.0.0/8"),))

# Two PackageSummary objects as /api/v1/packages/search returns them (fields per the hub's
# OpenAPI document: package_id, name, normalized_name, stars, version, ts, repository required).
PACKAGES: list[dict[str, Any]] = [
    {
        "package_id": "0d4f5d2f-3f1e-4e3c-9a0c-3f3b1d7c2a11",
        "name": "nginx",
        "normalized_name": "nginx",
        "logo_image_id": "2d7b4c1e-0d0f-4c55-8f5f-0a4f6b0f2c3d",
        "stars": 212,
        "description": "NGINX Open Source is a web server that can be also used as a reverse proxy",
        "version": "18.2.4",
        "app_version": "1.27.2",
        "license": "Apache-2.0",
        "deprecated": False,
        "signed": True,
        "signatures": ["cosign"],
        "security_report_summary": {"high": 2, "medium": 5, "low": 40, "unknown": 0},
        "all_containers_images_whitelisted": False,
        "production_organizations_count": 12,
        "ts": 1730210000,
        "repository": {
            "repository_id": "1f0c4a8e-5b9e-4ad4-86a0-0a8d5a1c6a7e",
            "kind": 0,
            "name": "bitnami",
            "display_name": "Bitnami",
            "url": "oci://registry-1.docker.io/bitnamicharts/nginx",
            "private": False,
            "verified_publisher": True,
            "official": True,
            "cncf": False,
            "scanner_disabled": False,
            "organization_name": "bitnami",
            "organization_display_name": "Bitnami",
        },
    },
    {
        "package_id": "a8c1f6e2-7d3b-4d9b-9b57-8c1e1b7c4e55",
        "name": "ingress-nginx",
        "normalized_name": "ingress-nginx",
        "stars": 180,
        "version": "4.11.3",
        "ts": 1729000000,
        "description": None,
        "repository": {
            "repository_id": "5c6d2b1a-0e7f-4d2c-8a3b-6f1e0d9c8b7a",
            "kind": 0,
            "name": "ingress-nginx",
            "url": "https://kubernetes.github.io/ingress-nginx",
            "verified_publisher": True,
            "official": True,
            "scanner_disabled": False,
            "user_alias": "ingress-nginx",
        },
    },
]


class FakeHub:
    """A loopback Artifact Hub; ``reply`` decides the answer, ``queries`` records the asks."""

    def __init__(self) -> None:
        self.queries: list[dict[str, str]] = []
        self.status = 200
        self.body: bytes = json.dumps({"packages": PACKAGES}).encode()
        self.content_type = "application/json"
        self.delay = 0.0

    async def search(self, request: web.Request) -> web.Response:
        self.queries.append(dict(request.query))
        await asyncio.sleep(self.delay)
        headers = {"Pagination-Total-Count": "412"}
        return web.Response(
            status=self.status, body=self.body, content_type=self.content_type, headers=headers
        )


@pytest.fixture
async def hub() -> AsyncIterator[tuple[FakeHub, str]]:
    fake = FakeHub()
    app = web.Application()
    app.router.add_get("/api/v1/packages/search", fake.search)
    async with TestServer(app, host="127.0.0.1") as server:
        yield fake, str(server.make_url(""))


async def test_search_maps_packages_to_results(hub: tuple[FakeHub, str]) -> None:
    fake, base = hub
    async with HubClient(LOOPBACK, base) as client:
        results = await client.search("nginx", 20)
    assert results == [
        HubResult(
            name="nginx",
            version="18.2.4",
            app_version="1.27.2",
            repo_name="bitnami",
            repo_url="oci://registry-1.docker.io/bitnamicharts/nginx",
            description="NGINX Open Source is a web server that can be also used as a reverse proxy",
        ),
        HubResult(
            "ingress-nginx",
            "4.11.3",
            "",
            "ingress-nginx",
            "https://kubernetes.github.io/ingress-nginx",
            "",
        ),
    ]
    (query,) = fake.queries
    assert query == {
        "ts_query_web": "nginx",
        "kind": "0",
        "facets": "false",
        "limit": "20",
        "offset": "0",
    }


async def test_search_page_reports_the_total(hub: tuple[FakeHub, str]) -> None:
    _, base = hub
    async with HubClient(LOOPBACK, base) as client:
        page = await client.search_page("nginx")
    assert page.total == 412
    assert len(page.results) == 2


@pytest.mark.parametrize(("asked", "sent"), [(500, "60"), (60, "60"), (0, "1"), (7, "7")])
async def test_max_results_is_clamped_to_the_hubs_range(
    hub: tuple[FakeHub, str], asked: int, sent: str
) -> None:
    fake, base = hub
    async with HubClient(LOOPBACK, base) as client:
        await client.search("x", asked)
    assert fake.queries[0]["limit"] == sent


async def test_default_is_twenty_and_keyword_is_encoded(hub: tuple[FakeHub, str]) -> None:
    fake, base = hub
    async with HubClient(LOOPBACK, base + "/") as client:
        await client.search('"cert manager" & -legacy')
    assert fake.queries[0]["limit"] == "20"
    assert fake.queries[0]["ts_query_web"] == '"cert manager" & -legacy'


async def unavailable(
    base: str, keyword: str = "nginx", size: int = 5, *, timeout_s: float = 10
) -> str:
    """The detail of the ``HubUnavailable`` a search through ``base`` ends in, once it is a 502."""
    async with HubClient(LOOPBACK, base, timeout_s=timeout_s) as client:
        with pytest.raises(HubUnavailable) as caught:
            await client.search(keyword, size)
    assert caught.value.status == 502
    return caught.value.detail


@pytest.mark.parametrize("status", [500, 503, 429, 404, 401])
async def test_upstream_error_status_is_502(hub: tuple[FakeHub, str], status: int) -> None:
    fake, base = hub
    fake.status = status
    assert f"HTTP {status}" in await unavailable(base)


@pytest.mark.parametrize(
    "body",
    [b"<html>maintenance</html>", b"[]", b'{"packages": {"a": 1}}', b"\xff\xfe", b'{"nope": []}'],
)
async def test_reply_that_is_not_a_search_result_is_502(
    hub: tuple[FakeHub, str], body: bytes
) -> None:
    fake, base = hub
    fake.body = body
    await unavailable(base)


async def test_timeout_is_502(hub: tuple[FakeHub, str]) -> None:
    fake, base = hub
    fake.delay = 2
    assert "0.2 s" in await unavailable(base, timeout_s=0.2)


async def test_unreachable_hub_is_502() -> None:
    server = TestServer(web.Application(), host="127.0.0.1")
    await server.start_server()
    base = str(server.make_url(""))
    await server.close()  # nothing listens there now
    await unavailable(base)


async def test_loopback_hub_is_refused_without_an_explicit_allow(hub: tuple[FakeHub, str]) -> None:
    fake, base = hub
    async with HubClient(AddressPolicy(), base) as client:
        with pytest.raises(AddressRefused) as caught:
            await client.search("nginx", 5)
    assert caught.value.address_class == "loopback"
    assert fake.queries == []


def test_from_package_tolerates_missing_and_odd_fields() -> None:
    odd = {"name": "x", "version": 3, "repository": "not-an-object", "app_version": None}
    assert HubResult.from_package(odd) == HubResult("x", "", "", "", "", "")


async def test_a_full_page_of_sixty_arrives_whole(hub: tuple[FakeHub, str]) -> None:
    fake, base = hub
    many = [PACKAGES[0] | {"name": f"chart-{i}", "description": "d" * 4000} for i in range(60)]
    fake.body = json.dumps({"packages": many}).encode()  # ~250 KiB, many TCP reads
    async with HubClient(LOOPBACK, base) as client:
        results = await client.search("chart", 60)
    assert [r.name for r in results] == [f"chart-{i}" for i in range(60)]


async def test_an_endless_reply_is_502(hub: tuple[FakeHub, str]) -> None:
    fake, base = hub
    fake.body = b'{"packages": [' + b" " * (9 * 1024 * 1024) + b"]}"
    assert "too large" in await unavailable(base, "chart", 60)
