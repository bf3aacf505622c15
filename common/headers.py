"""Response header values made from what a user chose (a file name, a path to return to).

aiohttp refuses to send a header holding CR or LF, and it finds out only while sending, after the
handler's work is done (a session issued, a file read): the client then sees the connection drop.
So such values are made here, in one way for every service: a ``Location`` keeps a path's
characters that URLs allow and percent-encodes the rest, and a ``Content-Disposition`` carries an
ASCII ``filename`` for old clients and, when the name is not plain ASCII, the exact name in RFC 6266's
``filename*=UTF-8''…`` (RFC 8187 encoding). This module must not decide whether a value is allowed;
callers check that (a redirect only to this site, a file the caller may read).
"""

from __future__ import annotations

import re
from urllib.parse import quote

#: Characters a ``filename`` fallback keeps: printable ASCII but the quote, backslash and percent
#: (some clients decode ``%xx`` in it); the rest become ``_``.
_NOT_PLAIN = re.compile(r'[^\x20-\x7e]|["\\%]')
#: Code points no file name should carry into a header or onto a disk: C0/C1 controls and DEL.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: RFC 8187 ``attr-char`` beyond letters and digits: what ``filename*`` keeps unencoded.
_ATTR_CHARS = "!#$&+-.^_`|~"
#: Characters of a ``Location`` kept as written: RFC 3986's unreserved, reserved and ``%``.
_URL_CHARS = "/?#[]@!$&'()*+,;=:-._~%"
MAX_FILENAME = 200


def content_disposition(filename: str, *, default: str = "download") -> str:
    """``attachment`` naming ``filename`` (``default`` when nothing of it is left)."""
    name = _CONTROL.sub("_", filename)[:MAX_FILENAME].strip()
    if not name.strip("._ "):
        name = default
    fallback = _NOT_PLAIN.sub("_", name)
    value = f'attachment; filename="{fallback}"'
    if fallback != name:
        value += f"; filename*=UTF-8''{quote(name, safe=_ATTR_CHARS)}"
    return value


def location(target: str) -> str:
    """``target`` (a URL or path) as a ``Location`` value: what URLs allow kept, the rest
    (controls, spaces, non-ASCII) percent-encoded as UTF-8."""
    return quote(target, safe=_URL_CHARS)
