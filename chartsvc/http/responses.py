"""Response helpers shared by the route modules: archives as attachments, plain text."""

from __future__ import annotations

import re

from aiohttp import web


def archive_response(data: bytes, filename: str) -> web.Response:
    # Chart names come from uploaded Chart.yaml files: keep the header a plain file name.
    safe = re.sub(r"[^A-Za-z0-9._+-]", "_", filename)[:200] or "chart.tgz"
    return web.Response(
        body=data,
        content_type="application/gzip",
        headers={"Content-Disposition": f'attachment; filename="{safe}"'},
    )


def text_response(text: str, *, content_type: str = "text/plain") -> web.Response:
    return web.Response(text=text, content_type=content_type, charset="utf-8")
