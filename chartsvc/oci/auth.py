"""Registry authentication challenges (RFC 7235 ``WWW-Authenticate``) and how to answer them.

The distribution token protocol: a registry answers 401 with
``Bearer realm="…",service="…",scope="…"``; the client asks the realm for a token (with Basic
credentials when it has them) and retries with ``Authorization: Bearer <token>``. Registries without
a token service send a ``Basic`` challenge instead. This module must not do I/O or log: it parses
challenges and builds header values that carry secrets.
"""

from __future__ import annotations

import base64
import re

import attrs

_PARAM = re.compile(r'([A-Za-z][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))')


@attrs.frozen
class Challenge:
    scheme: str
    """Lower-cased: ``bearer`` or ``basic`` (anything else is unsupported)."""
    params: dict[str, str]


def parse_challenge(header: str | None) -> Challenge | None:
    """The first challenge in a ``WWW-Authenticate`` value, or None when there is none."""
    if not header or not header.strip():
        return None
    scheme, _, rest = header.strip().partition(" ")
    params: dict[str, str] = {}
    for match in _PARAM.finditer(rest):
        key, quoted, token = match.groups()
        value = quoted if quoted is not None else token
        params.setdefault(key.lower(), re.sub(r"\\(.)", r"\1", value))
    return Challenge(scheme=scheme.lower(), params=params)


def basic_header(username: str, password: str) -> str:
    raw = f"{username}:{password}".encode()
    return "Basic " + base64.b64encode(raw).decode("ascii")
