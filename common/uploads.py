"""Streaming multipart uploads on aiohttp's part reader, capped while reading, never after.

Two ways to keep the parts, one reader: ``read_multipart`` spools file parts to temp files (large
data kept on disk, e.g. test reports) and ``read_parts`` keeps every part in memory (for data its
consumer needs as bytes anyway, e.g. a chart archive Helm loads in memory). Either way each part is
counted as it streams in and refused (413) the moment it passes its cap or the body passes the total;
a malformed body (no boundary, no starting boundary, truncated before its closing boundary, a part
without a name, nested multipart) is 400 naming what is wrong. The required and the allowed parts
come from the operation's multipart schema in the spec, so the spec stays the one statement of what a
request must carry. Temp files are removed on exit, also when the handler fails. This module must not
interpret part contents.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from pathlib import Path
from typing import BinaryIO

import attrs
from aiohttp import BodyPartReader, MultipartReader, hdrs, web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.multipart import content_disposition_filename, parse_content_disposition

from common.errors import BadRequest, PayloadTooLarge, UnsupportedMediaType
from common.openapi import OPERATION, check_form

_CHUNK = 256 * 1024
#: A text field is a name, a ref or a small JSON document; anything larger belongs in a file part.
MAX_FIELD_BYTES = 1024 * 1024

#: The spool folder of one upload (``<temp dir>/upload-*``); a killed process leaves it behind.
SPOOL_PREFIX = "upload-"


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
    _check_request(request, limits)
    workdir = await asyncio.to_thread(_make_workdir, temp_dir)
    try:
        form = MultipartForm()

        async def keep(part: BodyPartReader, name: str, room: int) -> int:
            return await _read_part(part, name, form, limits, workdir, room)

        await _each_part(request, limits, keep)
        _check_parts(request, [*form.fields, *form.files])
        yield form
    finally:
        await asyncio.to_thread(shutil.rmtree, workdir, ignore_errors=True)


async def read_parts(
    request: web.Request, *, limits: UploadLimits, part_cap: Callable[[str], int]
) -> dict[str, bytes]:
    """Every part in memory by name (the last of a repeated name wins), each within
    ``part_cap(name)`` bytes and all within ``limits.max_total_bytes``."""
    _check_request(request, limits)
    parts: dict[str, bytes] = {}

    async def keep(part: BodyPartReader, name: str, room: int) -> int:
        parts[name], size = await _read_capped(part, part_cap(name), room, None)
        return size

    await _each_part(request, limits, keep)
    _check_parts(request, parts)
    return parts


def _check_request(request: web.Request, limits: UploadLimits) -> None:
    """Refuse before reading: not a form (415), or a declared length over the total (413)."""
    # The raw header, not ``request.content_type``: aiohttp parses that with the email package,
    # which costs more than reading a small chart's whole form.
    media = request.headers.get(hdrs.CONTENT_TYPE, "").partition(";")[0]
    if media.strip().lower() != "multipart/form-data":
        raise UnsupportedMediaType("Content-Type must be multipart/form-data")
    if request.content_length is not None and request.content_length > limits.max_total_bytes:
        raise PayloadTooLarge(_too_large("request body", limits.max_total_bytes))


def _make_workdir(temp_dir: Path | None) -> Path:
    if temp_dir is not None:
        temp_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=SPOOL_PREFIX, dir=temp_dir))


#: What to do with one part: read it (``room`` bytes are left of the total), return its size.
PartKeeper = Callable[[BodyPartReader, str, int], Awaitable[int]]


class _FormReader(MultipartReader):
    """aiohttp's reader, less its look for a ``_charset_`` part before each part it hands out.

    That look parses the part's Content-Disposition afresh, escaping the header grammar's whole
    character table again each time (~0.1 ms a part, a fifth of a small chart upload's CPU on the
    event loop), and it misreads the part: any ``_charset_`` value was a 400 "Invalid HTTP
    header", one over 31 bytes a RuntimeError (a 500). A ``_charset_`` part (RFC 7578 4.6) only
    names the charset of text parts, and every text part here is read as UTF-8: it is skipped.
    The steps are aiohttp's own ``next``; the part and header parsing stay aiohttp's.
    """

    async def next(self) -> MultipartReader | BodyPartReader | None:
        if self.at_eof():
            return None
        await self._maybe_release_last_part()
        if self._at_bof:
            await self._read_until_first_boundary()
            self._at_bof = False
        else:
            await self._read_boundary()
        if self.at_eof():  # that was the closing boundary
            return None
        self._last_part = await self.fetch_next_part()
        return self._last_part


#: RFC 7578's charset declaration, a part that holds no data.
CHARSET_PART = "_charset_"


async def _each_part(request: web.Request, limits: UploadLimits, keep: PartKeeper) -> None:
    total = 0
    try:
        reader = _FormReader(request.headers, request.content)
        count = 0
        while (part := await reader.next()) is not None:
            count += 1
            if count > limits.max_parts:
                raise PayloadTooLarge(f"too many parts: at most {limits.max_parts} are accepted")
            if not isinstance(part, BodyPartReader):
                raise BadRequest("nested multipart bodies are not accepted")
            name, _ = disposition(part)
            if not name:
                raise BadRequest("every multipart part needs a name in Content-Disposition")
            room = limits.max_total_bytes - total
            if name == CHARSET_PART:  # read within a text field's cap like any part, then dropped
                total += (await _read_capped(part, MAX_FIELD_BYTES, room, None))[1]
            else:
                total += await keep(part, name, room)
    except (ValueError, HttpProcessingError) as exc:  # aiohttp's ways of saying "malformed"
        raise BadRequest(f"malformed multipart body: {_why(exc)}") from None


def disposition(part: BodyPartReader) -> tuple[str | None, str | None]:
    """The part's ``name`` and ``filename``, as ``part.name`` and ``part.filename`` read them."""
    return _disposition(part.headers.get(hdrs.CONTENT_DISPOSITION))


