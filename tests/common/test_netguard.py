"""The outbound address guard, tried against real loopback HTTP servers.

Names that must resolve to loopback come from ``HostsTable``, a fixed name table at the resolver
seam (what /etc/hosts would say), because this machine has no network and its own host name may
or may not resolve to loopback. One test also goes through the real getaddrinfo, with a spelling
(``0x7f.0.0.1``) that every libc resolves to 127.0.0.1 without any DNS.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs
import pytest
import yarl
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.test_utils import TestServer

from common.errors import BadRequest
from common.netguard import (
    AddressPolicy,
    AddressRefused,
    GuardingResolver,
    RedirectLimitExceeded,
    describe,
    guarded_request,
    guarded_session,
    url_pattern,
)
from tests.common.sample import problem_middleware

LOOPBACK_ONLY = AddressPolicy(allow=(ipaddress.ip_network("127.0.0.1/32"),))
DEFAULT = AddressPolicy()
STRICT = AddressPolicy(block_private_networks=True)
ServerFactory = Callable[..., Awaitable[TestServer]]


class HostsTable(AbstractResolver):
    """A fixed name → addresses table, standing in for DNS at the resolver seam."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.asked.append(host)
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, f"{host} not in the table")
        return [_result(host, address, port) for address in self.table[host]]

    async def close(self) -> None:
        pass


def _result(host: str, address: str, port: int) -> ResolveResult:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    flags = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV
    return ResolveResult(
        hostname=host, host=address, port=port, family=family, proto=0, flags=flags
    )


@attrs.define
class CountingServer:
    """A raw TCP server on 127.0.0.1 that counts connections and answers each with 200."""

    port: int = 0
    connections: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()


@pytest.fixture
async def counting_server() -> AsyncIterator[CountingServer]:
    counter = CountingServer()
    server = await asyncio.start_server(counter.handle, "127.0.0.1", 0)
    counter.port = server.sockets[0].getsockname()[1]
    async with server:
        yield counter


def _refused(excinfo: pytest.ExceptionInfo[AddressRefused], address_class: str) -> str:
    assert excinfo.value.address_class == address_class
    assert excinfo.value.extra == {"addressClass": address_class}
    assert excinfo.value.code == "address-refused"
    assert excinfo.value.status == 400
    return excinfo.value.detail


def _url_refused(policy: AddressPolicy, url: str, address_class: str) -> str:
    """``policy`` refuses ``url`` as ``address_class`` (see ``_refused``); returns the detail."""
    with pytest.raises(AddressRefused) as excinfo:
        policy.check_url(url)
    return _refused(excinfo, address_class)


# --- the policy on its own ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "address_class"),
    [
        ("http://127.0.0.1/x", "loopback"),
        ("http://127.200.3.4/", "loopback"),
        ("http://[::1]:8080/", "loopback"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://0.1.2.3/", "unspecified"),
        ("http://[::]/", "unspecified"),
        ("http://169.254.1.1/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[fe80::1%25eth0]/", "link-local"),
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://[fd00:ec2::254]/", "metadata"),
        ("http://100.100.100.200/", "metadata"),
        ("http://168.63.129.16/", "metadata"),
        ("http://224.0.0.1/", "multicast"),
        ("http://239.255.255.250:1900/", "multicast"),
        ("http://[ff02::1]/", "multicast"),
        ("http://255.255.255.255/", "broadcast"),
        ("http://240.0.0.1/", "reserved"),
    ],
)
def test_every_address_class_is_refused(url: str, address_class: str) -> None:
    assert f"{address_class} address" in _url_refused(DEFAULT, url, address_class)


