"""Credentials inside a URL or chart reference, masked wherever one is echoed (answers, logs, tools).

``scheme://user:password@host/...`` must never come back to a caller or reach a log. The userinfo
is read as a URL client reads it: the authority (up to the first ``/``, ``?`` or ``#``) splits at
its *last* ``@``, so a password holding ``@`` is masked whole. A password holding ``/`` ends the
authority early for a client, so any later ``@`` that does not start a digest (``@sha256:``) is
taken as the end of credentials too. Leading blanks do not hide the scheme. This module only
masks; it never parses a URL for use.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

_SCHEME = re.compile(r"\s*(?:[A-Za-z][A-Za-z0-9+.-]*://)?")
_AUTHORITY_END = re.compile(r"[/?#]")


def redacted(ref: str) -> str:
    """``ref`` (a URL or reference, with or without a scheme) with its credentials as ``***``."""
    start = _SCHEME.match(ref).end()  # type: ignore[union-attr]  # matches any text
    rest = ref[start:]
    authority = _AUTHORITY_END.split(rest, maxsplit=1)[0]
    cut = authority.rfind("@")
    if cut < 0:
        later = [
            m.start() for m in re.finditer("@", rest) if not rest.startswith("sha256:", m.end())
        ]
        cut = later[-1] if later else -1
    return ref if cut < 0 else f"{ref[:start]}***{rest[cut:]}"


def redacted_target(target: str) -> str:
    """A request target (``/path?query``) with the credentials of every URL in its query values
    masked, as an access log may write it. Only targets holding an ``@`` pay for more than a scan."""
    path, mark, query = target.partition("?")
    if not mark or ("@" not in query and "%40" not in query.upper()):
        return target
    fields = []
    for field in query.split("&"):
        name, equals, value = field.partition("=")
        plain = unquote(value)
        masked = redacted(plain) if "://" in plain else plain
        fields.append(f"{name}{equals}{quote(masked, safe=':/*@') if masked != plain else value}")
    return f"{path}?{'&'.join(fields)}"
