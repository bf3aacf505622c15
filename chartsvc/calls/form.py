"""A read multipart form: the ``chart`` archive part and small text or JSON parts, by name.

Both doors build it with :func:`checked_form`, so a form is held to the same limits and schema
whichever way it came: ``chartsvc.http.forms`` from a multipart request, ``chartsvc.mcp.forms`` from a
tool call's arguments (the archive in base64). The calls of multipart operations read their parts
from it. This module only decodes parts; it never interprets an archive.
"""

from __future__ import annotations

from typing import Any

import attrs

from common import documents
from common.errors import PayloadTooLarge, ValidationFailed
from common.openapi import Operation, check_form, schema_errors, whole_integers

ARCHIVE_PART = "chart"
MAX_TEXT_BYTES = (
    1024 * 1024
)  # a part other than the archive: a name, a URL or a small JSON document


@attrs.frozen
class ChartForm:
    parts: dict[str, bytes]
    #: JSON parts already read and checked against their schemas, by name.
    checked: dict[str, dict[str, Any]] = attrs.field(factory=dict)

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
        if name in self.checked:
            return self.checked[name]
        text = self.text(name)
        if text is None or not text.strip():
            return {}
        try:
            body = documents.load_json(text)
        except ValueError as exc:
            raise invalid(name, str(exc)) from None
        if not isinstance(body, dict):
            raise invalid(name, "must be a JSON object")
        return body


def checked_form(parts: dict[str, bytes], op: Operation | None, *, cap: int) -> ChartForm:
    """``parts`` as a form, each within its limit (413: ``cap`` bytes for the archive,
    ``MAX_TEXT_BYTES`` for the others); with the operation, also its required and known parts and
    its JSON parts against their schemas (400 naming each field)."""
    for name, data in parts.items():
        limit = cap if name == ARCHIVE_PART else MAX_TEXT_BYTES
        if len(data) > limit:
            raise too_large(name, limit)
    form = ChartForm(parts)
    if op is None:
        return form
    check_form(op, parts)
    objects = {name: form.json_object(name) for name in op.multipart_json if name in parts}
    errors = [
        error
        for name, validator in op.multipart_json.items()
        if name in objects
        for error in schema_errors(validator, objects[name], prefix=name)
    ]
    if errors:
        raise ValidationFailed(errors)
    for name, validator in op.multipart_json.items():
        if name in objects:  # 440.0 where an integer is asked for becomes 440, as in a JSON body
            form.checked[name] = whole_integers(validator, objects[name])
    return form


def too_large(part: str, limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"part {part[:50]!r} is larger than the limit of {limit} bytes")


def invalid(field: str, message: str) -> ValidationFailed:
    return ValidationFailed([{"in": "body", "field": field, "message": message}])
