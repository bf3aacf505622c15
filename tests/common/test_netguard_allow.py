"""The address guard's allow-list: hosts, addresses and networks, on one port or any, that fetches
may reach despite their class — a chart repository on the jump host itself. Entries widen only what
they name; every connection and redirect hop is still checked; metadata stays refused."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from pytest_aiohttp import AiohttpServer

from common.netguard import (
    AddressPolicy,
    AddressRefused,
    Allowed,
    GuardingResolver,
    guarded_request,
    guarded_session,
    parse_allowed,
)
from tests.common.test_netguard import HostsTable


def policy(*entries: str, **kwargs: Any) -> AddressPolicy:
    return AddressPolicy(allow=[a for e in entries for a in parse_allowed(e)], **kwargs)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("127.0.0.1", [Allowed(ipaddress.ip_network("127.0.0.1/32"))]),
        ("10.20.0.0/16:8080", [Allowed(ipaddress.ip_network("10.20.0.0/16"), port=8080)]),
        ("[::1]:8879", [Allowed(ipaddress.ip_network("::1/128"), port=8879)]),
        ("fd12::/16", [Allowed(ipaddress.ip_network("fd12::/16"))]),
        (" Charts.Corp.Example. :443", None),  # a space before the port is not a host name
        ("charts.corp.example:443", [Allowed(host="charts.corp.example", port=443)]),
        (
            "localhost:8879",
            [
                Allowed(host="localhost", port=8879),
                Allowed(ipaddress.ip_network("127.0.0.0/8"), port=8879),
                Allowed(ipaddress.ip_network("::1/128"), port=8879),
            ],
        ),
    ],
)
def test_entries_read_as_written(entry: str, expected: list[Allowed] | None) -> None:
    if expected is None:
        with pytest.raises(ValueError, match="not a host"):
            parse_allowed(entry)
    else:
        assert list(parse_allowed(entry)) == expected


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("127.0.0.1:0", "port must be 1-65535"),
        ("127.0.0.1:70000", "port must be 1-65535"),
        ("10.0.0.1/8", "not a host, an address or a network"),  # host bits set: a typo
        ("169.254.0.0/16", "metadata"),
        ("0.0.0.0/0", "metadata"),
        ("[fd00:ec2::/32]", "metadata"),
        ("fd00::/8", "metadata"),  # holds the IPv6 metadata address fd00:ec2::254
        ("2130706433", "canonical"),
        ("http://127.0.0.1:8879", "not a host"),
    ],
)
def test_bad_entries_are_refused_saying_why(entry: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_allowed(entry)


def test_an_address_entry_on_a_port_admits_that_port_only() -> None:
    guard = policy("127.0.0.1:8879")
    guard.check_url("http://127.0.0.1:8879/index.yaml")
    for url in ("http://127.0.0.1:8880/", "http://127.0.0.1/", "http://127.0.0.2:8879/"):
        with pytest.raises(AddressRefused) as excinfo:
            guard.check_url(url)
        assert excinfo.value.address_class == "loopback"


def test_localhost_lets_the_name_and_its_addresses_through_on_its_port() -> None:
    guard = policy("localhost:8879")
    guard.check_url("http://localhost:8879/")
    guard.check_address("localhost", "127.0.0.1", 8879)
    guard.check_address("localhost", "::1", 8879)
    with pytest.raises(AddressRefused):
        guard.check_url("http://localhost:22/")
    with pytest.raises(AddressRefused):
        guard.check_address("localhost", "127.0.0.1", 22)


def test_private_ranges_are_refused_under_block_private_unless_listed() -> None:
    guard = policy("10.20.0.0/16", block_private_networks=True)
    guard.check_url("https://10.20.3.4/charts/index.yaml")
    with pytest.raises(AddressRefused) as excinfo:
        guard.check_url("https://10.21.0.1/")
    assert excinfo.value.address_class == "private"


def test_metadata_stays_refused_even_when_a_network_covers_it() -> None:
    # parse_allowed refuses such entries; a network handed in directly must not open it either.
    guard = AddressPolicy(allow=(ipaddress.ip_network("169.254.0.0/16"),))
    guard.check_url("http://169.254.1.1/")  # link-local, listed
    with pytest.raises(AddressRefused) as excinfo:
        guard.check_url("http://169.254.169.254/latest/meta-data/")
    assert excinfo.value.address_class == "metadata"


async def test_a_host_entry_admits_that_name_at_connect_time_and_no_other() -> None:
    guard = policy("charts.corp.example")
    hosts = HostsTable({"charts.corp.example": ["127.0.0.1"], "other.corp.example": ["127.0.0.1"]})
    resolver = GuardingResolver(guard, hosts)
    assert (await resolver.resolve("charts.corp.example", 80))[0]["host"] == "127.0.0.1"
    with pytest.raises(AddressRefused) as excinfo:
        await resolver.resolve("other.corp.example", 80)
    assert excinfo.value.address_class == "loopback"
    # A listed name never opens metadata, whatever it resolves to.
    hosts.table["charts.corp.example"] = ["169.254.169.254"]
    with pytest.raises(AddressRefused):
        await resolver.resolve("charts.corp.example", 80)


async def test_every_redirect_hop_is_checked_against_the_port(
    aiohttp_server: AiohttpServer,
) -> None:
    other = await aiohttp_server(web.Application())

    async def start(request: web.Request) -> web.Response:
        raise web.HTTPFound(request.query["to"])

    async def landed(request: web.Request) -> web.Response:
        return web.Response(text="landed")

    app = web.Application()
    app.router.add_get("/start", start)
    app.router.add_get("/landed", landed)
    server: TestServer = await aiohttp_server(app)
    guard = policy(f"localhost:{server.port}")
    async with guarded_session(guard) as session:
        same = server.make_url("/start").with_host("localhost").with_query(to="/landed")
        async with await guarded_request(session, guard, "GET", same) as response:
            assert await response.text() == "landed"
        away = same.with_query(to=f"http://127.0.0.1:{other.port}/")
        with pytest.raises(AddressRefused) as excinfo:
            await guarded_request(session, guard, "GET", away)
        assert excinfo.value.address_class == "loopback"
