"""``POST /ingest``: spool the multipart upload to temp files, hand it to ingest, answer 201.

The upload limits (parts, bytes per part, bytes in all) are enforced while streaming by
``common.uploads``; report content limits by the parsers. This module must not parse or store.
"""

from __future__ import annotations

import time

from aiohttp import web

from common.uploads import MultipartForm, UploadLimits, read_multipart
from results import keys
from results.auth import can_read
from results.encoders import encode_ingest_result
from results.ingest import IngestForm, ReportFile
from results.settings import IngestSettings

routes = web.RouteTableDef()


@routes.post("/ingest", name="ingest")
async def ingest(request: web.Request) -> web.Response:
    svc = request.app[keys.SETTINGS]
    started = time.perf_counter()
    async with read_multipart(
        request, limits=upload_limits(svc.ingest), temp_dir=svc.spool_dir
    ) as form:
        report = ingest_form(form)
        result = await request.app[keys.INGESTOR].ingest(report, can_read=can_read(request))
    request.app[keys.METRICS].ingested(
        size=sum(f.size for f in report.files),
        cases=result.cases,
        seconds=time.perf_counter() - started,
    )
    return web.json_response(encode_ingest_result(result), status=201)


def upload_limits(settings: IngestSettings) -> UploadLimits:
    return UploadLimits(
        max_part_bytes=settings.max_part_bytes,
        max_total_bytes=settings.max_total_bytes,
        max_parts=settings.max_parts,
    )


def ingest_form(form: MultipartForm) -> IngestForm:
    files = tuple(
        ReportFile(part=f.name, path=f.path, filename=f.filename, size=f.size)
        for parts in form.files.values()
        for f in parts
    )
    return IngestForm(fields=dict(form.fields), files=files, text_parts=tuple(form.fields))
