"""The outbound address policy (SSRF guard) for every fetch a Wharf service makes.

Users hand Wharf URLs (chart repositories, OCI registries, the hub, LLM endpoints) that Wharf then
fetches from inside the network it runs in. Without a guard such a URL reaches the cloud metadata
service, loopback admin ports of the jump host, or the pod network. This module decides which
addresses a fetch may reach and enforces it where it cannot be dodged:

- ``AddressPolicy.check_url`` refuses bad schemes, ``localhost`` names and IP literals, including
  the numeric IPv4 spellings resolvers accept (``2130706433``, ``0x7f.0.0.1``, ``127.1``);
- ``GuardingResolver`` checks every address a name resolves to, at connect time; the connector
  dials only addresses that passed, so there is no DNS-rebinding gap between check and connect;
- the middleware ``guarded_session`` installs re-checks every request and every redirect hop
  aiohttp makes; ``guarded_request`` follows redirects itself (cap 10), checking each hop and
  dropping credentials on cross-origin hops;
- ``GuardedClient`` is the base of the outbound clients (hub, OCI): its ``request`` is
  ``guarded_request`` on a guarded session of its own.

Decisions: the shared address space 100.64.0.0/10 (CGNAT) and the deprecated site-local fec0::/10
count as private (not globally routable: reaching them reaches someone's internal network).
0.0.0.0/8 counts as unspecified (Linux dials 0.x as this host), 240.0.0.0/4 as reserved, and the
Azure WireServer 168.63.129.16 as metadata. When a name resolves to several addresses and any one
is refused, the whole name is refused, so mixed DNS answers cannot smuggle an internal one in.

An allow-list (``parse_allowed``: hosts, addresses or networks, each on one port or any) lets named
targets through despite their class, such as a chart repository on the jump host itself; the checks
above still run on every connection and redirect hop, and a metadata address is refused whatever
the list says. This module must not offer a switch that turns the guard off, must not fetch through proxies (a proxy resolves the target where we
cannot check it), and must not put credentials, query strings or bodies into errors or logs.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Mapping, Sequence
from typing import Any, Self

import aiohttp
import attrs
import yarl
from aiohttp.abc import AbstractResolver, ResolveResult
from multidict import CIMultiDict

from common.config import ConfigError
from common.errors import BadGateway, BadRequest

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

SCHEMES = frozenset({"http", "https", "oci"})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 10
# Headers that carry credentials; dropped when a redirect leaves the origin, as browsers do.
CREDENTIAL_HEADERS = ("Authorization", "Proxy-Authorization", "Cookie")


def _nets(*cidrs: str) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(cidr) for cidr in cidrs)


# Order matters: the first match names the class (metadata sits inside link-local and private).
ADDRESS_CLASSES: tuple[tuple[str, tuple[IPNetwork, ...]], ...] = (
    ("metadata", _nets("169.254.169.254/32", "100.100.100.200/32", "168.63.129.16/32")),
    ("metadata", _nets("fd00:ec2::254/128")),
    ("loopback", _nets("127.0.0.0/8", "::1/128")),
    ("unspecified", _nets("0.0.0.0/8", "::/128")),
    ("link-local", _nets("169.254.0.0/16", "fe80::/10")),
    ("multicast", _nets("224.0.0.0/4", "ff00::/8")),
    ("broadcast", _nets("255.255.255.255/32")),
    ("reserved", _nets("240.0.0.0/4")),
    ("private", _nets("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")),
    ("private", _nets("fc00::/7", "fec0::/10")),
)
PRIVATE = "private"

_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: operator picks the prefix length
_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # RFC 2765 (SIIT)
_NUMERIC_LABEL = re.compile(r"0x[0-9a-f]*|[0-9]+", re.IGNORECASE)


class AddressRefused(BadRequest, code="address-refused"):
    """A fetch the policy refused; ``address_class`` says why (``loopback``, ``metadata``…)."""

    def __init__(self, target: str, reason: str, *, address_class: str) -> None:
        super().__init__(
            f"refused to fetch {target}: {reason}", extra={"addressClass": address_class}
        )
        self.target = target
        self.reason = reason
        self.address_class = address_class


class RedirectLimitExceeded(BadGateway, code="too-many-redirects"):
    """The upstream redirected more often than ``max_redirects`` allows."""


def describe(address: str | IPAddress) -> str | None:
    """The class of an address (``loopback``, ``private``…), or None for an ordinary one.

    IPv6 spellings that embed an IPv4 address (mapped, compatible, 6to4, NAT64, Teredo) take the
    class of the embedded address. Raises ValueError for text that is not an IP address.
    """
    found = _classify(_parse_ip(address) if isinstance(address, str) else address)
    return found[0] if found else None


def _parse_ip(text: str) -> IPAddress:
    return ipaddress.ip_address(text.split("%", 1)[0])  # a zone id ("%eth0") does not change class


def _direct_class(ip: IPAddress) -> str | None:
    for name, networks in ADDRESS_CLASSES:
        if any(ip.version == net.version and ip in net for net in networks):
            return name
    return None


def _classify(ip: IPAddress) -> tuple[str, str] | None:
    """(class, how the address spells it) for a classified address, else None."""
    if (name := _direct_class(ip)) is not None:
        return name, ""
    if isinstance(ip, ipaddress.IPv6Address):
        for label, inner in _embedded_ipv4(ip):
            if (name := _direct_class(inner)) is not None:
                return name, f" ({label} spelling of {inner})"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    value = int(ip)
    found: list[tuple[str, ipaddress.IPv4Address]] = []
    if ip.ipv4_mapped is not None:
        found.append(("IPv4-mapped", ip.ipv4_mapped))
    if ip in _IPV4_TRANSLATED:
        found.append(("IPv4-translated", ipaddress.IPv4Address(value & 0xFFFFFFFF)))
    if value >> 32 == 0:
        found.append(("IPv4-compatible", ipaddress.IPv4Address(value)))
    if ip.sixtofour is not None:
        found.append(("6to4", ip.sixtofour))
    if ip.teredo is not None:
        found.append(("Teredo", ip.teredo[1]))
    if ip in _NAT64_WELL_KNOWN:
        found.append(("NAT64", ipaddress.IPv4Address(value & 0xFFFFFFFF)))
    if ip in _NAT64_LOCAL:
        found.extend(("NAT64", inner) for inner in _local_nat64(value))
    return found


def _rfc6052_ipv4(value: int, prefix_length: int) -> ipaddress.IPv4Address | None:
    """The IPv4 address after a NAT64 prefix of this length (RFC 6052 section 2.2), if consistent.

    Below /96 the "u" octet (bits 64-71) and the suffix after the address must be zero; an address
    that breaks that is not written in this layout.
    """
    if prefix_length == 96:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    if (value >> 56) & 0xFF:
        return None
    squeezed = (value >> 64) << 56 | (value & ((1 << 56) - 1))  # the u octet squeezed out
    suffix_bits = 120 - prefix_length - 32
    if squeezed & ((1 << suffix_bits) - 1):
        return None
    return ipaddress.IPv4Address((squeezed >> suffix_bits) & 0xFFFFFFFF)


def _local_nat64(value: int) -> list[ipaddress.IPv4Address]:
    """Every reading of an address under the local-use prefix, whose length the operator picks.

    Zero padding makes other layouts read as 0.x.x.x; such readings are ignored (no translator
    forwards to 0.0.0.0/8) so that ordinary translated addresses are not refused.
    """
    readings = (_rfc6052_ipv4(value, length) for length in (48, 56, 64, 96))
    return [ip for ip in readings if ip is not None and ip not in _THIS_NETWORK]


def _numeric_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address inet_aton would read from an all-numeric host (``127.1``, ``0x7f.0.0.1``…).

    Returns None for a host name; raises ValueError for a numeric host no resolver reads as IPv4.
    """
    labels = host.removesuffix(".").split(".")
    if not all(_NUMERIC_LABEL.fullmatch(label) for label in labels):
        return None
    if len(labels) > 4:
        raise ValueError(host)
    values = [_numeric_label(label) for label in labels]
    last_bits = 8 * (5 - len(values))
    if any(v > 0xFF for v in values[:-1]) or values[-1] >= 1 << last_bits:
        raise ValueError(host)
    packed = values[-1]
    for index, value in enumerate(values[:-1]):
        packed |= value << (24 - 8 * index)
    return ipaddress.IPv4Address(packed)


