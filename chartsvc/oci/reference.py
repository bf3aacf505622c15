"""``oci://`` references: parsing, validation, and Helm's tag spelling of versions.

A reference names a registry host, a repository path and optionally a tag or digest
(``oci://host[:port]/path/chart[:tag][@sha256:…]``). Names follow the OCI distribution grammar, so
nothing we build from them can smuggle path segments or query strings into registry URLs. This module
must not do I/O.
"""

from __future__ import annotations

import re

import attrs

from common.errors import BadRequest
from common.netguard import HOST_PATTERN, PORT_PATTERN
from common.redact import redacted

SCHEME = "oci://"
# OCI distribution-spec grammar for repository names, tags and digests.
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
_REPOSITORY = re.compile(rf"{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_DIGEST = re.compile(r"sha256:[a-f0-9]{64}")
# A registry host as a URL names it (an IPv6 literal that is none would break the URL built from it).
_HOST = re.compile(rf"{HOST_PATTERN}(?::{PORT_PATTERN})?")
MAX_REPOSITORY_LENGTH = 255
#: The references :meth:`Reference.parse` takes, as one pattern (ECMA-262 and Python alike): the
#: spec's ``ChartRef`` is made of it. A repository path may end in slashes (dropped).
#: Without a tag or digest (``DESTINATION``), it is where a chart is pushed: the tag is its version.
DESTINATION = (
    rf"oci://{_HOST.pattern}/(?![a-z0-9._/-]{{{MAX_REPOSITORY_LENGTH + 1}}})"
    rf"{_REPOSITORY.pattern}/*"
)
PATTERN = rf"{DESTINATION}(?::{_TAG.pattern})?(?:@{_DIGEST.pattern})?"


class InvalidReference(BadRequest, code="invalid-oci-reference"):
    """A string that is not an ``oci://`` chart reference."""

    def __init__(self, ref: str, reason: str) -> None:
        super().__init__(f"{redacted(ref)[:300]!r} is not a valid OCI reference: {reason}")
        self.ref = ref


@attrs.frozen
class Reference:
    """A parsed reference: ``host`` includes any port; ``repository`` is the path in the registry."""

    host: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @classmethod
    def parse(cls, ref: str, *, allow_tag: bool = True) -> Reference:
        if not ref.startswith(SCHEME):
            raise InvalidReference(ref, "it must start with oci://")
        host, slash, rest = ref.removeprefix(SCHEME).partition("/")
        if not slash or not _HOST.fullmatch(host):
            raise InvalidReference(ref, "it must name a registry host and a repository")
        repository, tag, digest = _split_tag_and_digest(rest)
        if not allow_tag and (tag or digest):
            raise InvalidReference(ref, "a push destination takes no tag or digest")
        if not _REPOSITORY.fullmatch(repository) or len(repository) > MAX_REPOSITORY_LENGTH:
            raise InvalidReference(ref, "the repository path must be lowercase a-z, 0-9, . _ - /")
        if tag is not None and not _TAG.fullmatch(tag):
            raise InvalidReference(ref, f"{tag[:130]!r} is not a valid tag")
        if digest is not None and not _DIGEST.fullmatch(digest):
            raise InvalidReference(ref, "only sha256 digests are supported")
        return cls(host=host.lower(), repository=repository, tag=tag, digest=digest)

    def child(self, name: str) -> Reference:
        """The repository ``name`` under this one (where ``helm push`` puts a chart)."""
        return attrs.evolve(self, repository=f"{self.repository}/{name}", tag=None, digest=None)

    def __str__(self) -> str:
        text = f"{SCHEME}{self.host}/{self.repository}"
        text += f":{self.tag}" if self.tag else ""
        return text + (f"@{self.digest}" if self.digest else "")


def _split_tag_and_digest(rest: str) -> tuple[str, str | None, str | None]:
    path, at, digest = rest.partition("@")
    last = path.rsplit("/", 1)[-1]
    tag: str | None = None
    if ":" in last:
        path, _, tag = path.rpartition(":")
    return path.rstrip("/"), tag, digest if at else None


def version_to_tag(version: str) -> str:
    """Helm stores ``+`` (SemVer build metadata) as ``_``: tags cannot hold ``+``."""
    return version.replace("+", "_")


def tag_to_version(tag: str) -> str:
    return tag.replace("_", "+")