@pytest.mark.parametrize(
    ("host", "address_class", "spelling"),
    [
        ("::ffff:127.0.0.1", "loopback", "IPv4-mapped"),
        ("::ffff:169.254.169.254", "metadata", "IPv4-mapped"),
        ("::ffff:0.0.0.0", "unspecified", "IPv4-mapped"),
        ("::ffff:224.0.0.1", "multicast", "IPv4-mapped"),
        ("::ffff:255.255.255.255", "broadcast", "IPv4-mapped"),
        ("::ffff:169.254.1.1", "link-local", "IPv4-mapped"),
        ("::127.0.0.1", "loopback", "IPv4-compatible"),
        ("::169.254.169.254", "metadata", "IPv4-compatible"),
        ("::ffff:0:127.0.0.1", "loopback", "IPv4-translated"),
        ("2002:7f00:1::", "loopback", "6to4"),
        ("2002:a9fe:a9fe::1", "metadata", "6to4"),
        ("2002:6464:64c8::", "metadata", "6to4"),
        ("64:ff9b::127.0.0.1", "loopback", "NAT64"),
        ("64:ff9b::169.254.169.254", "metadata", "NAT64"),
        ("64:ff9b::224.0.0.1", "multicast", "NAT64"),
        ("64:ff9b:1::7f00:1", "loopback", "NAT64"),  # /96 layout in the local-use prefix
        ("64:ff9b:1:a9fe:a9:fe00::", "metadata", "NAT64"),  # /48 layout (RFC 6052 2.2)
        ("64:ff9b:1:0:7f:0:100::", "loopback", "NAT64"),  # /64 layout
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback", "Teredo"),
    ],
)
def test_ipv6_spellings_of_refused_ipv4_addresses_are_refused(
    host: str, address_class: str, spelling: str
) -> None:
    assert f"{spelling} spelling of" in _url_refused(DEFAULT, f"http://[{host}]/", address_class)


@pytest.mark.parametrize(
    ("host", "address_class"),
    [
        ("127.1", "loopback"),
        ("0x7f.0.0.1", "loopback"),
        ("0x7F000001", "loopback"),
        ("2130706433", "loopback"),
        ("017700000001", "loopback"),
        ("0177.0.0.1", "loopback"),
        ("127.0.0.1.", "loopback"),
        ("0", "unspecified"),
        ("2852039166", "metadata"),  # 169.254.169.254
        ("134744072", "non-canonical"),  # 8.8.8.8: nobody needs this spelling either
        ("1.2.3.4.5", "non-canonical"),
        ("256.0.0.1", "non-canonical"),
        ("08.0.0.1", "non-canonical"),
    ],
)
def test_tricky_ipv4_spellings_are_refused(host: str, address_class: str) -> None:
    _url_refused(DEFAULT, f"http://{host}/", address_class)


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "LocalHost",
        "localhost.",
        "foo.localhost",
        "a.b.localhost..",
        "ＬＯＣＡＬＨＯＳＴ",
    ],
)
def test_localhost_names_are_refused(host: str) -> None:
    assert "loopback host name" in _url_refused(
        LOOPBACK_ONLY, f"http://{host}:8080/index.yaml", "loopback"
    )


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://example.com:70/_x",
        "data:,hi",
        "//h/x",
    ],
)
def test_other_schemes_are_refused(url: str) -> None:
    assert "only http, https and oci" in _url_refused(DEFAULT, url, "unsupported-scheme")


@pytest.mark.parametrize(
    "url",
    [
        "https://charts.example.com/index.yaml",
        "http://example.com:8080/",
        "oci://ghcr.io/org/chart",
        "HTTPS://Example.COM/",
        "http://8.8.8.8/",
        "http://[2001:4860:4860::8888]/",
        "http://[::ffff:8.8.8.8]/",
        "http://[64:ff9b::8.8.8.8]/",
        "http://[2002:808:808::]/",
    ],
)
def test_public_urls_pass_and_come_back_parsed(url: str) -> None:
    assert STRICT.check_url(url) == yarl.URL(url)


@pytest.mark.parametrize(
    "host",
    [
        "10.0.0.1",
        "172.16.0.1",
        "172.31.255.254",
        "192.168.1.1",
        "100.64.0.1",
        "[fd12:3456::1]",
        "[fec0::1]",
        "[::ffff:10.1.2.3]",
        "[64:ff9b::192.168.0.1]",
    ],
)
def test_private_ranges_pass_by_default_and_are_refused_when_blocked(host: str) -> None:
    DEFAULT.check_url(f"http://{host}/")
    assert "a private address" in _url_refused(STRICT, f"http://{host}/", "private")


def test_the_detail_names_the_url_and_the_class() -> None:
    with pytest.raises(AddressRefused) as excinfo:
        DEFAULT.check_url("http://127.0.0.1/x")
    assert excinfo.value.detail == (
        "refused to fetch http://127.0.0.1/x: 127.0.0.1 is a loopback address"
    )
    assert isinstance(excinfo.value, BadRequest)


def test_the_detail_leaves_out_credentials_and_query() -> None:
    with pytest.raises(AddressRefused) as excinfo:
        DEFAULT.check_url("http://admin:hunter2@169.254.169.254/x?token=s3cret#frag")
    detail = excinfo.value.detail
    assert detail.startswith("refused to fetch http://169.254.169.254/x: ")
    assert "hunter2" not in detail
    assert "admin" not in detail
    assert "s3cret" not in detail


