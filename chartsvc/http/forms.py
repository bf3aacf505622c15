"""Reading the chart service's multipart forms: the ``chart`` archive part and small text parts.

The parts are read with the shared streaming reader (``common.uploads.read_parts``, on aiohttp's
part reader) and kept in memory rather than spooled to temp files: a chart archive is consumed as
bytes by the engine anyway (Helm loads archives in memory), so spooling it to disk and back only
adds work. Each part is capped while it streams in (``chartsvc.rest.max-upload-size`` for the
archive, 1 MiB for the others → 413), and the spec's multipart ``required`` list and JSON part
schemas are enforced as for the MCP door (``chartsvc.calls.form.checked_form``). Code that needs a
file (OCI push) writes one under ``chartsvc.rest.temp-dir`` and removes it. This module only locates
parts; it never interprets an archive.
"""

from __future__ import annotations

from aiohttp import web

from chartsvc.calls.form import ARCHIVE_PART, MAX_TEXT_BYTES, ChartForm, checked_form
from chartsvc.keys import SETTINGS
from common.openapi import OPERATION
from common.uploads import UploadLimits, read_parts

MAX_PARTS = 8


async def read_chart_form(request: web.Request) -> ChartForm:
    cap = request.app[SETTINGS].rest.max_upload_size
    limits = UploadLimits(
        max_part_bytes=cap, max_total_bytes=cap + MAX_TEXT_BYTES, max_parts=MAX_PARTS
    )

    def part_cap(name: str) -> int:
        return cap if name == ARCHIVE_PART else MAX_TEXT_BYTES

    parts = await read_parts(request, limits=limits, part_cap=part_cap)
    return checked_form(parts, request.get(OPERATION), cap=cap)