@functools.lru_cache(maxsize=256)
def _disposition(header: str | None) -> tuple[str | None, str | None]:
    # aiohttp parses the header afresh for each of name and filename, and each parse escapes its
    # whole character table again: a tenth of a small upload's cost. Clients send the same few
    # headers again and again, so each is parsed once.
    _, params = parse_content_disposition(header)
    return content_disposition_filename(params, "name"), content_disposition_filename(
        params, "filename"
    )


async def _read_part(
    part: BodyPartReader,
    name: str,
    form: MultipartForm,
    limits: UploadLimits,
    workdir: Path,
    room: int,
) -> int:
    media = part.headers.get("Content-Type", "text/plain")
    filename = disposition(part)[1]
    is_file = filename is not None or not media.startswith(("text/plain", "application/json"))
    if not is_file:
        data, _ = await _read_capped(part, MAX_FIELD_BYTES, room, None)
        try:
            form.fields[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest(f"part {name!r} is not UTF-8 text") from None
        return len(data)
    fd, raw_path = tempfile.mkstemp(dir=workdir)
    with os.fdopen(fd, "wb") as out:
        _, size = await _read_capped(part, limits.max_part_bytes, room, out)
    upload = UploadedFile(name, Path(raw_path), filename, media.split(";")[0].strip(), size)
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
            raise PayloadTooLarge(_too_large(f"part {disposition(part)[0]!r}", cap))
        if size > room:
            raise PayloadTooLarge("request body is larger than the limit for all parts together")
        if out is None:
            kept += chunk
        else:
            out.write(chunk)  # small sequential writes to a local temp file; see _CHUNK
    return bytes(kept), size


def _check_parts(request: web.Request, names: Collection[str]) -> None:
    op = request.get(OPERATION)
    if op is not None:
        check_form(op, names)


def _why(exc: Exception) -> str:
    """One line on what is wrong; aiohttp's header errors span lines and quote the raw header."""
    text = exc.message if isinstance(exc, HttpProcessingError) else str(exc)
    if text == "Reading after EOF":  # a part still open when the body ended
        return "the body ends before its closing boundary"
    return text.strip().splitlines()[0][:200] if text.strip() else type(exc).__name__


def _too_large(what: str, cap: int) -> str:
    return f"{what} is larger than the limit of {cap} bytes"