def _numeric_label(label: str) -> int:
    lowered = label.lower()
    if lowered.startswith("0x"):
        return int(lowered[2:] or "0", 16)
    if len(label) > 1 and label.startswith("0"):
        return int(label, 8)
    return int(label)


# The URL grammar ``check_url`` reads (RFC 3986's, narrowed to what a fetch can use), as one
# pattern that is the same in ECMA-262 (a spec's ``pattern``) and in Python.
_H16 = "[0-9A-Fa-f]{1,4}"
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_LS32 = rf"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = (
    "(?:"
    + "|".join(
        [
            rf"(?:{_H16}:){{6}}{_LS32}",
            rf"::(?:{_H16}:){{5}}{_LS32}",
            rf"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
            *(rf"(?:(?:{_H16}:){{0,{n}}}{_H16})?::(?:{_H16}:){{{3 - n}}}{_LS32}" for n in (1, 2)),
            rf"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
            rf"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
            rf"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
            rf"(?:(?:{_H16}:){{0,6}}{_H16})?::",
        ]
    )
    + ")"
)
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
#: A host as a URL names it: a DNS name or an IP literal (an IPv6 one in brackets).
HOST_PATTERN = rf"(?:{_LABEL}(?:\.{_LABEL})*\.?|\[{_IPV6}\])"
#: A port, 0 to 65535.
PORT_PATTERN = "(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})"


