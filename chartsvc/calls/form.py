"""A read multipart form: the ``chart`` archive part and small text or JSON parts, by name.

``chartsvc.http.forms`` reads it off the request (under the upload caps); the calls of multipart
operations read their parts from it. This module only decodes parts; it never interprets an archive.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from common.errors import ValidationFailed

ARCHIVE_PART = "chart"


@attrs.frozen
class ChartForm:
    parts: dict[str, bytes]

    def archive(self) -> bytes:
        data = self.parts.get(ARCHIVE_PART)
        if not data:
            raise invalid(ARCHIVE_PART, "must be a non-empty file part (the chart .tgz)")
        return data

    def text(self, name: str) -> str | None:
        data = self.parts.get(name)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise invalid(name, "must be UTF-8 text") from None

    def json_object(self, name: str = "request") -> dict[str, Any]:
        """The JSON object in part ``name`` ({} when absent); the HTTP door has checked it against
        the part's schema in the spec."""
        text = self.text(name)
        if text is None or not text.strip():
            return {}
        try:
            body = json.loads(text)
        except ValueError:
            raise invalid(name, "is not valid JSON") from None
        if not isinstance(body, dict):
            raise invalid(name, "must be a JSON object")
        return body


def invalid(field: str, message: str) -> ValidationFailed:
    return ValidationFailed([{"in": "body", "field": field, "message": message}])
