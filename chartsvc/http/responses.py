"""Response helpers shared by the route modules: archives as attachments, plain text."""

from __future__ import annotations

from aiohttp import web

from common import headers


def archive_response(data: bytes, filename: str) -> web.Response:
    # Chart names come from uploaded Chart.yaml files: any text, made a header value there.
    return web.Response(
        body=data,
        content_type="application/gzip",
        headers={"Content-Disposition": headers.content_disposition(filename, default="chart.tgz")},
    )


def text_response(text: str, *, content_type: str = "text/plain") -> web.Response:
    return web.Response(text=text, content_type=content_type, charset="utf-8")
