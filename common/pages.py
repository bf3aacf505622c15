"""What every HTML page of the services shares: templates, security headers and asset files.

Pages are Jinja2 templates with autoescaping on (whatever a page shows is escaped) and undefined
names an error. Every page answers with a Content-Security-Policy that starts from nothing
(``default-src 'none'``), forbids framing, ``<base>`` and form posts elsewhere, and adds only the
sources the page names (``policy``); no inline script is ever allowed, and no asset comes from a
CDN. Asset files are served from a fixed list of names, one route each, never from whatever a path
asks for. This module must not know what a page shows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import web

#: What every page's policy holds whatever else it allows.
_ALWAYS = ("form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'")
#: Where a service serves its pages' asset files.
ASSETS_PREFIX = "/ui"
STATIC_DIR = Path(__file__).resolve().parent / "static"
#: The look every service's pages share (``static/wharf.css``); templates link ``stylesheet``.
STYLESHEET = "wharf.css"
STYLESHEET_PATH = f"{ASSETS_PREFIX}/{STYLESHEET}"
#: Assets change with a Wharf upgrade: browsers revalidate them (ETag) on each load.
REVALIDATE = "no-cache"


def policy(*sources: str) -> str:
    """A Content-Security-Policy allowing nothing but ``sources`` (``"script-src 'self'"``...)."""
    return "; ".join(("default-src 'none'", *sources, *_ALWAYS))


def security_headers(content_policy: str) -> dict[str, str]:
    """The headers of a page whose Content-Security-Policy is ``content_policy``."""
    return {
        "Content-Security-Policy": content_policy,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "X-Frame-Options": "DENY",
    }


def setup_templates(
    app: web.Application, package: str, *, filters: Mapping[str, Callable[..., str]] | None = None
) -> None:
    """Install the templates of ``package``'s ``templates`` folder and serve the shared stylesheet
    (synchronous: ``create_app`` calls it; templates are compiled on first use and kept)."""
    env = aiohttp_jinja2.setup(
        app,
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        default_helpers=False,
        filters=dict(filters or {}),
    )
    env.globals["stylesheet"] = STYLESHEET_PATH
    add_assets(app.router, ASSETS_PREFIX, STATIC_DIR, [STYLESHEET], cache=REVALIDATE)


def render(
    request: web.Request,
    template: str,
    context: Mapping[str, Any],
    *,
    headers: Mapping[str, str],
    status: int = 200,
) -> web.Response:
    """``template`` rendered with ``context``, with ``headers``; never cached (pages may be
    personal, and a stale page would outlive a sign-out)."""
    response = aiohttp_jinja2.render_template(template, request, dict(context), status=status)
    response.headers.update(headers)
    response.headers["Cache-Control"] = "no-store"
    return response


def add_assets(
    router: web.UrlDispatcher, prefix: str, directory: Path, names: Iterable[str], *, cache: str
) -> None:
    """Serve each file of ``names`` from ``directory`` at ``prefix/<name>``, one fixed route per
    file (so a route's template is its path), with ``Cache-Control: cache``."""
    headers = {"Cache-Control": cache, "X-Content-Type-Options": "nosniff"}
    for filename in names:
        path = directory / filename

        async def asset(_: web.Request, path: Path = path) -> web.FileResponse:
            return web.FileResponse(path, headers=headers)

        router.add_get(f"{prefix.rstrip('/')}/{filename}", asset)
