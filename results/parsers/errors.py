"""The two ways a report upload can be refused, as members of the project's error hierarchy.

Parsers raise these and nothing else for bad input, so the ingest layer can turn any of them into
a 4xx problem without knowing XML, gzip or the formats. ``reason`` (in ``extra``) tells clients
which rule was broken; the message says where. This module must not know about HTTP.
"""

from __future__ import annotations

from common.errors import BadRequest, PayloadTooLarge


class InvalidReport(BadRequest, code="invalid-report"):
    """Unreadable, malformed, unsupported or dangerous report content (400)."""

    def __init__(self, detail: str, *, reason: str, line: int | None = None) -> None:
        extra: dict[str, object] = {"reason": reason}
        if line is not None:
            extra["line"] = line
        super().__init__(detail, extra=extra)
        self.reason = reason
        self.line = line


class ReportTooLarge(PayloadTooLarge, code="report-too-large"):
    """The report (after decompression) or its element count is over a configured limit (413)."""

    def __init__(self, detail: str, *, limit: int) -> None:
        super().__init__(detail, extra={"limit": limit})
        self.limit = limit


def require_root(tag: str, *, expected: str, report: str) -> None:
    """Refuse a document whose root element ``tag`` is not the ``expected`` one of a ``report``."""
    if tag != expected:
        raise InvalidReport(f"not a {report} report: root is <{tag}>", reason="unknown-format")
