"""Kubernetes ``Status`` errors: the one exception type the simulator raises on purpose.

Every refusal -- including "the simulator does not do this" -- is a :class:`KubeError` rendered as a
real ``metav1.Status`` body, so clients take the same code paths they take against a real cluster.
This module knows nothing of aiohttp; the server turns the exception into a response.
"""

from __future__ import annotations

from typing import Any

REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    501: "NotImplemented",
    504: "Timeout",
}


class KubeError(Exception):
    """A failure that the server answers with a ``Status`` object."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason if reason is not None else REASONS.get(code, "")
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        """The ``Status`` body, field for field as kube-apiserver writes it."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def _details(name: str, group: str, resource: str, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = resource
    details.update(extra)
    return details


def qualified(group: str, resource: str) -> str:
    return f"{resource}.{group}" if group else resource


def not_found(group: str, resource: str, name: str) -> KubeError:
    return KubeError(
        404,
        f'{qualified(group, resource)} "{name}" not found',
        details=_details(name, group, resource),
    )


def already_exists(group: str, resource: str, name: str) -> KubeError:
    return KubeError(
        409,
        f'{qualified(group, resource)} "{name}" already exists',
        reason="AlreadyExists",
        details=_details(name, group, resource),
    )


def conflict(group: str, resource: str, name: str, why: str) -> KubeError:
    return KubeError(
        409,
        f'Operation cannot be fulfilled on {qualified(group, resource)} "{name}": {why}',
        details=_details(name, group, resource),
    )


def stale(group: str, resource: str, name: str) -> KubeError:
    return conflict(
        group,
        resource,
        name,
        "the object has been modified; please apply your changes to the latest version "
        "and try again",
    )


def invalid(
    group: str, kind: str, name: str, causes: list[dict[str, str]], *, group_kind: str = ""
) -> KubeError:
    """422 Invalid; ``causes`` are ``{"reason", "message", "field"}`` like field.ErrorList."""
    # field.ErrorList.ToAggregate: duplicates dropped, several errors bracketed.
    errors = list(
        dict.fromkeys(
            f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes
        )
    )
    text = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    label = f"{kind}.{group}" if group else kind
    return KubeError(
        422,
        f'{label} "{name}" is invalid: {text}',
        details={
            **({"name": name} if name else {}),  # omitempty: request options have no name
            **({"group": group} if group else {}),
            "kind": kind,
            "causes": causes,
        },
    )


def bad_request(message: str) -> KubeError:
    return KubeError(400, message)


def method_not_allowed(
    message: str = "the server does not allow this method on the requested resource",
) -> KubeError:
    return KubeError(405, message)


def expired(message: str) -> KubeError:
    return KubeError(410, message, reason="Expired")


def gone(message: str) -> KubeError:
    return KubeError(410, message, reason="Gone")


def unsupported(what: str) -> KubeError:
    """The simulator refusing loudly: something a real server does that this one does not."""
    return KubeError(
        501, f"not implemented by the Wharf cluster simulator: {what}", reason="NotImplemented"
    )
