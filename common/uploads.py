"""Streaming multipart uploads: parts go to temp files under caps, never into memory whole.

A handler opens ``async with read_multipart(request, limits=..., temp_dir=...) as form`` and gets text
fields and file parts; the required and the allowed parts come from the operation's multipart schema in the spec, so
the spec stays the one statement of what a request must carry. Temp files are removed on exit, also
when the handler fails. This module must not interpret file contents.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import BinaryIO

import attrs
from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError

from common.errors import BadRequest, PayloadTooLarge, UnsupportedMediaType
from common.openapi import OPERATION, SPEC, check_form

_CHUNK = 256 * 1024
#: A text field is a name, a ref or a small JSON document; anything larger belongs in a file part.
MAX_FIELD_BYTES = 1024 * 1024


@attrs.frozen
class UploadLimits:
    max_part_bytes: int = 100 * 1024 * 1024
    max_total_bytes: int = 200 * 1024 * 1024
    max_parts: int = 32


@attrs.frozen
class UploadedFile:
    name: str
    path: Path
    filename: str | None
    content_type: str
    size: int


@attrs.define
class MultipartForm:
    fields: dict[str, str] = attrs.field(factory=dict)
    files: dict[str, list[UploadedFile]] = attrs.field(factory=dict)

    def file(self, name: str) -> UploadedFile | None:
        parts = self.files.get(name)
        return parts[0] if parts else None


@contextlib.asynccontextmanager
async def read_multipart(
    request: web.Request, *, limits: UploadLimits, temp_dir: Path | None = None
) -> AsyncIterator[MultipartForm]:
    if not request.content_type.startswith("multipart/"):
        raise UnsupportedMediaType("Content-Type must be multipart/form-data")
    if request.content_length is not None and request.content_length > limits.max_total_bytes:
        raise PayloadTooLarge(_too_large("request body", limits.max_total_bytes))
    workdir = await asyncio.to_thread(_make_workdir, temp_dir)
    try:
        form = await _read(request, limits, workdir)
        _check_parts(request, form)
        yield form
    finally:
        await asyncio.to_thread(shutil.rmtree, workdir, ignore_errors=True)


def _make_workdir(temp_dir: Path | None) -> Path:
    if temp_dir is not None:
        temp_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="upload-", dir=temp_dir))


async def _read(request: web.Request, limits: UploadLimits, workdir: Path) -> MultipartForm:
    form = MultipartForm()
    total = 0
    try:
        reader = await request.multipart()
        count = 0
        while (part := await reader.next()) is not None:
            count += 1
            if count > limits.max_parts:
                raise PayloadTooLarge(f"too many parts: at most {limits.max_parts} are accepted")
            if not isinstance(part, BodyPartReader):
                raise BadRequest("nested multipart bodies are not accepted")
            total += await _read_part(part, form, limits, workdir, total)
    except (ValueError, HttpProcessingError) as exc:  # aiohttp's ways of saying "malformed"
        raise BadRequest(f"malformed multipart body: {_first_line(exc)}") from None
    return form


async def _read_part(
    part: BodyPartReader, form: MultipartForm, limits: UploadLimits, workdir: Path, total: int
) -> int:
    name = part.name or ""
    if not name:
        raise BadRequest("every multipart part needs a name in Content-Disposition")
    media = part.headers.get("Content-Type", "text/plain")
    is_file = part.filename is not None or not media.startswith(("text/plain", "application/json"))
    if not is_file:
        data, _ = await _read_capped(part, MAX_FIELD_BYTES, limits.max_total_bytes - total, None)
        try:
            form.fields[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest(f"part {name!r} is not UTF-8 text") from None
        return len(data)
    fd, raw_path = tempfile.mkstemp(dir=workdir)
    with os.fdopen(fd, "wb") as out:
        _, size = await _read_capped(
            part, limits.max_part_bytes, limits.max_total_bytes - total, out
        )
    upload = UploadedFile(name, Path(raw_path), part.filename, media.split(";")[0].strip(), size)
    form.files.setdefault(name, []).append(upload)
    return size


async def _read_capped(
    part: BodyPartReader, cap: int, room: int, out: BinaryIO | None
) -> tuple[bytes, int]:
    """Read one part into ``out`` when given, else into memory; returns (kept bytes, size)."""
    kept = bytearray()
    size = 0
    while chunk := await part.read_chunk(_CHUNK):
        size += len(chunk)
        if size > cap:
            raise PayloadTooLarge(_too_large(f"part {part.name!r}", cap))
        if size > room:
            raise PayloadTooLarge("request body is larger than the limit for all parts together")
        if out is None:
            kept += chunk
        else:
            out.write(chunk)  # small sequential writes to a local temp file; see _CHUNK
    return bytes(kept), size


def _check_parts(request: web.Request, form: MultipartForm) -> None:
    op_id = request.get(OPERATION)
    if op_id is not None:
        check_form(request.app[SPEC].operations[op_id], [*form.fields, *form.files])


def _first_line(exc: Exception) -> str:
    """aiohttp's header errors span lines and quote the raw header; one line is enough."""
    text = exc.message if isinstance(exc, HttpProcessingError) else str(exc)
    return text.strip().splitlines()[0][:200] if text.strip() else type(exc).__name__


def _too_large(what: str, cap: int) -> str:
    return f"{what} is larger than the limit of {cap} bytes"
