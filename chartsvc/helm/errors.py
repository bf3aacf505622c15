"""Helm's failures translated into our errors: the one translator of the Helm adapter.

Helm hands a cluster's refusal back as text: the Kubernetes status code is gone by then, but the
API server's messages have stable shapes (``<kind> "<name>" is forbidden: ...``, ``... is invalid:
...``, ``admission webhook "..." denied the request``), and so do dial errors. The status is
recovered from those shapes, so an RBAC refusal stays 403, an invalid object 422 and an object the
server cannot decode (an unknown field, say) 400, while a cluster that cannot be reached (or
refuses the service's own credentials) is a 502. A chart Helm cannot load or render is the caller's
400. Upstream text is truncated, never echoed whole (it can quote manifests back), and loses every
absolute file path first: the caller must not learn where the server keeps its files. A failure
none of this explains is a 500 whose cause goes to the log, not to the caller.

This module knows nothing of HTTP and imports ``helm_python`` only for its exception types.
"""

from __future__ import annotations

import logging
import re

import helm_python as helm

from chartsvc.clusters import ReleaseRef
from common.errors import (
    BadGateway,
    BadRequest,
    Conflict,
    NotFound,
    PayloadTooLarge,
    Unprocessable,
    UpstreamStatus,
    WharfError,
)

logger = logging.getLogger(__name__)

DETAIL_LIMIT = 1000


class ChartInvalid(BadRequest, code="invalid-chart"):
    """The bytes are not a loadable chart archive."""


class ProvenanceFailed(BadRequest, code="provenance-failed"):
    """A chart's provenance did not check out; ``reason`` says why, in a word."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"provenance check failed: {detail}", extra={"reason": reason})
        self.reason = reason


#: Helm's (pkg/provenance, ProtonMail go-crypto) words for each way a verification fails.
_PROVENANCE_REASONS = (
    ("sha256 sum does not match", "digest-mismatch"),
    ("signature made by unknown entity", "unknown-key"),
    ("invalid signature", "bad-signature"),
    ("signature block not found", "invalid-provenance"),
)


def provenance_failure(exc: helm.HelmError) -> ProvenanceFailed:
    """Our error for Helm's refusal to verify a chart."""
    detail = without_paths(str(exc))[:DETAIL_LIMIT]
    for words, reason in _PROVENANCE_REASONS:
        if words in detail:
            return ProvenanceFailed(reason, detail)
    return ProvenanceFailed("invalid-provenance", detail)


class RenderFailed(BadRequest, code="render-failed"):
    """The chart loaded but its templates or the given values do not render."""


class RenderTimedOut(Unprocessable, code="render-timeout"):
    """The render ran past its time limit (a template looping for minutes) and was stopped."""


class RenderTooLarge(PayloadTooLarge, code="render-too-large"):
    """The render's output or its memory passed its bound and was refused."""


class HelmFailed(WharfError, code="helm-failed"):
    """Helm failed for a reason that is not the caller's input (logged with its cause)."""


class ReleaseNotFound(NotFound, code="release-not-found"):
    def __init__(self, namespace: str, name: str) -> None:
        super().__init__(f"release {name!r} not found in namespace {namespace!r}")


class RevisionNotFound(NotFound, code="revision-not-found"): ...


class NamespaceNotFound(NotFound, code="namespace-not-found"): ...


class ReleaseExists(Conflict, code="release-exists"):
    def __init__(self, namespace: str, name: str) -> None:
        super().__init__(
            f"release {name!r} already exists in namespace {namespace!r}; upgrade it or "
            "uninstall it first"
        )


class ClusterUnreachable(BadGateway, code="cluster-unreachable"): ...


class ReleaseFailed(WharfError, code="release-failed"):
    """Helm failed on a release for a reason none of the shapes below names (a hook failed)."""


#: What to do about a release left pending-install, -upgrade or -rollback by a writer that was
#: killed mid-write (Helm's own advice; nothing clears the state by itself).
RECOVERY = (
    "if no other Helm client is writing it (one was stopped mid-write), recover it: roll a "
    "pending upgrade or rollback back (POST .../rollback), uninstall a pending install "
    "(DELETE the release), then try again"
)

