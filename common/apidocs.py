"""Serves the spec as JSON and YAML, and Swagger UI 5 from the ``swagger-ui-py`` package's assets.

Swagger UI 5 is the first line that renders OpenAPI 3.1, which our specs are. The package is used
only as a carrier of the official distribution's files; its framework glue is not (it would add
routes we do not describe). The documents and the page are rendered once when the routes are
added, never per request. No asset comes from a CDN: a headless jump host often has no route to
one. The page runs no inline script, so its Content-Security-Policy allows scripts from this origin
only.
"""

from __future__ import annotations

import html
import json

from aiohttp import web
from swagger_ui.utils import SWAGGER_UI_PY_ROOT

from common import pages, yamlio
from common.openapi import SPEC

#: Where the spec (``.yaml`` for YAML) and, by default, Swagger UI are served.
DOCUMENT_PATH = "/v3/api-docs"
UI_PATH = "/swagger-ui"
ASSETS_DIR = SWAGGER_UI_PY_ROOT / "static"
# The files the page loads; the package also carries Swagger Editor, which we do not serve.
ASSETS = ("swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png", "favicon-16x16.png")
ASSET_CACHE = "public, max-age=86400"  # assets change only with the package version
# Swagger UI sets style attributes and inlines its icons as data: URIs; nothing else is needed.
UI_HEADERS = pages.security_headers(
    pages.policy(
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
    )
)

_INDEX = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<link rel="icon" type="image/png" href="{ui}/favicon-32x32.png" sizes="32x32">
<link rel="stylesheet" href="{ui}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{ui}/swagger-ui-bundle.js"></script>
<script src="{ui}/swagger-initializer.js"></script>
</body>
</html>
"""


def _initializer(spec_url: str) -> str:
    options = {
        "url": spec_url,
        "dom_id": "#swagger-ui",
        "deepLinking": True,
        "displayRequestDuration": True,
        "validatorUrl": None,  # never send the spec to an outside validator
    }
    return (
        f"window.ui = SwaggerUIBundle(Object.assign({json.dumps(options)}, "
        "{presets: [SwaggerUIBundle.presets.apis], layout: 'BaseLayout'}));\n"
    )


def add_routes(app: web.Application, *, base_path: str, ui_path: str) -> None:
    document = app[SPEC].served(base_path)
    as_json = json.dumps(document, indent=2).encode()
    as_yaml = yamlio.dump(document).encode()
    ui = "/" + ui_path.strip("/")
    title = html.escape(str(document.get("info", {}).get("title", "API")))
    index = _INDEX.format(title=title, ui=ui).encode()
    initializer = _initializer(DOCUMENT_PATH).encode()

    async def api_docs(_: web.Request) -> web.Response:
        return web.Response(body=as_json, content_type="application/json")

    async def api_docs_yaml(_: web.Request) -> web.Response:
        return web.Response(body=as_yaml, content_type="application/yaml")

    async def ui_index(_: web.Request) -> web.Response:
        return web.Response(body=index, content_type="text/html", headers=UI_HEADERS)

    async def ui_initializer(_: web.Request) -> web.Response:
        return web.Response(body=initializer, content_type="text/javascript")

    app.router.add_get(DOCUMENT_PATH, api_docs, allow_head=False)
    app.router.add_get(DOCUMENT_PATH + ".yaml", api_docs_yaml, allow_head=False)
    app.router.add_get(ui, ui_index, allow_head=False)
    app.router.add_get(ui + "/", ui_index, allow_head=False)
    app.router.add_get(ui + "/index.html", ui_index, allow_head=False)
    app.router.add_get(ui + "/swagger-initializer.js", ui_initializer, allow_head=False)
    pages.add_assets(app.router, ui, ASSETS_DIR, ASSETS, cache=ASSET_CACHE)