def test_an_unparseable_url_is_refused_without_echoing_it() -> None:
    assert "s3cret" not in _url_refused(DEFAULT, "http://user:s3cret@[::1/", "invalid-url")


@pytest.mark.parametrize(
    "url", ["https://[:]/", "http://[1:2]/x", "http://xn--zz/", "http://a:99999/"]
)
def test_a_url_that_reads_as_no_address_is_a_refusal_not_an_error(url: str) -> None:
    """Not a ValueError (a 500): an IPv6 literal that is none, a punycode label that does not
    decode, a port out of range."""
    _url_refused(DEFAULT, url, "invalid-url")


def test_the_url_pattern_takes_what_check_url_reads() -> None:
    pattern = re.compile(url_pattern(("http", "https")))
    for url in (
        "https://charts.example/x?y#z",
        "http://u:p@10.0.0.1:65535/",
        "http://[2001:db8::1]/",
    ):
        assert pattern.search(url), url
        DEFAULT.check_url(url)
    for url in (
        "ftp://h/",
        "http://",
        "http:///x",
        "http://[:]/",
        "http://h:65536/",
        "http://h/\n",
    ):
        assert not pattern.search(url), url


def test_the_allow_list_widens_only_the_networks_it_names() -> None:
    LOOPBACK_ONLY.check_url("http://127.0.0.1:9/")
    for url in ("http://127.0.0.2/", "http://[::1]/", "http://[::ffff:127.0.0.1]/"):
        with pytest.raises(AddressRefused):
            LOOPBACK_ONLY.check_url(url)


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "metadata"),
        ("10.1.1.1", "private"),
        ("fe80::1%eth0", "link-local"),
        ("93.184.215.14", None),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", None),
        (ipaddress.ip_address("224.0.0.251"), "multicast"),
    ],
)
def test_describe_names_the_class(address: str, expected: str | None) -> None:
    assert describe(address) == expected


def test_check_address_says_what_the_name_resolved_to() -> None:
    with pytest.raises(AddressRefused) as excinfo:
        DEFAULT.check_address("repo.example.test", "::ffff:127.0.0.1")
    detail = _refused(excinfo, "loopback")
    assert "repo.example.test resolves to ::ffff:127.0.0.1, a loopback address" in detail
    STRICT.check_address("repo.example.test", "93.184.215.14")


# --- connect time: names are checked after resolution, before any byte ---------------------


async def test_a_name_resolving_to_loopback_is_refused_before_any_connection(
    counting_server: CountingServer,
) -> None:
    hosts = HostsTable({"charts.example.test": ["127.0.0.1"]})
    url = f"http://charts.example.test:{counting_server.port}/index.yaml?token=s3cret"
    async with guarded_session(DEFAULT, resolver=hosts) as session:
        with pytest.raises(AddressRefused) as excinfo:
            await guarded_request(session, DEFAULT, "GET", url)
        with pytest.raises(AddressRefused):
            await session.get(url)  # the session guards even without guarded_request
    detail = _refused(excinfo, "loopback")
    assert detail == (
        f"refused to fetch http://charts.example.test:{counting_server.port}/index.yaml: "
        "charts.example.test resolves to 127.0.0.1, a loopback address"
    )
    assert hosts.asked == ["charts.example.test", "charts.example.test"]
    assert counting_server.connections == 0


async def test_the_same_name_connects_once_loopback_is_allow_listed(
    counting_server: CountingServer,
) -> None:
    # The control for the test above: same server, same name, only the policy differs.
    hosts = HostsTable({"charts.example.test": ["127.0.0.1"]})
    url = f"http://charts.example.test:{counting_server.port}/"
    async with (
        guarded_session(LOOPBACK_ONLY, resolver=hosts) as session,
        await guarded_request(session, LOOPBACK_ONLY, "GET", url) as response,
    ):
        assert await response.text() == "ok"
    assert counting_server.connections == 1


async def test_a_name_with_any_refused_address_is_refused() -> None:
    hosts = HostsTable({"mixed.example.test": ["93.184.215.14", "169.254.169.254"]})
    resolver = GuardingResolver(DEFAULT, hosts)
    with pytest.raises(AddressRefused) as excinfo:
        await resolver.resolve("mixed.example.test", 443)
    _refused(excinfo, "metadata")


