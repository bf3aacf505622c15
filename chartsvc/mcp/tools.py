"""The tool set: one MCP tool per operation the served spec offers to MCP (``x-mcp``).

Name = operationId, description = the spec's summary plus its description, input and output
schemas from the spec (``chartsvc.mcp.schemas``), annotations from its ``x-mcp`` hints; an upload's
archive argument is base64 under the REST upload cap (``upload_cap``). Which tools
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
    upload_cap: int  # the largest archive a base64 argument may carry, decoded (as over REST)

    @property
    def name(self) -> str:
        return self.operation.operation_id


def build_tools(
    spec: Spec,
    declared: Mapping[str, operations.Operation],
    policy: AccessPolicy,
    implemented: Collection[str],
    *,
    upload_cap: int,
) -> Mapping[str, ToolDef]:
    """The tools offered under ``policy``, for operations that have an implementation;
    ``upload_cap`` is ``chartsvc.rest.max-upload-size``."""
    tools: dict[str, ToolDef] = {}
    for op_id, op in declared.items():
        if op.hints is None or op_id not in implemented:
            continue
        if op.mutating and not policy.mutating_enabled:
            continue
        tools[op_id] = _tool(op, op.hints, spec.operations[op_id], spec, upload_cap)
    return tools


def _tool(
    op: operations.Operation,
    hints: operations.Hints,
    compiled: Operation,
    spec: Spec,
    upload_cap: int,
) -> ToolDef:
    schema, arguments = input_schema(spec, compiled, upload_cap=upload_cap)
    tool = types.Tool(
        name=op.operation_id,
        title=op.summary,
        description=_description(op, compiled, arguments),
        input_schema=schema,
        output_schema=output_schema(spec, compiled),
        annotations=types.ToolAnnotations(
            title=op.summary,
            read_only_hint=hints.read_only,
            destructive_hint=hints.destructive,
            idempotent_hint=hints.idempotent,
        ),
    )
    return ToolDef(
        operation=op, compiled=compiled, arguments=arguments, tool=tool, upload_cap=upload_cap
    )


def _description(op: operations.Operation, compiled: Operation, arguments: Arguments) -> str:
    parts = [op.summary.rstrip(".") + "."]
    detail: Any = compiled.raw.get("description")
    if isinstance(detail, str) and detail.strip():
        parts.append(detail.strip())
    if arguments.form:
        parts.append(
            "The multipart form's parts are the arguments: "
            + ", ".join(f"`{n}` in base64" for n in sorted(arguments.binary))
            + "; JSON parts as objects, text parts as strings."
        )
    parts.append(f"Same as {op.method} {op.path} of the REST API.")
    return "\n\n".join(parts)
