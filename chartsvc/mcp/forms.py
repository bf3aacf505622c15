"""Chart forms from tool arguments: the MCP door's counterpart of ``chartsvc.http.forms``.

A multipart operation's parts are its tool's arguments: a binary part (the ``chart`` archive) as
base64 text, a JSON part (``request``) as an object, a text part (``remote``) as a string. They
become the form the HTTP door would have read, under the same checks (``checked_form``): the archive
at most ``chartsvc.rest.max-upload-size`` bytes once decoded, other parts at most 1 MiB (413
``payload-too-large``), required and known parts, JSON parts against their schemas (400 naming the
field). An archive far over the cap is refused by its base64 length before any decoding; decoding
runs in a thread, since a large archive would hold the event loop. This module only decodes; it
never interprets an archive.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from collections.abc import Collection, Mapping
from typing import Any

from chartsvc.calls.form import ChartForm, checked_form, invalid, too_large
from chartsvc.mcp.schemas import base64_length
from common.openapi import Operation

#: Base64 as tools write it may be wrapped (76 characters a line, CRLF): room for that before the
#: exact check on the text without its line breaks.
_WRAPPING = 80 / 76


async def form_of(
    given: Mapping[str, Any], op: Operation, *, binary: Collection[str], cap: int
) -> ChartForm:
    """The form of ``op`` that the part arguments ``given`` stand for."""
    parts: dict[str, bytes] = {}
    for name, value in given.items():
        if value is None:  # as for parameters: an argument given as null is absent
            continue
        if name in binary:
            parts[name] = await _decoded(name, value, cap)
        elif name in op.multipart_json:
            parts[name] = json.dumps(value).encode("utf-8")
        elif isinstance(value, str):
            parts[name] = value.encode("utf-8")
        else:
            raise invalid(name, "must be a string")
    return checked_form(parts, op, cap=cap)


async def _decoded(name: str, value: Any, cap: int) -> bytes:
    if not isinstance(value, str):
        raise invalid(name, "must be a string: the file in base64")
    if len(value) > base64_length(cap) * _WRAPPING + 4:
        raise too_large(name, cap)
    return await asyncio.to_thread(_decode, name, value, cap)


def _decode(name: str, value: str, cap: int) -> bytes:
    text = "".join(value.split())
    if len(text) > base64_length(cap):
        raise too_large(name, cap)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise invalid(name, "is not valid base64 (RFC 4648 alphabet, with padding)") from None