# (pattern, status, code): the first match wins; statuses are the API server's own.
_REFUSALS: tuple[tuple[re.Pattern[str], int, str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), status, code)
    for pattern, status, code in (
        (r"\bis forbidden\b|because it is being terminated", 403, "cluster-forbidden"),
        (r"admission webhook .* denied the request|denied request", 422, "cluster-admission"),
        (r"\bis invalid\b", 422, "cluster-invalid"),
        # a manifest the API server cannot decode: an unknown field under server-side apply or
        # fieldValidation=Strict, a value of the wrong type
        (
            r"field not declared in schema|strict decoding error|cannot be handled as a",
            400,
            "cluster-bad-request",
        ),
        (r"already exists|cannot be imported into the current release", 409, "cluster-conflict"),
        (r"the object has been modified", 409, "cluster-conflict"),
        (r"context deadline exceeded|timed out waiting", 504, "cluster-timeout"),
    )
)
_UNREACHABLE = re.compile(
    r"connection refused|no such host|i/o timeout|dial tcp|cluster unreachable|connection reset"
    r"|tls: |x509: |EOF$|server has asked for the client to provide credentials|Unauthorized",
    re.IGNORECASE,
)
#: Server-side apply refused fields another manager owns (``kubectl scale``'s replicas).
_APPLY_CONFLICT = re.compile(r"Apply failed with \d+ conflicts?")
_BUSY = re.compile(r"another operation \(.*\) is in progress")
_MISSING_NAMESPACE = re.compile(r'namespaces "([^"]+)" not found')
_MISSING_REVISION = re.compile(r"release has no (\d+) version")
# An absolute file path: "/" where a word cannot go on (start, space, quote, bracket, "=") and at
# least two segments. URLs ("https://h/p") and API groups ("apps/v1") do not start that way.
_PATH = re.compile(r"(?<![\w.:/~-])/(?:[^\s/'\"`():;,]+/)+")


def without_paths(text: str) -> str:
    """``text`` with every absolute file path cut to its last segment (a file name says enough)."""
    return _PATH.sub("", text)


def translate(exc: helm.HelmError, release: ReleaseRef | None = None) -> WharfError:
    """Our error for a Helm failure, on ``release`` when the call worked on one."""
    detail = without_paths(str(exc))[:DETAIL_LIMIT]
    if isinstance(exc, helm.HelmChartLoadError | helm.HelmChartInvalidError):
        return ChartInvalid(f"invalid chart archive: {detail}")
    if isinstance(exc, helm.HelmValuesError | helm.HelmRenderError):
        return RenderFailed(f"chart failed to render: {detail}")
    if isinstance(exc, helm.HelmInvalidArgError):
        return BadRequest(detail)
    if release is None:
        logger.error("helm failed (%s): %s", type(exc).__name__, detail)
        return HelmFailed("the Helm engine failed; the cause is in the service's log")
    if isinstance(exc, helm.HelmNotFoundError):
        return ReleaseNotFound(release.namespace, release.name)
    if isinstance(exc, helm.HelmKubeError):
        return ClusterUnreachable(f"cluster {release.target.name!r} cannot be reached: {detail}")
    return _from_text(detail, release)


def _from_text(detail: str, release: ReleaseRef) -> WharfError:
    cluster, namespace, name = release.target.name, release.namespace, release.name
    if "cannot reuse a name that is still in use" in detail:
        return ReleaseExists(namespace, name)
    if _BUSY.search(detail):  # someone else (the helm CLI, say) is writing this release
        return Conflict(f"release {name!r} is busy: {detail}; {RECOVERY}", code="release-busy")
    if _APPLY_CONFLICT.search(detail):
        return Conflict(
            f"cluster {cluster!r} refused: {detail}; another manager changed fields of the "
            "release's objects: send forceConflicts: true to take them back, or force: true to "
            "replace the objects with the chart's",
            code="apply-conflict",
        )
    if "has no deployed releases" in detail:
        return ReleaseNotFound(namespace, name)
    revision = _MISSING_REVISION.search(detail)
    if revision is not None:
        return RevisionNotFound(f"release {name!r} has no revision {revision.group(1)}")
    missing = _MISSING_NAMESPACE.search(detail)
    if missing is not None:
        return NamespaceNotFound(f"namespace {missing.group(1)!r} not found")
    for pattern, status, code in _REFUSALS:
        if pattern.search(detail):
            return UpstreamStatus(status, f"cluster {cluster!r} refused: {detail}", code=code)
    if _UNREACHABLE.search(detail):
        return ClusterUnreachable(f"cluster {cluster!r} cannot be reached: {detail}")
    logger.warning("helm failed on release %s/%s: %s", namespace, name, detail)
    return ReleaseFailed(f"helm failed on release {name!r}: {detail}")
