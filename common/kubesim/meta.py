"""Small value types shared by the write paths: write options and the server clock."""

from __future__ import annotations

import datetime

import attrs

# Namespaces a real cluster refuses to delete.
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")


def now() -> str:
    """The current time as Kubernetes writes timestamps (RFC 3339, seconds, UTC)."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@attrs.frozen
class WriteOptions:
    """What every write carries besides the object: who writes, and whether to persist."""

    manager: str
    dry_run: bool = False
    subresource: str = ""
