"""``helm package`` over HTTP and MCP on the real engine: a chart sent file by file or as a
directory archive, version overrides, .helmignore, and paths that would leave the chart refused."""

from __future__ import annotations

import base64
import io
import tarfile
from typing import Any

import helm_python as helm
import mcp.types as types
import pytest
import yaml

from tests.chartsvc.conftest import FULL
from tests.chartsvc.fixtures_cluster import upload_form
from tests.chartsvc.mcp_support import KEY, MakeMcp, make_mcp
from tests.typing_support import Client

__all__ = ["make_mcp"]

API = "/api/v1"
FILES = {
    "Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\nappVersion: '1.0'\n",
    "values.yaml": "greeting: hello\n",
    "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
}


def metadata_of(archive: bytes) -> dict[str, Any]:
    chart = helm.Chart.load_archive(archive)
    try:
        return dict(chart.metadata)
    finally:
        chart.close()


def members(archive: bytes) -> set[str]:
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        return set(tar.getnames())


async def test_package_files_with_a_new_version(client: Client) -> None:
    body = {"files": FILES, "version": "1.2.3", "appVersion": "2.0"}
    resp = await client.post(f"{API}/charts/package", json=body)
    assert resp.status == 200, await resp.text()
    assert resp.content_type == "application/gzip"
    assert 'filename="web-1.2.3.tgz"' in resp.headers["Content-Disposition"]
    archive = await resp.read()
    meta = metadata_of(archive)
    assert (meta["name"], meta["version"], meta["appVersion"]) == ("web", "1.2.3", "2.0")
    assert "web/templates/cm.yaml" in members(archive)


async def test_a_new_version_is_one_helm_reads_or_a_400_naming_it(client: Client) -> None:
    """``version`` is the spec's ``SemanticVersion``, Helm's loose reading: ``v1.2`` is packaged
    as Helm would; what Helm's loader refuses is a 400 naming the field, not an invalid chart."""
    resp = await client.post(f"{API}/charts/package", json={"files": FILES, "version": "v1.2"})
    assert 'filename="web-v1.2.tgz"' in resp.headers["Content-Disposition"]
    for version in ("1.2.3.4", "1.0.0-01", "1.0.0 ", "é", "1" * 20):
        body = {"files": FILES, "version": version}
        resp = await client.post(f"{API}/charts/package", json=body)
        assert resp.status == 400, version
        assert [e["field"] for e in (await resp.json())["errors"]] == ["version"], version


@pytest.mark.parametrize(
    ("files", "field"),
    [
        ({**FILES, "../escape.yaml": "x"}, "files.../escape.yaml"),
        ({**FILES, "/etc/x": "x"}, "files./etc/x"),
        ({"values.yaml": "a: 1\n"}, "files.Chart.yaml"),
    ],
)
async def test_files_outside_the_chart_or_no_chart_are_refused(
    client: Client, files: dict[str, str], field: str
) -> None:
    resp = await client.post(f"{API}/charts/package", json={"files": files})
    assert resp.status == 400, await resp.text()
    assert [e["field"] for e in (await resp.json())["errors"]] == [field]


async def test_package_an_uploaded_directory_honours_helmignore(client: Client) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, text in {**FILES, ".helmignore": "*.bak\n", "notes.bak": "old"}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"web/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    form = upload_form(buffer.getvalue(), {"version": "0.2.0"})
    resp = await client.post(f"{API}/charts/package/upload", data=form)
    assert resp.status == 200, await resp.text()
    archive = await resp.read()
    assert metadata_of(archive)["version"] == "0.2.0"
    assert "web/templates/cm.yaml" in members(archive)
    assert "web/notes.bak" not in members(archive)
    bad = await client.post(f"{API}/charts/package/upload", data=upload_form(b"not a tgz"))
    assert bad.status == 400, await bad.text()


async def test_the_package_tool_answers_with_the_archive(make_mcp: MakeMcp) -> None:
    server = await make_mcp(*FULL)
    async with server.session(key=KEY) as session:
        result = await session.call_tool("packageChart", {"files": FILES})
    assert not result.is_error, result
    text, resource = result.content
    assert isinstance(text, types.TextContent)
    assert text.text.startswith("web-0.1.0.tgz")
    assert isinstance(resource, types.EmbeddedResource)
    assert isinstance(resource.resource, types.BlobResourceContents)
    assert resource.resource.mime_type == "application/gzip"
    archive = base64.b64decode(resource.resource.blob)
    assert yaml.safe_load(FILES["Chart.yaml"])["name"] == metadata_of(archive)["name"]
