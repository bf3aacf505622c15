"""Rendering of pages: the Jinja2 environment, security headers, and HTML error pages.

Autoescaping is on for every template (report content — test names, messages, stack traces — is
untrusted). Every page carries a Content-Security-Policy that allows no script and no external
resource at all, and forbids framing. This module must not know what a page shows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

from aiohttp import web

from common import headers, pages
from common.errors import WharfError
from results import auth

PAGE_ROUTE = "page."  # prefix of every page route's name: how error_page tells pages from API
#: No script at all; the shared stylesheet and the page's own styles, charts as inline SVG.
SECURITY_HEADERS = pages.security_headers(
    pages.policy("style-src 'self' 'unsafe-inline'", "img-src 'self' data:")
)


def setup(app: web.Application) -> None:
    """Install the template environment and the shared stylesheet (synchronous)."""
    pages.setup_templates(app, "results.web", filters=FILTERS)


def page(request: web.Request, template: str, *, status: int = 200, **context: Any) -> web.Response:
    """Render ``template`` with the principal, plus ``context``; no caching of personal pages."""
    context.setdefault("principal", auth.principal(request))
    return pages.render(request, template, context, headers=SECURITY_HEADERS, status=status)


def see_other(location: str) -> web.Response:
    """The answer to a successful form post: go there with GET (so reloading does not re-post)."""
    return web.Response(status=303, headers={"Location": headers.location(location)})


#: Paths that are not pages: an unknown one there stays a problem+json 404.
NOT_PAGES = ("/api/", "/actuator/", "/v3/api-docs", "/swagger-ui")


def error_page(request: web.Request, exc: Exception) -> web.Response | None:
    """Our errors raised on a page become an HTML page with the same status, and so does a page
    address that does not exist (a mistyped link shows a page, not JSON); None for the rest,
    which stay problems. The envelope (``common.app``) asks it for every error."""
    name = request.match_info.route.name or ""
    if name.startswith(PAGE_ROUTE):
        if not isinstance(exc, WharfError):
            return None
        fields = getattr(exc, "errors", None) or []
        shown = page(
            request,
            "message.html",
            status=exc.status,
            title=exc.title,
            detail=exc.detail,
            fields=fields,
        )
        shown.headers.update(exc.headers)  # Retry-After, WWW-Authenticate
        return shown
    unmatched = request.match_info.http_exception is not None
    if isinstance(exc, web.HTTPNotFound) and unmatched and not request.path.startswith(NOT_PAGES):
        detail = "There is no page at this address."
        return page(request, "message.html", status=404, title="Not found", detail=detail)
    return None


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} %"


def when(value: str | dt.datetime | None) -> str:
    if value is None or value == "":
        return "–"
    moment = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def short_sha(value: str) -> str:
    hexdigits = set("0123456789abcdef")
    return value[:10] if len(value) >= 12 and set(value) <= hexdigits else value


def duration(value: int | None) -> str:
    if value is None:
        return "–"
    return f"{value} ms" if value < 1000 else f"{value / 1000:.2f} s"


FILTERS: dict[str, Callable[..., str]] = {
    "pct": pct,
    "when": when,
    "short": short_sha,
    "ms": duration,
}


def form_text(form: Mapping[str, Any], name: str) -> str:
    value = form.get(name, "")
    return value if isinstance(value, str) else ""
