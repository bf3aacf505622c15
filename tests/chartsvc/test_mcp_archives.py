"""The archive tools over MCP with the official client: uploads, create, pull and push.

A chart archive goes in as base64 in the tool's arguments (the multipart form's parts are the
arguments) and comes out as an embedded ``application/gzip`` resource. The same limits and the same
problems as the REST routes apply; each failure is compared with what REST answers for the same
input. The round trip runs against the real OCI registry of ``fixtures_registry``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession as HttpSession
from aiohttp import FormData
from mcp.shared.exceptions import MCPError

from chartsvc.keys import UPLOADS
from tests.chartsvc.conftest import FULL, KEY, ChartRepo
from tests.chartsvc.fixtures_cluster import build_chart, upload_form
from tests.chartsvc.fixtures_registry import Registry, registry
from tests.chartsvc.mcp_support import KEY as KEY_VALUE
from tests.chartsvc.mcp_support import (
    TRANSPORTS,
    MakeMcp,
    McpServer,
    archive_of,
    b64,
    json_of,
    make_mcp,
    problem_of,
    text_of,
)
from tests.chartsvc.test_http_oci import registry_login
from tests.chartsvc.test_package import members, metadata_of
from tests.guards import assert_problem

__all__ = ["make_mcp", "registry"]

CAP = 4096  # chartsvc.rest.max-upload-size of the limit tests: the probe chart fits, 5000 bytes not


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    archive = build_chart(tmp_path_factory.mktemp("probe"))
    assert len(archive) < CAP
    return archive


async def rest(server: McpServer, path: str, **kwargs: Any) -> tuple[int, Any]:
    async with HttpSession() as http:
        resp = await http.post(server.url + "/api/v1" + path, headers=KEY, **kwargs)
        if "json" in resp.content_type:
            return resp.status, await resp.json(content_type=None)
        return resp.status, await resp.read()


def same_problem(tool: dict[str, Any], http: dict[str, Any]) -> None:
    """The tool error carries the REST problem (its request-specific fields aside)."""
    for field in ("status", "code", "title", "detail", "instance", "errors", "addressClass"):
        assert tool.get(field) == http.get(field), field


@pytest.mark.timeout(900)  # the first registry test may install the package
async def test_create_package_push_and_pull_round_trip(
    make_mcp: MakeMcp, registry: Registry, tmp_path: Path
) -> None:
    server = await make_mcp(
        *FULL, "chartsvc.oci.plain-http=true", registry_login(tmp_path, registry)
    )
    remote = f"{registry.oci}/mcp-tests"
    async with server.session(key=KEY_VALUE) as s:
        name, created = archive_of(await s.call_tool("createChart", {"name": "harbor"}))
        assert name == "harbor.tgz"
        assert metadata_of(created)["name"] == "harbor"

        package = {"chart": b64(created), "request": {"version": "1.2.3", "appVersion": "9"}}
        name, packaged = archive_of(await s.call_tool("packageChartUpload", package))
        assert name == "harbor-1.2.3.tgz"
        assert (metadata_of(packaged)["version"], metadata_of(packaged)["appVersion"]) == (
            "1.2.3",
            "9",
        )

        pushed = await s.call_tool("pushChart", {"chart": b64(packaged), "remote": remote})
        assert json_of(pushed)["ref"] == f"{registry.host}/mcp-tests/harbor:1.2.3"

        pull = {"chart": f"{remote}/harbor:1.2.3"}
        name, pulled = archive_of(await s.call_tool("pullChart", pull))
        assert name == "harbor-1.2.3.tgz"
        assert members(pulled) == members(packaged)
        assert metadata_of(pulled) == metadata_of(packaged)
        assert (200, pulled) == await rest(server, "/repos/pull", json=pull)

        render = {"chart": b64(pulled), "request": {"releaseName": "rt"}}
        manifest = text_of(await s.call_tool("templateChartUpload", render))
        assert "name: rt-harbor" in manifest
        status, body = await rest(
            server, "/charts/template/upload", data=upload_form(pulled, {"releaseName": "rt"})
        )
        assert (status, body.decode()) == (200, manifest)

        lint = {"chart": b64(pulled), "request": {"strict": True}}
        report = json_of(await s.call_tool("lintChartUpload", lint))
        assert report["chartsLinted"] == 1
        assert (
            report
            == (
                await rest(
                    server, "/charts/lint/upload", data=upload_form(pulled, {"strict": True})
                )
            )[1]
        )


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_upload_arguments_get_the_rest_limits_and_problems(
    transport: str, make_mcp: MakeMcp, probe: bytes
) -> None:
    server = await make_mcp(*FULL, f"chartsvc.rest.max-upload-size={CAP}")
    oversize = bytes(CAP + 1)
    async with server.session(transport, key=KEY_VALUE) as s:

        async def template(**arguments: Any) -> Any:
            return await s.call_tool("templateChartUpload", arguments)

        # Over the cap once decoded: 413 as over REST, by the base64's length or after decoding.
        http_status, http_problem = await rest(
            server, "/charts/template/upload", data=upload_form(oversize)
        )
        assert http_status == 413
        for encoded in (b64(oversize), "A" * (20 * CAP)):
            too_large = problem_of(await template(chart=encoded), 413, "payload-too-large")
            same_problem(too_large, http_problem)
            assert too_large["detail"] == f"part 'chart' is larger than the limit of {CAP} bytes"

        for value, message in (
            ("not base64!", "is not valid base64 (RFC 4648 alphabet, with padding)"),
            ("QUJ", "is not valid base64 (RFC 4648 alphabet, with padding)"),
            (12, "must be a string: the file in base64"),
            ("", "must be a non-empty file part (the chart .tgz)"),
        ):
            bad = problem_of(await template(chart=value), 400, "invalid-request")
            assert bad["errors"] == [{"in": "body", "field": "chart", "message": message}], value

        missing = problem_of(await template(request={"releaseName": "x"}), 400)
        assert missing["errors"] == [
            {"in": "body", "field": "chart", "message": "part is required"}
        ]
        unknown = problem_of(await template(chart=b64(probe), file="x"), 400)
        assert unknown["errors"] == [
            {"in": "arguments", "field": "file", "message": "is not a known field"}
        ]

        # A JSON part is checked against its schema, naming the field as REST does.
        wrong = {"releaseName": 5, "extra": True}
        invalid = problem_of(await template(chart=b64(probe), request=wrong), 400)
        _, http_invalid = await rest(
            server, "/charts/template/upload", data=upload_form(probe, wrong)
        )
        same_problem(invalid, http_invalid)
        assert {e["field"] for e in invalid["errors"]} == {"request.releaseName", "request.extra"}

        # Other parts are held to 1 MiB, however the transport could carry more.
        big = {"values": {"blob": "x" * (1 << 20)}}
        huge = problem_of(await template(chart=b64(probe), request=big), 413, "payload-too-large")
        assert huge["detail"] == "part 'request' is larger than the limit of 1048576 bytes"

        # Base64 wrapped in lines, as tools write it, is the same archive.
        encoded = b64(probe)
        wrapped = "\r\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
        request = {"releaseName": "w"}
        rendered = text_of(await template(chart=wrapped, request=request))
        assert rendered == text_of(await template(chart=encoded, request=request))
        assert "name: w-settings" in rendered


async def test_push_goes_through_the_address_guard(make_mcp: MakeMcp, probe: bytes) -> None:
    server = await make_mcp(*FULL)
    problems = {}
    async with server.session(key=KEY_VALUE) as s:
        for remote in ("oci://169.254.169.254/charts", "https://registry.example/charts"):
            result = await s.call_tool("pushChart", {"chart": b64(probe), "remote": remote})
            form = FormData()
            form.add_field("chart", probe, filename="c.tgz", content_type="application/gzip")
            form.add_field("remote", remote)
            status, http_problem = await rest(server, "/repos/push", data=form)
            problems[remote] = problem_of(result, status)
            same_problem(problems[remote], http_problem)
        refused = problems["oci://169.254.169.254/charts"]
        assert (refused["status"], refused["code"]) == (400, "address-refused")
        assert refused["addressClass"] == "metadata"
        nothing = problem_of(await s.call_tool("pushChart", {"chart": b64(probe)}), 400)
        assert nothing["errors"] == [
            {"in": "body", "field": "remote", "message": "part is required"}
        ]


async def test_a_pull_over_the_archive_cap_is_refused_as_over_rest(
    make_mcp: MakeMcp, chart_repo: ChartRepo
) -> None:
    server = await make_mcp(*FULL, "chartsvc.charts.max-archive-size=200")
    pull = {"chart": "r/demo", "version": "0.1.0"}
    async with server.session(key=KEY_VALUE) as s:
        added = await s.call_tool("addRepository", {"name": "r", "url": chart_repo.url})
        assert not added.is_error, added
        refused = problem_of(await s.call_tool("pullChart", pull), 502, "upstream-too-large")
    status, http_problem = await rest(server, "/repos/pull", json=pull)
    assert status == 502
    same_problem(refused, http_problem)


async def test_without_the_key_there_is_no_push_tool(make_mcp: MakeMcp, probe: bytes) -> None:
    for overrides, key in (((), None), (("chartsvc.security.mode=FULL",), None)):
        server = await make_mcp(*overrides)
        async with server.session(key=key) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert "pushChart" not in names
            assert {"pullChart", "createChart", "templateChartUpload"} <= names
            result = await s.call_tool("pullChart", {"chart": "nope/x"})
            assert json.loads(text_of(result))["status"] == 404


async def test_a_message_over_the_transport_cap_is_refused_before_the_sdk_reads_it(
    make_mcp: MakeMcp,
) -> None:
    # A message may carry a 1 KiB archive in base64 (1368 bytes) and 4 KiB of other arguments.
    server = await make_mcp(
        "chartsvc.rest.max-upload-size=1024", "chartsvc.rest.max-json-size=4096"
    )
    async with server.session() as s:
        with pytest.raises(MCPError, match="error response"):
            await s.call_tool("templateChartUpload", {"chart": "A" * 6000})
        within = await s.call_tool("templateChartUpload", {"chart": "A" * 1000})
        problem_of(within, 400, "invalid-chart")  # the session goes on: 750 bytes, not a chart

    async def streamed() -> AsyncIterator[bytes]:  # no Content-Length: refused once past the cap
        for _ in range(8):
            yield b" " * 1024

    mcp_json = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    async with HttpSession() as http:
        for path in ("/mcp", "/messages/?session_id=zz"):
            resp = await http.post(server.url + path, data=streamed(), headers=mcp_json)
            problem = await assert_problem(resp, 413, code="payload-too-large")
            assert problem["detail"] == "request body is larger than the limit of 5464 bytes"


async def test_mcp_posts_share_the_upload_budget(make_mcp: MakeMcp) -> None:
    """A tool call in flight holds its share of the budget multipart uploads draw on too."""
    server = await make_mcp(
        "chartsvc.rest.max-upload-size=1024", "chartsvc.rest.max-json-size=4096"
    )
    budget = server.server.app[UPLOADS]
    go_on = asyncio.Event()

    async def streamed() -> AsyncIterator[bytes]:
        yield b'{"jsonrpc": "2.0", '
        await go_on.wait()
        yield b'"id": 1, "method": "ping"}'

    mcp_json = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    async with HttpSession() as http:
        posting = asyncio.ensure_future(
            http.post(server.url + "/messages/?session_id=zz", data=streamed(), headers=mcp_json)
        )
        async with asyncio.timeout(5):
            while budget.used != 5464:  # no declared length: the whole message cap is reserved
                await asyncio.sleep(0.01)
        go_on.set()
        resp = await posting
        assert resp.status == 400  # no such session: but it was metered while it came in
        resp.release()
    assert budget.used == 0