def url_pattern(schemes: Sequence[str]) -> str:
    """The absolute URLs of ``schemes`` that :meth:`AddressPolicy.check_url` can read, as a
    pattern a spec can carry: user info, a host name or IP literal, a port, then a path, query
    or fragment without blanks. Where the host leads (loopback, private, metadata...) is the
    policy's decision at connect time, which no pattern states."""
    alternatives = "|".join(re.escape(scheme) for scheme in schemes)
    # Blanks and controls spelled out: ``\s`` differs between Python and ECMA-262 (``\x1c``).
    authority = rf"(?:[^\x00-\x20\x7f/?#@\[\]]+@)?{HOST_PATTERN}(?::{PORT_PATTERN})?"
    return rf"^(?:{alternatives})://{authority}(?:[/?#][^\x00-\x20\x7f]*)?$(?!\n)"


def _is_localhost(host: str) -> bool:
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def _display(url: yarl.URL) -> str:
    """The URL as errors may show it: no user info, query or fragment (they can carry secrets)."""
    if url.absolute and (url.raw_user is not None or url.raw_password is not None):
        url = url.with_user(None)
    return str(url.with_query(None).with_fragment(None))


def _origin(url: yarl.URL) -> tuple[str, str | None, int | None]:
    return url.scheme, url.host, url.port


_PORTED = re.compile(
    r"\[(?P<v6>[^\]]+)\](?::(?P<v6port>[0-9]{1,5}))?|(?P<target>[^:]+):(?P<port>[0-9]{1,5})"
)
_HOST_NAME = re.compile(
    r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*"
)
_LOOPBACK_NETS = _nets("127.0.0.0/8", "::1/128")


@attrs.frozen
class Allowed:
    """One allow-list entry: a network or a host name, on one port or on any."""

    network: IPNetwork | None = None
    host: str | None = None
    port: int | None = None

    def admits(self, ip: IPAddress | None, port: int | None, host: str | None) -> bool:
        if self.port is not None and port != self.port:
            return False
        if self.host is not None:
            return host is not None and host.rstrip(".").lower() == self.host
        net = self.network
        return ip is not None and net is not None and ip.version == net.version and ip in net


