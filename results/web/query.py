"""Query strings of the pages: the filter forms' fields, checked like the API's.

A form sends an empty field for "any" (``branch=`` is every branch), so empty means absent here.
Bad values are a 400 page naming the field (``ValidationFailed``, rendered by ``error_page``).
This module must not know what a page shows.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from common.errors import ValidationFailed
from results import fields


def filters(request: web.Request, *names: str) -> dict[str, str]:
    """The checked, normal-form values of ``names`` (of ``fields.RUN_QUERY``) that were given."""
    given = {n: request.query[n] for n in names if request.query.get(n, "").strip()}
    checks = {n: fields.RUN_QUERY[n] for n in names}
    return fields.read_query(given, checks)


def number(request: web.Request, name: str, *, default: int, low: int, high: int) -> int:
    text = request.query.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        message = f"must be a whole number from {low} to {high}"
        raise ValidationFailed([{"in": "query", "field": name, "message": message}])
    return int(text)


def given(request: web.Request) -> Mapping[str, str]:
    """The query as the page's form should show it again."""
    return {k: v for k, v in request.query.items() if v}
