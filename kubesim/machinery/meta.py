"""Small value types shared by the write paths: write options and the server clock."""

from __future__ import annotations

import datetime

import attrs

# Namespaces a real cluster refuses to delete.
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")


def now(offset: float = 0) -> str:
    """The time (plus ``offset`` seconds) as Kubernetes writes timestamps (RFC 3339, UTC)."""
    moment = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=offset)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@attrs.frozen
class WriteOptions:
    """What every write carries besides the object: who writes, and whether to persist."""

    manager: str
    dry_run: bool = False
    subresource: str = ""
