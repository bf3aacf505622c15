"""Errors of the OCI registry client, each naming the registry (never a credential).

A registry that fails, refuses our credentials or answers nonsense is an upstream problem for our
client: ``BadGateway`` (502) with a detail naming the registry host. An unknown repository, tag or
digest is ``NotFound`` (404); a malformed reference is ``BadRequest`` (400, see ``reference``).
"""

from __future__ import annotations

from common.errors import BadGateway, BadRequest, NotFound, PayloadTooLarge


class VersionConflict(BadRequest):
    """A reference's tag and a different ``version`` were both given (Helm refuses them too)."""

    default_code = "version-conflict"


class RegistryFailed(BadGateway):
    """The registry failed us; the detail names its host and why."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"OCI registry {host} {reason}", extra={"registry": host})
        self.host = host


class RegistryUnavailable(RegistryFailed, code="registry-unavailable"):
    """The registry (or its token service) could not be reached, timed out, or failed (5xx)."""


class RegistryAuthFailed(RegistryFailed, code="registry-auth-failed"):
    """The registry refused the configured credentials (or anonymous access) after the auth dance."""


class RegistryProtocolError(RegistryFailed, code="registry-protocol-error"):
    """An answer the distribution protocol does not allow (bad status, digest mismatch…)."""


class ChartNotInRegistry(NotFound, code="chart-not-found"):
    """The repository, tag or digest does not exist (or has no version matching a constraint)."""

    def __init__(self, ref: str, reason: str = "was not found") -> None:
        super().__init__(f"{ref} {reason}", extra={"ref": ref})
        self.ref = ref


class ChartTooLarge(PayloadTooLarge, code="archive-too-large"): ...
