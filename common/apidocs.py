"""Serves the spec as JSON and YAML, and Swagger UI from the ``swagger-ui-bundle`` assets.

The documents are rendered once when the routes are added, never per request. No asset comes from a
CDN: a headless jump host often has no route to one.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from aiohttp import web
from swagger_ui_bundle import swagger_ui_path

from common import yamlio
from common.openapi import SPEC

_INDEX = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<link rel="stylesheet" href="{ui}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{ui}/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({{url: "{spec}", dom_id: "#swagger-ui", deepLinking: true}});
</script>
</body>
</html>
"""


def add_routes(app: web.Application, *, base_path: str, ui_path: str) -> None:
    document = app[SPEC].served(base_path)
    as_json = json.dumps(document, indent=2).encode()
    as_yaml = yamlio.dump(document).encode()
    ui = "/" + ui_path.strip("/")
    title = html.escape(str(document.get("info", {}).get("title", "API")))
    index = _INDEX.format(title=title, ui=ui, spec="/v3/api-docs").encode()

    async def api_docs(_: web.Request) -> web.Response:
        return web.Response(body=as_json, content_type="application/json")

    async def api_docs_yaml(_: web.Request) -> web.Response:
        return web.Response(body=as_yaml, content_type="application/yaml")

    async def ui_index(_: web.Request) -> web.Response:
        return web.Response(body=index, content_type="text/html")

    app.router.add_get("/v3/api-docs", api_docs, allow_head=False)
    app.router.add_get("/v3/api-docs.yaml", api_docs_yaml, allow_head=False)
    app.router.add_get(ui, ui_index, allow_head=False)
    app.router.add_get(ui + "/", ui_index, allow_head=False)
    app.router.add_get(ui + "/index.html", ui_index, allow_head=False)
    app.router.add_static(ui, Path(swagger_ui_path), append_version=False)
