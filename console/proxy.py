"""A trusted authenticating proxy in front (oauth2-proxy, Pomerium): its headers name the person.

The proxy signs the person in and passes on who they are in ``console.security.proxy.user-header``
(and their groups, comma-separated, in ``...groups-header``, as oauth2-proxy's
``X-Forwarded-Groups``). Anyone can send such a header, so it is believed only from a client
address inside ``console.security.proxy.trusted-networks`` (the proxy's own); from anywhere else
it is ignored — the request is judged as if it were absent — counted, and logged once per address
(a bounded set of addresses, so a flood of spoofing clients cannot grow memory). With no trusted
network the way is off. This module reads headers and an address only; it knows nothing of
sessions or passwords.
"""

from __future__ import annotations

import ipaddress
import logging
from collections import OrderedDict
from collections.abc import Callable

import attrs
from multidict import CIMultiDictProxy

from common.config import ConfigError
from common.errors import BadRequest, Unauthorized
from common.presented import one_header
from console.accounts import GROUP, check_groups
from console.identity import Identity
from console.settings import ProxySettings

logger = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
#: Untrusted addresses remembered as already logged; past this the oldest is forgotten.
MAX_LOGGED = 1024
MAX_USER = 256


def _networks(cidrs: tuple[str, ...]) -> tuple[Network, ...]:
    try:
        return tuple(ipaddress.ip_network(cidr.strip(), strict=False) for cidr in cidrs)
    except ValueError:
        raise ConfigError(
            "console.security.proxy.trusted-networks", "a list of CIDR ranges (10.0.0.0/8, ::1/128)"
        ) from None


@attrs.define
class TrustedProxy:
    user_header: str | None = None
    groups_header: str | None = None
    networks: tuple[Network, ...] = ()
    #: Called once per request whose proxy headers were ignored (the metric's counter).
    ignored: Callable[[], None] = lambda: None
    _logged: OrderedDict[str, None] = attrs.field(factory=OrderedDict, init=False)

    @classmethod
    def from_settings(cls, settings: ProxySettings) -> TrustedProxy:
        return cls(
            settings.user_header, settings.groups_header, _networks(settings.trusted_networks)
        )

    def identity(self, headers: CIMultiDictProxy[str], remote: str | None) -> Identity | None:
        """The person the proxy names, if it sent the headers and is trusted; else None."""
        if self.user_header is None or not self.sent(headers):
            return None
        if not self.trusts(remote):
            self._ignore(remote)
            return None
        user = (one_header(headers, self.user_header) or "").strip()
        if not user:
            return None  # the proxy let the request through unauthenticated
        if len(user) > MAX_USER or not GROUP.match(user):
            raise Unauthorized("the proxy's user header does not hold a user name")
        groups = one_header(headers, self.groups_header) if self.groups_header else None
        try:
            return Identity(user, check_groups((groups or "").split(",")))
        except BadRequest:
            raise Unauthorized("the proxy's groups header does not hold groups") from None

    def sent(self, headers: CIMultiDictProxy[str]) -> bool:
        """Whether the request carries the proxy's headers (when there is a proxy)."""
        if self.user_header is None:
            return False
        groups = self.groups_header
        return self.user_header in headers or (groups is not None and groups in headers)

    def trusts(self, remote: str | None) -> bool:
        if remote is None or not self.networks:
            return False
        try:
            address = ipaddress.ip_address(remote.partition("%")[0])
        except ValueError:
            return False  # a Unix socket's peer: not a network address
        return any(address in network for network in self.networks)

    def _ignore(self, remote: str | None) -> None:
        self.ignored()
        key = remote or "?"
        if key in self._logged:
            self._logged.move_to_end(key)
            return
        self._logged[key] = None
        if len(self._logged) > MAX_LOGGED:
            self._logged.popitem(last=False)
        logger.warning(
            "proxy identity headers from %s ignored: not in console.security.proxy.trusted-networks "
            "(logged once per address)",
            key,
        )
