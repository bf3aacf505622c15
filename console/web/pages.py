"""Routes of the two pages and their assets; ``setup`` installs them with the templates.

The pages are rendered from templates with nothing of the caller in them: the browser asks the API
who is signed in and which clusters there are (``static/console.js``), and signs in and out with
``POST``/``DELETE /api/v1/auth/session``, the same calls any client makes. The policy allows
scripts, styles and images from this origin only (and the icon inlined as a ``data:`` image) and
calls to it; no inline script or style.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp import web

from common import apidocs, pages
from common.app import SERVICE, wharf_version
from console.keys import SETTINGS
from console.web import ASSETS, LOGIN_PATH, SHELL_PATH

STATIC_DIR = Path(__file__).resolve().parent / "static"
HEADERS = pages.security_headers(
    pages.policy(
        "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'"
    )
)

routes = web.RouteTableDef()


def setup(app: web.Application) -> None:
    """Add the pages, their script and the template environment (synchronous, no I/O)."""
    pages.setup_templates(app, "console.web")
    app.router.add_routes(routes)
    pages.add_assets(app.router, pages.ASSETS_PREFIX, STATIC_DIR, ASSETS, cache=pages.REVALIDATE)


@routes.get(SHELL_PATH, name="page.shell")
async def shell(request: web.Request) -> web.Response:
    return pages.render(request, "shell.html", _context(request), headers=HEADERS)


@routes.get(LOGIN_PATH, name="page.login")
async def login(request: web.Request) -> web.Response:
    return pages.render(request, "login.html", _context(request), headers=HEADERS)


def _context(request: web.Request) -> dict[str, Any]:
    return {
        "api": request.app[SERVICE].base_path,
        "document": apidocs.DOCUMENT_PATH,
        "swagger_ui": apidocs.UI_PATH,
        "assets": pages.ASSETS_PREFIX,
        "shell": SHELL_PATH,
        "login": LOGIN_PATH,
        "open_mode": request.app[SETTINGS].security.open_mode,
        "version": wharf_version(),
    }
