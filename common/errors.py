"""One error hierarchy for the three services, and its RFC 9457 rendering.

Domain code raises these and knows nothing of HTTP; ``common.app`` installs the middleware that turns
them (and aiohttp's own 404/405/413) into ``application/problem+json``. Adapters translate third-party
exceptions into these at their boundary, with ``raise ... from exc``.

    WharfError (500)
    ├── BadRequest (400)            invalid-request
    │   └── ValidationFailed        one entry per bad field in ``errors``
    ├── Unauthorized (401)          credentials missing or wrong
    ├── Forbidden (403)             credentials fine, action not allowed
    ├── NotFound (404)
    ├── Conflict (409)
    ├── PayloadTooLarge (413)
    ├── UnsupportedMediaType (415)  a body of a Content-Type the operation does not take
    ├── Unprocessable (422)
    ├── TooManyRequests (429)       one client holds or asks too much; Retry-After says when
    ├── BadGateway (502)            an upstream we called failed or never answered
    └── ServiceUnavailable (503)

Every problem carries ``type``, ``title``, ``status``, ``detail``, ``instance``, ``code`` when the error
has one, and ``message`` equal to ``detail`` (the contracts show both body shapes; clients of either
work). This module must not log: the middleware in ``common.app`` decides what reaches the log.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any, ClassVar

PROBLEM_CONTENT_TYPE = "application/problem+json"


class WharfError(Exception):
    """Base of every error a Wharf service raises on purpose."""

    status: int = 500
    default_code: ClassVar[str | None] = None

    def __init_subclass__(cls, *, status: int | None = None, code: str | None = None) -> None:
        """An error is declared in its class line: ``class Gone(WharfError, status=410,
        code="gone"): ...``; a subclass keeps what it does not name."""
        super().__init_subclass__()
        if status is not None:
            cls.status = status
        if code is not None:
            cls.default_code = code

    def __init__(
        self,
        detail: str,
        *,
        code: str | None = None,
        extra: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.code = code if code is not None else self.default_code
        self.extra: dict[str, Any] = dict(extra or {})
        self.headers: dict[str, str] = dict(headers or {})

    @property
    def title(self) -> str:
        return HTTPStatus(self.status).phrase

    def to_problem(self, *, instance: str) -> dict[str, Any]:
        return problem_body(
            status=self.status,
            detail=self.detail,
            instance=instance,
            code=self.code,
            extra=self.extra,
        )


class BadRequest(WharfError, status=400, code="invalid-request"): ...


class ValidationFailed(BadRequest):
    """A request that breaks its OpenAPI schema; ``errors`` lists every bad field."""

    def __init__(self, errors: list[dict[str, str]]) -> None:
        fields = ", ".join(e["field"] for e in errors)
        super().__init__(f"invalid request: {fields}", extra={"errors": errors})
        self.errors = errors


class Unauthorized(WharfError, status=401, code="unauthorized"): ...


class Forbidden(WharfError, status=403, code="forbidden"): ...


class NotFound(WharfError, status=404, code="not-found"): ...


class Conflict(WharfError, status=409, code="conflict"): ...


class PayloadTooLarge(WharfError, status=413, code="payload-too-large"): ...


class UnsupportedMediaType(WharfError, status=415, code="unsupported-media-type"): ...


class Unprocessable(WharfError, status=422, code="unprocessable"): ...


class TooManyRequests(WharfError, status=429, code="too-many-requests"): ...


class BadGateway(WharfError, status=502, code="bad-gateway"): ...


class ServiceUnavailable(WharfError, status=503, code="service-unavailable"): ...


class UpstreamStatus(WharfError):
    """An upstream refusal whose own status is kept (a cluster's 403 stays 403, 422 stays 422)."""

    def __init__(self, status: int, detail: str, *, code: str | None = None) -> None:
        super().__init__(detail, code=code)
        self.status = status


def problem_type(status: int) -> str:
    """A stable, dereferenceable-looking type URI per status (RFC 9457 section 3.1.1)."""
    return f"https://wharf.dev/problems/{status}"


def problem_body(
    *,
    status: int,
    detail: str,
    instance: str,
    code: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    try:
        title = HTTPStatus(status).phrase
    except ValueError:
        title = "Error"
    body: dict[str, Any] = {
        "type": problem_type(status),
        "title": title,
        "status": status,
        "detail": detail,
        "instance": instance,
        "message": detail,
    }
    if code is not None:
        body["code"] = code
    for key, value in (extra or {}).items():
        body.setdefault(key, value)
    return body
