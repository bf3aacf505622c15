"""The credentials a request presents, each read once: a repeated one is a 401 in every service.

A header or cookie that carries a credential (``Authorization``, ``X-API-Key``,
``X-Results-Token``, a session cookie) and arrives twice is ambiguous: a proxy, a framework or a
later reader may pick the other copy than the check did, so a good copy beside a bad one could
authenticate (issue 39, item 10). The one rule, for all three services: any credential header
or cookie sent more than once is refused with 401 before either copy is looked at; each service
then checks every distinct credential it was given, and two that name different people are a 401
too (that part is each service's, as only it knows whom a credential names).

This module reads only headers; it does not verify or log a credential, and never echoes one.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import hdrs
from multidict import CIMultiDictProxy

from common.errors import Unauthorized


class RepeatedCredential(Unauthorized, code="repeated-credential"):
    def __init__(self, what: str) -> None:
        super().__init__(f"{what} was sent more than once: send each credential once")


class ConflictingCredentials(Unauthorized, code="conflicting-credentials"):
    def __init__(self) -> None:
        super().__init__("the credentials sent do not all name the same valid account")


def one_header(headers: CIMultiDictProxy[str], name: str) -> str | None:
    """The value of credential header ``name``; None when absent, a 401 when repeated."""
    values = headers.getall(name, ())
    if len(values) > 1:
        raise RepeatedCredential(f"the {name} header")
    return values[0] if values else None


def one_cookie(headers: CIMultiDictProxy[str], cookies: Mapping[str, str], name: str) -> str | None:
    """The value of credential cookie ``name`` (``cookies``: the request's parsed ones); None when
    absent, a 401 when it appears twice over all ``Cookie`` headers (a parsed mapping keeps one)."""
    if name not in cookies:
        return None
    seen = 0
    for header in headers.getall(hdrs.COOKIE, ()):
        for pair in header.split(";"):
            seen += pair.partition("=")[0].strip() == name
    if seen > 1:
        raise RepeatedCredential(f"the {name} cookie")
    return cookies[name]