def parse_allowed(entry: str) -> tuple[Allowed, ...]:
    """Read one allow-list entry: ``10.0.0.5``, ``10.1.0.0/16``, ``[fd00::/8]``, a host name, or
    ``localhost``; each optionally with ``:port`` (``127.0.0.1:8879``, ``[::1]:8879``).

    ``localhost`` stands for the name and the loopback networks. No entry may cover a cloud
    metadata address: those stay refused whatever the list says. Raises ValueError saying why.
    """
    text = entry.strip()
    target, port = text, None
    if match := _PORTED.fullmatch(text):
        target = match.group("v6") or match.group("target")
        digits = match.group("v6port") or match.group("port")
        port = int(digits) if digits else None
        if port is not None and not 1 <= port <= 65535:
            raise ValueError(f"{entry!r}: the port must be 1-65535")
    name = target.rstrip(".").lower()
    if name == "localhost":
        return (Allowed(host=name, port=port), *(Allowed(n, port=port) for n in _LOOPBACK_NETS))
    try:
        network = ipaddress.ip_network(target)
    except ValueError as exc:
        if "/" in target or ":" in target or not _HOST_NAME.fullmatch(name):
            raise ValueError(f"{entry!r} is not a host, an address or a network: {exc}") from None
        if all(_NUMERIC_LABEL.fullmatch(label) for label in name.split(".")):
            raise ValueError(f"{entry!r}: write addresses in canonical dotted form") from None
        return (Allowed(host=name, port=port),)
    metadata = [n for name_, nets in ADDRESS_CLASSES if name_ == "metadata" for n in nets]
    if any(m.version == network.version and m.overlaps(network) for m in metadata):
        raise ValueError(f"{entry!r} covers a cloud metadata address, which is never allowed")
    return (Allowed(network, port=port),)


def allow_setting(entries: Sequence[str], *, key: str) -> list[Allowed]:
    """A service's allow-list setting ``key`` read with :func:`parse_allowed`; a bad entry stops
    start-up (:class:`~common.config.ConfigError` naming ``key``)."""
    try:
        return [allowed for entry in entries for allowed in parse_allowed(entry)]
    except ValueError as exc:
        raise ConfigError(key, f"a host, address or network: {exc}") from None


def _allow_list(entries: Any) -> tuple[Allowed, ...]:
    return tuple(e if isinstance(e, Allowed) else Allowed(e) for e in entries)


@attrs.frozen
class AddressPolicy:
    """Which addresses a fetch may reach. Loopback, metadata, link-local… are refused unless an
    ``allow`` entry names them; metadata addresses are refused always."""

    block_private_networks: bool = False
    """Also refuse private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, fec0::/10)."""
    allow: tuple[Allowed, ...] = attrs.field(default=(), converter=_allow_list)
    """Entries allowed despite their class (networks are taken as they are): a service's
    allow-list setting, read with :func:`parse_allowed`, and loopback servers in tests."""

    def check_url(self, url: str | yarl.URL) -> yarl.URL:
        """Refuse a bad scheme, a ``localhost`` name or a refused IP literal; return the URL."""
        parsed = _parse_url(url)
        target = _display(parsed)
        if parsed.scheme not in SCHEMES:
            reason = f"the scheme {parsed.scheme!r} is not allowed (only http, https and oci)"
            raise AddressRefused(target, reason, address_class="unsupported-scheme")
        host = parsed.host
        if not host:
            raise AddressRefused(target, "the URL names no host", address_class="invalid-url")
        if _is_localhost(host) and not self._admits(None, parsed.port, host):
            reason = f"{host} is a loopback host name"
            raise AddressRefused(target, reason, address_class="loopback")
        self._check_literal(target, host, parsed.port)
        return parsed

    def check_address(self, host: str, address: str, port: int | None = None) -> None:
        """Refuse ``address`` (what ``host`` resolved to, to be dialled on ``port``) when its
        class is refused and no allow entry admits it."""
        try:
            ip = _parse_ip(address)
        except ValueError:
            reason = f"{host} resolves to {address!r}, which is not an IP address"
            raise AddressRefused(host, reason, address_class="invalid-address") from None
        refusal = self._refusal(ip, port, host)
        if refusal is not None:
            name, spelling = refusal
            reason = f"{host} resolves to {address}, {_article(name)} {name} address{spelling}"
            raise AddressRefused(host, reason, address_class=name)

    def _check_literal(self, target: str, host: str, port: int | None) -> None:
        if ":" in host:
            try:
                literal = _parse_ip(host)
            except ValueError:
                reason = f"{host} is not a valid IPv6 address"
                raise AddressRefused(target, reason, address_class="invalid-url") from None
            self._check_ip(target, host, literal, port)
            return
        try:
            ip = _numeric_ipv4(host)
        except ValueError:
            reason = f"{host} is not a valid IPv4 address"
            raise AddressRefused(target, reason, address_class="non-canonical") from None
        if ip is None:
            return  # a name: the resolver checks what it resolves to
        if str(ip) == host:
            self._check_ip(target, host, ip, port)
            return
        # Resolvers read these spellings differently (or not at all); none is needed, refuse them.
        name = describe(ip) or "non-canonical"
        detail = f"{_article(name)} {name} address" if name != "non-canonical" else "not canonical"
        reason = f"{host} is {detail} (non-canonical spelling of {ip})"
        raise AddressRefused(target, reason, address_class=name)

    def _check_ip(self, target: str, host: str, ip: IPAddress, port: int | None) -> None:
        refusal = self._refusal(ip, port, None)
        if refusal is not None:
            name, spelling = refusal
            reason = f"{host} is {_article(name)} {name} address{spelling}"
            raise AddressRefused(target, reason, address_class=name)

    def _refusal(self, ip: IPAddress, port: int | None, host: str | None) -> tuple[str, str] | None:
        found = _classify(ip)
        if found is None or (found[0] == PRIVATE and not self.block_private_networks):
            return None
        if found[0] != "metadata" and self._admits(ip, port, host):
            return None
        return found

    def _admits(self, ip: IPAddress | None, port: int | None, host: str | None) -> bool:
        return any(entry.admits(ip, port, host) for entry in self.allow)


