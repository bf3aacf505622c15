"""The chart service's operations as ``spec/chartsvc*.yaml`` declares them, read from the loaded spec.

Each operation in the spec carries its ``summary``, its group (its one ``tag``), ``x-mutating`` and
``x-mcp`` (``false`` for an HTTP-only operation, otherwise the MCP tool annotations
``readOnlyHint``/``destructiveHint``/``idempotentHint`` and ``progress`` for a long-running one);
a mutating operation also lists ``security`` and the 401/403 responses, and every operation the
shared 400/404/500. :func:`declared` checks all of that and refuses a spec that breaks it, so the
file is exactly the contract served. Everything that must agree on "is this a write?" reads the
result: the access gate (``chartsvc.gate``) and the MCP tool list (``chartsvc.mcp.tools``). This
module knows nothing of aiohttp.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from common.openapi import Spec

SHARED_RESPONSES = frozenset({"400", "404", "500"})
GATE_RESPONSES = frozenset({"401", "403"})
_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint")


@attrs.frozen
class Hints:
    """What an agent may assume about an operation (the MCP tool annotations)."""

    read_only: bool
    destructive: bool  # false: the operation only adds to what exists
    idempotent: bool  # repeating the same call changes nothing more


@attrs.frozen
class Operation:
    operation_id: str
    method: str
    path: str  # relative to the base path, as in the spec
    group: str
    summary: str
    mutating: bool
    # None: HTTP-only (a host's own spec may keep an operation off MCP). Archives in and out are
    # base64 over MCP (``chartsvc.mcp.forms``), so every operation of Wharf's spec is a tool.
    hints: Hints | None
    progress: bool = False  # long-running: the tool reports MCP progress while it works

    @property
    def tool(self) -> bool:
        return self.hints is not None


class DeclarationError(ValueError):
    """The spec does not declare an operation the way this module requires."""


def declared(spec: Spec) -> Mapping[str, Operation]:
    """Every operation of ``spec`` by operationId; DeclarationError names the first bad one."""
    return {
        op_id: _read(op_id, op.method, op.path, op.raw) for op_id, op in spec.operations.items()
    }


def mutating(operations: Mapping[str, Operation]) -> frozenset[str]:
    return frozenset(op_id for op_id, op in operations.items() if op.mutating)


def _read(op_id: str, method: str, path: str, raw: Mapping[str, Any]) -> Operation:
    def fail(why: str) -> DeclarationError:
        return DeclarationError(f"{method} {path} ({op_id}): {why}")

    summary, tags, is_mutating = raw.get("summary"), raw.get("tags"), raw.get("x-mutating")
    if not isinstance(summary, str) or not summary.strip():
        raise fail("needs a summary")
    if not (isinstance(tags, list) and len(tags) == 1 and isinstance(tags[0], str)):
        raise fail("needs exactly one tag, its group")
    if not isinstance(is_mutating, bool):
        raise fail("needs x-mutating: true or false")
    responses = set(raw.get("responses", {}))
    wanted = SHARED_RESPONSES | (GATE_RESPONSES if is_mutating else frozenset())
    if not wanted <= responses:
        raise fail(f"needs the responses {', '.join(sorted(wanted - responses))}")
    if is_mutating != bool(raw.get("security")) or (responses >= GATE_RESPONSES) != is_mutating:
        raise fail("security and 401/403 belong to exactly the mutating operations")
    hints, progress = _mcp(raw.get("x-mcp"), fail)
    if hints is not None and hints.read_only and is_mutating:
        raise fail("a mutating operation cannot be readOnlyHint")
    return Operation(op_id, method, path, tags[0], summary, is_mutating, hints, progress)


def _mcp(node: Any, fail: Callable[[str], DeclarationError]) -> tuple[Hints | None, bool]:
    if node is False:
        return None, False
    if not isinstance(node, Mapping) or set(node) - {*_HINTS, "progress"}:
        raise fail(f"x-mcp is false or a mapping of {', '.join(_HINTS)} and progress")
    read_only, destructive, idempotent = (node.get(name) for name in _HINTS)
    progress = node.get("progress", False)
    if not (
        isinstance(read_only, bool)
        and isinstance(destructive, bool)
        and isinstance(idempotent, bool)
        and isinstance(progress, bool)
    ):
        raise fail(f"x-mcp needs {', '.join(_HINTS)} (and progress) as booleans")
    return Hints(read_only, destructive, idempotent), progress
