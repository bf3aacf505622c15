"""The tool set without a transport: parity with the spec's operations, schemas, policy, progress."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest

from chartsvc.access import AccessPolicy
from chartsvc.app import load_operations, load_spec
from chartsvc.calls import CALLS
from chartsvc.mcp.progress import with_progress
from chartsvc.mcp.schemas import SchemaError, inline, input_schema
from chartsvc.mcp.tools import build_tools
from chartsvc.settings import AccessMode
from common.openapi import Spec

DECLARED = load_operations(releases=True)
TOOL_OPERATIONS = {op_id for op_id, op in DECLARED.items() if op.tool}
CAP = 1000


def is_mutating(op_id: str) -> bool:
    return DECLARED[op_id].mutating


def test_every_operation_has_a_call_and_every_call_an_operation() -> None:
    assert set(CALLS) == set(DECLARED)


def test_every_operation_is_a_tool() -> None:
    assert set(DECLARED) == TOOL_OPERATIONS


def test_upload_tools_take_the_form_parts_with_the_archive_in_base64() -> None:
    spec = load_spec(releases=True)
    tools = build_tools(spec, DECLARED, AccessPolicy(AccessMode.FULL, "k"), CALLS, upload_cap=CAP)
    uploads = {name for name, tool in tools.items() if tool.arguments.form}
    assert uploads == {
        "installReleaseUpload",
        "upgradeReleaseUpload",
        "templateChartUpload",
        "lintChartUpload",
        "packageChartUpload",
        "pushChart",
        "verifyChartUpload",
    }
    for name in uploads:
        schema = tools[name].tool.input_schema
        chart = schema["properties"]["chart"]
        assert (chart["type"], chart["contentEncoding"]) == ("string", "base64"), name
        assert chart["contentMediaType"] == "application/gzip"
        assert chart["maxLength"] == 1336  # 1000 bytes in padded base64
        assert "chart" in schema["required"]
        signed = {"verifyChartUpload", "installReleaseUpload", "upgradeReleaseUpload"}
        provenance = {"provenance"} if name in signed | {"templateChartUpload"} else set()
        assert tools[name].arguments.binary == {"chart"} | provenance
        assert "`chart` in base64" in (tools[name].tool.description or "")
    install = tools["installReleaseUpload"].tool.input_schema
    assert set(install["properties"]) == {"chart", "provenance", "request"}
    assert install["properties"]["request"]["additionalProperties"] is False
    assert "releaseName" in install["properties"]["request"]["required"]
    upgrade = tools["upgradeReleaseUpload"].tool.input_schema
    assert set(upgrade["properties"]) == {"name", "namespace", "chart", "provenance", "request"}
    push = tools["pushChart"].tool.input_schema
    assert push["required"] == ["chart", "remote"]
    assert push["properties"]["remote"]["type"] == "string"


@pytest.mark.parametrize(
    ("policy", "writes"),
    [
        (AccessPolicy(AccessMode.READ_ONLY), False),
        (AccessPolicy(AccessMode.READ_ONLY, "key"), False),
        (AccessPolicy(AccessMode.FULL), False),
        (AccessPolicy(AccessMode.FULL, "   "), False),  # a blank key is no key
        (AccessPolicy(AccessMode.FULL, "key"), True),
    ],
)
def test_mutating_tools_exist_only_where_mutations_are_enabled(
    policy: AccessPolicy, writes: bool
) -> None:
    spec = load_spec(releases=True)
    tools = build_tools(spec, DECLARED, policy, CALLS, upload_cap=CAP)
    mutating = {name for name in tools if is_mutating(name)}
    assert mutating == ({n for n in TOOL_OPERATIONS if is_mutating(n)} if writes else set())
    assert set(tools) - mutating == {n for n in TOOL_OPERATIONS if not is_mutating(n)}


def test_without_a_cluster_there_are_no_release_tools() -> None:
    tools = build_tools(
        load_spec(), load_operations(), AccessPolicy(AccessMode.FULL, "key"), CALLS, upload_cap=CAP
    )
    assert tools
    assert not {name for name in tools if DECLARED[name].group == "releases"}


def test_schemas_are_self_contained_and_name_the_spec_fields() -> None:
    spec = load_spec(releases=True)
    tools = build_tools(spec, DECLARED, AccessPolicy(AccessMode.FULL, "key"), CALLS, upload_cap=CAP)
    assert set(tools) == TOOL_OPERATIONS
    for name, tool in tools.items():
        schema = tool.tool.input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert "$ref" not in json.dumps(schema), name
        assert schema["additionalProperties"] is False
        assert set(schema["properties"]) == set(tool.arguments.locations), name
        for argument, where in tool.arguments.locations.items():
            assert where in ("path", "query", "body", "part")
            if where in ("path", "query"):
                assert argument in {p.name for p in tool.compiled.params}, (name, argument)
            if where == "part":
                assert argument in (tool.compiled.multipart_parts or ()), (name, argument)
        if tool.tool.output_schema is not None:
            jsonschema.Draft202012Validator.check_schema(tool.tool.output_schema)
            assert tool.tool.output_schema["type"] == "object"
        annotations = tool.tool.annotations
        assert annotations is not None
        hints = tool.operation.hints
        assert hints is not None
        assert annotations.read_only_hint is hints.read_only
        assert not (annotations.read_only_hint and is_mutating(name))


def test_reference_cycles_and_name_clashes_are_refused() -> None:
    document: dict[str, Any] = {
        "components": {"schemas": {"A": {"$ref": "#/components/schemas/A"}}}
    }
    with pytest.raises(SchemaError, match="cycle"):
        inline({"$ref": "#/components/schemas/A"}, document)
    spec = Spec.from_document(
        {
            "openapi": "3.1.0",
            "paths": {
                "/x/{name}": {
                    "post": {
                        "operationId": "clash",
                        "parameters": [
                            {
                                "name": "name",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string"},
                            }
                        ],
                        "requestBody": {
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {"name": {"type": "string"}},
                                    }
                                }
                            }
                        },
                        "responses": {"200": {"description": "ok"}},
                    }
                }
            },
        }
    )
    with pytest.raises(SchemaError, match="both a path and a body field"):
        input_schema(spec, spec.operations["clash"], upload_cap=CAP)


async def test_progress_starts_ticks_and_ends_at_its_total() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def report(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async def work() -> str:
        await asyncio.sleep(0.05)
        return "done"

    assert await with_progress(work(), report, what="Install a chart", interval=0.01) == "done"
    assert seen[0] == (0.0, None, "Install a chart: started")
    assert len(seen) >= 3  # at least one tick while it ran
    assert [p for p, _, _ in seen] == sorted({p for p, _, _ in seen})  # strictly increasing
    assert seen[-1][0] == seen[-1][1]
    assert seen[-1][2] == "Install a chart: done"


async def test_a_client_that_takes_no_progress_does_not_fail_the_work() -> None:
    async def report(progress: float, total: float | None, message: str | None) -> None:
        raise ConnectionResetError("gone")

    async def work() -> int:
        await asyncio.sleep(0.02)
        return 7

    assert await with_progress(work(), report, what="x", interval=0.005) == 7


async def test_a_cancelled_call_cancels_its_work() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def report(progress: float, total: float | None, message: str | None) -> None:
        return None

    async def work() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    call = asyncio.ensure_future(with_progress(work(), report, what="x", interval=0.01))
    await started.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert cancelled.is_set()


async def test_work_errors_pass_through() -> None:
    async def report(progress: float, total: float | None, message: str | None) -> None:
        return None

    async def work() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await with_progress(work(), report, what="x")


def test_release_tools_take_helms_write_options() -> None:
    tools = build_tools(
        load_spec(releases=True),
        DECLARED,
        AccessPolicy(AccessMode.FULL, "k"),
        CALLS,
        upload_cap=CAP,
    )
    install = tools["installRelease"].tool.input_schema["properties"]
    upgrade = tools["upgradeRelease"].tool.input_schema["properties"]
    shared = {"wait", "timeout", "rollbackOnFailure", "atomic", "description", "labels", "force"}
    assert shared | {"skipCRDs", "dryRun", "createNamespace"} <= set(install)
    assert shared | {"resetValues", "reuseValues", "resetThenReuseValues", "maxHistory"} <= set(
        upgrade
    )
    assert "maxHistory" not in install
    assert "createNamespace" not in upgrade
    assert install["wait"]["enum"] == ["none", "watcher", "legacy", None]
