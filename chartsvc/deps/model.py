"""What a chart dependency is, and the errors resolving one can raise.

This module must not do I/O; it holds value objects and errors only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from common.errors import BadRequest, NotFound, PayloadTooLarge

MAX_ARCHIVE_BYTES = 100 * 1024 * 1024
MAX_DECOMPRESSED_BYTES = 100 * 1024 * 1024
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_ENTRIES = 50_000
MAX_DEPENDENCIES = 1_000

VersionsFor = Callable[[str, str], Awaitable[list[str]]]
OciTags = Callable[[str], Awaitable[list[str]]]


class BadChartArchive(BadRequest, code="invalid-chart"): ...


class ChartArchiveTooLarge(PayloadTooLarge, code="archive-too-large"): ...


class InvalidDependency(BadRequest, code="invalid-dependency"):
    """A dependency entry Helm would refuse to load or resolve."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"dependency {name!r} {reason}", extra={"dependency": name})
        self.dependency = name


class LocalDependencyRefused(InvalidDependency, code="local-dependency-refused"): ...


class UnknownRepositoryAlias(NotFound, code="unknown-repository"):
    def __init__(self, name: str, alias: str) -> None:
        detail = f"dependency {name!r} names repository {alias!r}, which is not configured"
        super().__init__(detail, extra={"dependency": name, "repository": alias})


class NoMatchingVersion(NotFound, code="no-matching-version"):
    """No published version satisfies one or more constraints (Helm: "can't get a valid version")."""

    def __init__(self, missing: list[tuple[str, str]]) -> None:
        listed = ", ".join(f"{name!r} ({constraint})" for name, constraint in missing)
        detail = f"no version satisfies the constraint of {len(missing)} dependency(ies): {listed}"
        unresolved = [{"name": n, "constraint": c} for n, c in missing]
        super().__init__(detail, extra={"unresolved": unresolved})
        self.missing = missing


@attrs.frozen
class Dependency:
    """Helm's ``chart.Dependency``; field order is Go's struct order, which the digest depends on.

    Helm 4.2 (the engine's SDK) has no ``depends-on``; newer Helm adds it last, omitempty. Charts
    that set it would hash differently there, so it is left out until the engine has it.
    """

    name: str
    version: str = ""
    repository: str = ""
    condition: str = ""
    tags: tuple[str, ...] = ()
    enabled: bool = False
    import_values: tuple[Any, ...] = ()
    alias: str = ""

    def go_fields(self) -> list[tuple[str, Any]]:
        """The fields json.Marshal writes: ``name`` and ``repository`` always, the rest omitempty."""
        fields: list[tuple[str, Any]] = [
            ("name", self.name),
            ("version", self.version),
            ("repository", self.repository),
            ("condition", self.condition),
            ("tags", list(self.tags)),
            ("enabled", self.enabled),
            ("import-values", list(self.import_values)),
            ("alias", self.alias),
        ]
        return [(k, v) for k, v in fields if k in ("name", "repository") or v]