async def test_the_real_system_resolver_is_guarded_too() -> None:
    # getaddrinfo reads "0x7f.0.0.1" as 127.0.0.1 without DNS; aiohttp hands it to the resolver.
    resolver = GuardingResolver(DEFAULT)
    with pytest.raises(AddressRefused) as excinfo:
        await resolver.resolve("0x7f.0.0.1", 80)
    _refused(excinfo, "loopback")
    await resolver.close()


async def test_an_ip_literal_is_refused_before_any_connection(
    counting_server: CountingServer,
) -> None:
    url = f"http://127.0.0.1:{counting_server.port}/"
    async with guarded_session(DEFAULT) as session:
        with pytest.raises(AddressRefused):
            await guarded_request(session, DEFAULT, "GET", url)
        with pytest.raises(AddressRefused):
            await session.get(url)
        with pytest.raises(AddressRefused):
            await session.get(f"http://[::ffff:127.0.0.1]:{counting_server.port}/")
    assert counting_server.connections == 0


# --- redirects -------------------------------------------------------------------------------


@attrs.define
class RedirectApp:
    """An allow-listed server whose /start redirects to ``location`` and counts /target hits."""

    location: str = ""
    status: int = 302
    target_hits: int = 0
    seen: list[dict[str, str]] = attrs.field(factory=list)

    def build(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/start", self.start)
        app.router.add_route("*", "/target", self.target)
        app.router.add_get("/hop/{n}", self.hop)
        return app

    async def start(self, request: web.Request) -> web.Response:
        raise _redirect(self.status, self.location)

    async def target(self, request: web.Request) -> web.Response:
        self.target_hits += 1
        self.seen.append(
            {"method": request.method, "body": await request.text(), **request.headers}
        )
        return web.Response(text="target")

    async def hop(self, request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        if n == 0:
            return web.Response(text="landed")
        raise web.HTTPFound(f"/hop/{n - 1}")


def _redirect(status: int, location: str) -> web.HTTPException:
    classes: dict[int, type[web.HTTPMove]] = {
        301: web.HTTPMovedPermanently,
        302: web.HTTPFound,
        303: web.HTTPSeeOther,
        307: web.HTTPTemporaryRedirect,
        308: web.HTTPPermanentRedirect,
    }
    return classes[status](location)


@pytest.fixture
async def redirector(aiohttp_server: ServerFactory) -> tuple[RedirectApp, TestServer]:
    app = RedirectApp()
    return app, await aiohttp_server(app.build())


@pytest.mark.parametrize(
    ("location", "address_class"),
    [
        ("http://localhost:{port}/target", "loopback"),
        ("http://[::1]:{port}/target", "loopback"),
        ("http://127.0.0.2:{port}/target", "loopback"),
        ("http://2130706433:{port}/target", "loopback"),
        ("http://169.254.169.254/latest/meta-data/iam/", "metadata"),
        ("http://[::ffff:a9fe:a9fe]/", "metadata"),
        ("http://loop.example.test:{port}/target", "loopback"),
        ("http://imds.example.test/latest/", "metadata"),
        ("file:///etc/passwd", "unsupported-scheme"),
    ],
)
async def test_a_redirect_from_an_allowed_host_to_a_refused_one_is_refused(
    redirector: tuple[RedirectApp, TestServer], location: str, address_class: str
) -> None:
    app, server = redirector
    app.location = location.format(port=server.port)
    hosts = HostsTable({"loop.example.test": ["127.0.0.2"], "imds.example.test": ["fd00:ec2::254"]})
    async with guarded_session(LOOPBACK_ONLY, resolver=hosts) as session:
        with pytest.raises(AddressRefused) as excinfo:
            await guarded_request(session, LOOPBACK_ONLY, "GET", server.make_url("/start"))
        assert app.target_hits == 0
        # aiohttp's own redirect following goes through the session's guard as well
        if not location.startswith("file:"):
            with pytest.raises(AddressRefused):
                await session.get(server.make_url("/start"))
    _refused(excinfo, address_class)
    assert app.target_hits == 0


async def test_an_allowed_redirect_is_followed(
    redirector: tuple[RedirectApp, TestServer],
) -> None:
    app, server = redirector
    app.location = "/target"
    async with guarded_session(LOOPBACK_ONLY) as session:
        response = await guarded_request(session, LOOPBACK_ONLY, "GET", server.make_url("/start"))
        async with response:
            assert await response.text() == "target"
    assert str(response.url) == str(server.make_url("/target"))


@pytest.mark.parametrize(("hops", "refused"), [(10, False), (11, True)])
async def test_more_than_ten_redirects_are_refused(
    redirector: tuple[RedirectApp, TestServer], hops: int, refused: bool
) -> None:
    _, server = redirector
    async with guarded_session(LOOPBACK_ONLY) as session:
        if refused:
            with pytest.raises(RedirectLimitExceeded) as excinfo:
                await guarded_request(
                    session, LOOPBACK_ONLY, "GET", server.make_url(f"/hop/{hops}")
                )
            assert excinfo.value.status == 502
            assert excinfo.value.code == "too-many-redirects"
            assert "more than 10 redirects" in excinfo.value.detail
            return
        response = await guarded_request(
            session, LOOPBACK_ONLY, "GET", server.make_url(f"/hop/{hops}")
        )
        async with response:
            assert await response.text() == "landed"


async def test_credentials_are_dropped_on_a_cross_origin_hop_only(
    aiohttp_server: ServerFactory,
) -> None:
    first, other = RedirectApp(), RedirectApp()
    first_server = await aiohttp_server(first.build())
    other_server = await aiohttp_server(other.build())
    headers = {"Authorization": "Bearer s3cret", "Cookie": "session=1", "X-Trace": "kept"}
    async with guarded_session(LOOPBACK_ONLY) as session:
        first.location = "/target"
        url = first_server.make_url("/start")
        (await guarded_request(session, LOOPBACK_ONLY, "GET", url, headers=headers)).release()
        first.location = str(other_server.make_url("/target"))
        (await guarded_request(session, LOOPBACK_ONLY, "GET", url, headers=headers)).release()
    assert first.seen[0]["Authorization"] == "Bearer s3cret"
    assert "Authorization" not in other.seen[0]
    assert "Cookie" not in other.seen[0]
    assert other.seen[0]["X-Trace"] == "kept"


@pytest.mark.parametrize(
    ("status", "method"), [(301, "GET"), (302, "GET"), (303, "GET"), (307, "POST"), (308, "POST")]
)
async def test_a_post_is_redirected_like_browsers_do(
    redirector: tuple[RedirectApp, TestServer], status: int, method: str
) -> None:
    app, server = redirector
    app.location, app.status = "/target", status
    async with guarded_session(LOOPBACK_ONLY) as session:
        url = server.make_url("/start")
        (await guarded_request(session, LOOPBACK_ONLY, "POST", url, data=b"payload")).release()
    assert app.seen[0]["method"] == method
    assert app.seen[0]["body"] == ("payload" if method == "POST" else "")


# --- what may not be configured away ---------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"trust_env": True},
        {"proxy": "http://proxy.example.com:3128"},
        {"auth": ("user", "password")},
        {"headers": {"authorization": "Bearer x"}},
    ],
)
def test_the_session_refuses_options_that_bypass_the_guard(options: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        guarded_session(DEFAULT, **options)


@pytest.mark.parametrize("options", [{"allow_redirects": True}, {"proxy": "http://p:3128"}])
async def test_guarded_request_refuses_options_that_bypass_the_guard(
    options: dict[str, Any],
) -> None:
    async with guarded_session(DEFAULT) as session:
        with pytest.raises(TypeError):
            await guarded_request(session, DEFAULT, "GET", "https://example.com/", **options)


async def test_a_per_request_proxy_is_refused(counting_server: CountingServer) -> None:
    async with guarded_session(LOOPBACK_ONLY) as session:
        with pytest.raises(AddressRefused) as excinfo:
            await session.get(
                "http://example.com/", proxy=f"http://127.0.0.1:{counting_server.port}"
            )
    _refused(excinfo, "proxy")
    assert counting_server.connections == 0


# --- rendering -------------------------------------------------------------------------------


async def test_a_refusal_renders_as_a_400_problem_naming_the_class(
    aiohttp_client: Callable[..., Awaitable[Any]],
) -> None:
    async def fetch(request: web.Request) -> web.Response:
        async with guarded_session(DEFAULT) as session:
            await guarded_request(session, DEFAULT, "GET", request.query["url"])
        return web.Response(text="fetched")

    app = web.Application(middlewares=[problem_middleware])
    app.router.add_get("/fetch", fetch)
    client = await aiohttp_client(app)
    response = await client.get("/fetch", params={"url": "http://169.254.169.254/latest/"})
    assert response.status == 400
    assert response.content_type == "application/problem+json"
    body = await response.json()
    assert body["code"] == "address-refused"
    assert body["addressClass"] == "metadata"
    assert body["detail"] == (
        "refused to fetch http://169.254.169.254/latest/: 169.254.169.254 is a metadata address"
    )