def _article(name: str) -> str:
    return "an" if name[0] in "aeiou" else "a"


def _parse_url(url: str | yarl.URL) -> yarl.URL:
    if isinstance(url, yarl.URL):
        return url
    try:
        parsed = yarl.URL(url)
        _ = parsed.host, parsed.port  # an IDNA label that does not decode, a port out of range
        return parsed
    except ValueError:
        # The text itself stays out of the message: it may carry credentials.
        raise AddressRefused(
            "the given URL", "it does not parse", address_class="invalid-url"
        ) from None


class GuardingResolver(AbstractResolver):
    """Resolves through ``inner`` and refuses the name if any address it yields is refused.

    The connector dials exactly the addresses returned here, so what was checked is what is dialled.
    """

    def __init__(self, policy: AddressPolicy, inner: AbstractResolver | None = None) -> None:
        self._policy = policy
        # ThreadedResolver (getaddrinfo: /etc/hosts, nsswitch) rather than DefaultResolver, which
        # becomes aiodns when installed and would need closing by a connector that does not own it.
        self._inner = inner if inner is not None else aiohttp.ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        for result in results:
            self._policy.check_address(host, result["host"], port or None)
        return results

    async def close(self) -> None:
        await self._inner.close()


def _guard_middleware(policy: AddressPolicy) -> aiohttp.ClientMiddlewareType:
    """Checks every request the session sends, including redirect hops aiohttp follows itself."""

    async def guard(
        request: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType
    ) -> aiohttp.ClientResponse:
        url = policy.check_url(request.url)
        if request.proxy is not None:
            reason = "fetches through a proxy cannot be checked"
            raise AddressRefused(_display(url), reason, address_class="proxy")
        try:
            return await handler(request)
        except AddressRefused as exc:  # from the resolver, which knows the host but not the URL
            if exc.target == _display(url):
                raise
            raise AddressRefused(
                _display(url), exc.reason, address_class=exc.address_class
            ) from exc

    return guard


_REFUSED_SESSION_OPTIONS = ("connector", "proxy", "auth")


