"""The tool set: one MCP tool per operation of ``chartsvc.operations`` that the served spec holds.

Name = operationId, description = the table's summary plus the spec's description, input and output
schemas from the spec (``chartsvc.mcp.schemas``), annotations from the table's hints. Which tools
exist follows the access policy alone: mutating tools only when mutations are enabled (FULL mode
with a key), whatever the HTTP access interceptor setting says, so an agent never sees a write it
may not make. An operation the spec does not serve (the release group without a cluster) has no
tool. This module decides what is offered; it runs nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import attrs
import mcp.types as types

from chartsvc import operations
from chartsvc.access import AccessPolicy
from chartsvc.mcp.schemas import Arguments, input_schema, output_schema
from common.openapi import Operation, Spec


@attrs.frozen
class ToolDef:
    operation: operations.Operation
    compiled: Operation
    arguments: Arguments
    tool: types.Tool

    @property
    def name(self) -> str:
        return self.operation.operation_id


def build_tools(
    spec: Spec, policy: AccessPolicy, implemented: Collection[str]
) -> Mapping[str, ToolDef]:
    """The tools offered under ``policy``, for operations that have an implementation."""
    tools: dict[str, ToolDef] = {}
    for op in operations.OPERATIONS:
        compiled = spec.operations.get(op.operation_id)
        if compiled is None or not op.tool or op.operation_id not in implemented:
            continue
        if op.mutating and not policy.mutating_enabled:
            continue
        tools[op.operation_id] = _tool(op, compiled, spec)
    return tools


def _tool(op: operations.Operation, compiled: Operation, spec: Spec) -> ToolDef:
    schema, arguments = input_schema(spec, compiled)
    tool = types.Tool(
        name=op.operation_id,
        title=op.summary,
        description=_description(op, compiled),
        input_schema=schema,
        output_schema=output_schema(spec, compiled),
        annotations=types.ToolAnnotations(
            title=op.summary,
            read_only_hint=op.hints.read_only,
            destructive_hint=op.hints.destructive,
            idempotent_hint=op.hints.idempotent,
        ),
    )
    return ToolDef(operation=op, compiled=compiled, arguments=arguments, tool=tool)


def _description(op: operations.Operation, compiled: Operation) -> str:
    parts = [op.summary.rstrip(".") + "."]
    detail: Any = compiled.raw.get("description")
    if isinstance(detail, str) and detail.strip():
        parts.append(detail.strip())
    parts.append(f"Same as {op.method} {op.path} of the REST API.")
    return "\n\n".join(parts)
