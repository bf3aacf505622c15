"""Reading the chart service's multipart forms: the ``chart`` archive part and small text parts.

Why not ``common.uploads``: that reader streams every part to a temp file, which suits large uploads
of data kept on disk. A chart archive is consumed as bytes by the engine anyway (Helm loads archives
in memory), so spooling it to disk and back only adds work: on a template upload it cost more than
the render itself. Parts are read into memory under the same caps (``chartsvc.rest.max-upload-size``
→ 413), and the spec's multipart ``required`` list and JSON part schemas are enforced the same way
(``chartsvc.calls.form.checked_form``, which the MCP door uses too). Code that needs a file
(OCI push) writes one under ``chartsvc.rest.temp-dir`` and removes it. This module only locates and
decodes parts; it never interprets an archive.
"""

from __future__ import annotations

import re
import urllib.parse

from aiohttp import web

from chartsvc.calls.form import MAX_TEXT_BYTES, ChartForm, checked_form
from chartsvc.keys import SETTINGS
from common.app import read_capped
from common.errors import BadRequest, UnsupportedMediaType
from common.openapi import OPERATION, SPEC

MAX_PARTS = 8
# Boundary and part names, read directly: aiohttp's part-by-part reader with its RFC 6266 parser
# cost more than the wait for a small chart's render; form-data names are tokens or quoted strings.
_BOUNDARY = re.compile(r'boundary\s*=\s*(?:"([^"]{1,70})"|([^;\s]{1,70}))', re.IGNORECASE)
# RFC 5987 extended form (name*=utf-8''%C3%BC), which aiohttp's client writes for non-ASCII names.
_PART_NAME_EXT = re.compile(
    r"(?:^|;)\s*name\*\s*=\s*([A-Za-z0-9_-]+)'[^']*'([^;\s]+)", re.IGNORECASE
)
_PART_NAME = re.compile(r'(?:^|;)\s*name\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))', re.IGNORECASE)


async def read_chart_form(request: web.Request) -> ChartForm:
    cap = request.app[SETTINGS].rest.max_upload_size
    content_type = request.headers.get("Content-Type", "")
    _boundary(content_type)  # a wrong Content-Type is refused before the body is read
    parts = split_form(await read_capped(request, cap + MAX_TEXT_BYTES), content_type)
    op_id = request.get(OPERATION)
    return checked_form(
        parts, None if op_id is None else request.app[SPEC].operations[op_id], cap=cap
    )


def split_form(body: bytes, content_type: str) -> dict[str, bytes]:
    """A multipart/form-data body's parts by name (the last of a repeated name wins)."""
    return _split(body, _boundary(content_type))


def _boundary(content_type: str) -> bytes:
    media, _, params = content_type.partition(";")
    if media.strip().lower() != "multipart/form-data":
        raise UnsupportedMediaType("Content-Type must be multipart/form-data")
    match = _BOUNDARY.search(params)
    if match is None:
        raise BadRequest("Content-Type must be multipart/form-data with a boundary")
    return (match.group(1) or match.group(2)).encode("latin-1")


def _split(body: bytes, boundary: bytes) -> dict[str, bytes]:
    """RFC 7578 parts by name. A part's content ends right before CRLF "--" boundary."""
    delimiter = b"--" + boundary
    sections = body.split(b"\r\n" + delimiter)
    if sections[0].startswith(delimiter):  # no preamble: the first delimiter opens the body
        sections[0] = sections[0][len(delimiter) :]
    else:
        sections.pop(0)  # the preamble, ignored
    parts: dict[str, bytes] = {}
    for section in sections:
        if section.startswith(b"--"):
            return parts  # the close delimiter; the epilogue after it is ignored
        head, sep, content = section.partition(b"\r\n\r\n")
        if not sep or len(parts) >= MAX_PARTS:
            break
        parts[_part_name(head.decode("latin-1"))] = content
    raise BadRequest("malformed multipart body: parts or the closing boundary are missing")


def _part_name(head: str) -> str:
    for line in head.split("\r\n"):
        key, _, value = line.partition(":")
        if key.strip().lower() == "content-disposition":
            match = _PART_NAME.search(value)
            if match is not None:
                quoted, token = match.groups()
                return re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else token
            extended = _PART_NAME_EXT.search(value)
            if extended is not None:
                charset, encoded = extended.groups()
                try:
                    return urllib.parse.unquote(encoded, encoding=charset, errors="strict")
                except (LookupError, UnicodeDecodeError):
                    break
    raise BadRequest("every multipart part needs a name in its Content-Disposition")