def guarded_session(
    policy: AddressPolicy, *, resolver: AbstractResolver | None = None, **session_kwargs: Any
) -> aiohttp.ClientSession:
    """A ClientSession whose every connection goes through ``policy``.

    ``resolver`` replaces the system resolver under the guard (tests use a fixed table of names).
    Credentials belong on each request, never on the session, so that redirects can drop them.
    """
    refused = [key for key in _REFUSED_SESSION_OPTIONS if session_kwargs.get(key) is not None]
    if session_kwargs.get("trust_env"):
        refused.append("trust_env")
    if "Authorization" in CIMultiDict(session_kwargs.get("headers") or {}):
        refused.append("headers['Authorization']")
    if refused:
        raise TypeError(f"guarded_session does not accept {', '.join(refused)}")
    middlewares = (*session_kwargs.pop("middlewares", ()), _guard_middleware(policy))
    connector = aiohttp.TCPConnector(resolver=GuardingResolver(policy, resolver))
    return aiohttp.ClientSession(connector=connector, middlewares=middlewares, **session_kwargs)


_REFUSED_REQUEST_OPTIONS = ("allow_redirects", "proxy", "middlewares")


async def guarded_request(
    session: aiohttp.ClientSession,
    policy: AddressPolicy,
    method: str,
    url: str | yarl.URL,
    *,
    max_redirects: int = MAX_REDIRECTS,
    **kwargs: Any,
) -> aiohttp.ClientResponse:
    """Send a request, following up to ``max_redirects`` redirects, each hop checked first.

    Returns the final response; the caller releases it (``async with`` or ``release()``).
    """
    if refused := [key for key in _REFUSED_REQUEST_OPTIONS if key in kwargs]:
        raise TypeError(f"guarded_request does not accept {', '.join(refused)}")
    first = current = policy.check_url(url)
    redirects = 0
    while True:
        response = await session.request(method, current, allow_redirects=False, **kwargs)
        location = _redirect_location(response)
        if location is None:
            return response
        response.release()
        if redirects == max_redirects:
            detail = f"gave up on {_display(first)}: more than {max_redirects} redirects"
            raise RedirectLimitExceeded(detail)
        redirects += 1
        target = policy.check_url(_join(current, location))
        method, kwargs = _next_hop(response.status, method, kwargs)
        if _origin(target) != _origin(current):
            kwargs = _without_credentials(kwargs)
        current = target


@attrs.define
class GuardedClient:
    """Base of the outbound clients: one guarded session, opened by the first request (a client
    that is never used opens nothing). ``async with`` one, or call ``close()``."""

    policy: AddressPolicy
    _session: aiohttp.ClientSession | None = attrs.field(default=None, init=False)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def request(
        self, method: str, url: str | yarl.URL, **kwargs: Any
    ) -> aiohttp.ClientResponse:
        """``guarded_request`` on this client's session; the caller releases the response."""
        if self._session is None:
            self._session = guarded_session(self.policy)
        return await guarded_request(self._session, self.policy, method, url, **kwargs)


def _redirect_location(response: aiohttp.ClientResponse) -> str | None:
    if response.status not in REDIRECT_STATUSES:
        return None
    return response.headers.get("Location")


def _join(current: yarl.URL, location: str) -> yarl.URL:
    try:
        return current.join(yarl.URL(location))
    except ValueError as exc:
        detail = f"{_display(current)} redirected to a location that is not a URL"
        raise BadGateway(detail) from exc


def _next_hop(status: int, method: str, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Method and options for the next hop: 303 (and 301/302 after POST) become a bodiless GET."""
    to_get = (status == 303 and method.upper() != "HEAD") or (
        status in (301, 302) and method.upper() == "POST"
    )
    if not to_get:
        return method, kwargs
    kept = {key: value for key, value in kwargs.items() if key not in ("data", "json")}
    return "GET", _without_headers(kept, ("Content-Type", "Content-Length"))


def _without_credentials(kwargs: dict[str, Any]) -> dict[str, Any]:
    kept = {key: value for key, value in kwargs.items() if key not in ("auth", "cookies")}
    return _without_headers(kept, CREDENTIAL_HEADERS)


def _without_headers(kwargs: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    headers: Mapping[str, str] | None = kwargs.get("headers")
    if not headers:
        return kwargs
    remaining = CIMultiDict(headers)
    for name in names:
        remaining.popall(name, None)
    return {**kwargs, "headers": remaining}
