"""OCI over HTTP against a real registry (distribution, token auth): push, pull, template, show.

The service reads registry credentials from a Docker-style config.json, as ``helm registry login``
writes it; anonymous callers may pull ``public/*`` only.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml
from aiohttp import FormData

from chartsvc.archives import without_gzip_extra
from tests.chartsvc.conftest import FULL, KEY, MakeClient
from tests.chartsvc.fixtures_registry import USERS, Registry, registry
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["registry"]
pytestmark = pytest.mark.timeout(900)  # the first registry test may install the package


def registry_login(tmp_path: Path, reg: Registry) -> str:
    config = tmp_path / "registry.json"
    auth = base64.b64encode(f"alice:{USERS['alice']}".encode()).decode()
    config.write_text(json.dumps({"auths": {reg.host: {"auth": auth}}}))
    return f"chartsvc.oci.registry-config={config}"


@pytest.fixture
async def client(make_client: MakeClient, registry: Registry, tmp_path: Path) -> Client:
    return await make_client(
        *FULL, "chartsvc.oci.plain-http=true", registry_login(tmp_path, registry)
    )


def push_form(archive: bytes, remote: str) -> FormData:
    form = FormData()
    form.add_field("chart", archive, filename="chart.tgz", content_type="application/gzip")
    form.add_field("remote", remote)
    return form


def plain_gzip(path: Path) -> bytes:
    # See test_push_of_a_helm_packaged_archive: the OCI client cannot read Helm's gzip header yet.
    return without_gzip_extra(path.read_bytes())


async def test_push_pull_template_show_roundtrip(
    client: Client, registry: Registry, chart_archives: dict[str, Path]
) -> None:
    archive = plain_gzip(chart_archives["demo-0.2.0"])
    remote = f"{registry.oci}/http-tests"
    resp = await client.post("/api/v1/repos/push", data=push_form(archive, remote), headers=KEY)
    assert resp.status == 200, await resp.text()
    pushed = await resp.json()
    assert pushed["ref"] == f"{registry.host}/http-tests/demo:0.2.0"
    assert pushed["digest"].startswith("sha256:")

    resp = await client.post("/api/v1/repos/pull", json={"chart": f"{remote}/demo:0.2.0"})
    assert resp.status == 200
    assert await resp.read() == archive
    assert resp.headers["Content-Disposition"] == 'attachment; filename="demo-0.2.0.tgz"'

    ref = f"{remote}/demo"  # no version: the newest tag
    resp = await client.post("/api/v1/charts/template", json={"chartRef": ref, "releaseName": "o"})
    assert "name: o-demo" in await resp.text()
    resp = await client.get(
        "/api/v1/charts/show/chart", params={"chartRef": ref, "version": "0.2.0"}
    )
    assert yaml.safe_load(await resp.text())["version"] == "0.2.0"


async def test_pull_of_a_missing_chart_is_404(client: Client, registry: Registry) -> None:
    resp = await client.post(
        "/api/v1/repos/pull", json={"chart": f"{registry.oci}/nothing/here:1.0.0"}
    )
    await assert_problem(resp, 404)


async def test_push_of_a_bad_archive_is_400_and_nothing_is_sent(
    client: Client, registry: Registry
) -> None:
    form = push_form(b"not a chart", f"{registry.oci}/http-tests")
    await assert_problem(await client.post("/api/v1/repos/push", data=form, headers=KEY), 400)


async def test_push_without_credentials_is_refused_by_the_registry(
    make_client: MakeClient, registry: Registry, chart_archives: dict[str, Path]
) -> None:
    anonymous = await make_client(*FULL, "chartsvc.oci.plain-http=true")
    form = push_form(plain_gzip(chart_archives["demo-0.1.0"]), f"{registry.oci}/private")
    resp = await anonymous.post("/api/v1/repos/push", data=form, headers=KEY)
    assert resp.status in (401, 403, 502)
    assert resp.content_type == "application/problem+json"


async def test_push_of_a_helm_packaged_archive(
    client: Client, registry: Registry, chart_archives: dict[str, Path]
) -> None:
    form = push_form(chart_archives["other-2.3.4"].read_bytes(), f"{registry.oci}/helm-made")
    resp = await client.post("/api/v1/repos/push", data=form, headers=KEY)
    assert resp.status == 200, await resp.text()


LEAKY_REFERENCES = (
    "oci://robot:hunter2-secret@registry.example/charts/x:1.0.0",
    "robot:hunter2-secret@registry.example/charts/x",
    "oci://robot:hunter2-secret@/charts/x",
    "oci://robot:a@hunter2-secret@registry.example/x:1",  # "@" in the password: the last "@" splits
    " oci://robot:hunter2-secret@registry.example/x:1",  # a leading blank
    "oci://robot:a/hunter2-secret@registry.example/x:1",  # "/" in the password
    "oci://robot:hunter2-secret@@registry.example/x",
)


async def test_a_password_inside_an_oci_reference_is_never_echoed(
    client: Client, chart_archives: dict[str, Path]
) -> None:
    archive = chart_archives["other-2.3.4"].read_bytes()
    for ref in LEAKY_REFERENCES:
        resp = await client.post("/api/v1/repos/pull", json={"chart": ref})
        body = await assert_problem(resp, 400)  # refused by the spec's ChartRef pattern
        assert "hunter2-secret" not in json.dumps(body), ref
        assert [e["field"] for e in body["errors"]] == ["chart"], ref
        resp = await client.post("/api/v1/repos/push", data=push_form(archive, ref), headers=KEY)
        body = await assert_problem(resp, 400)
        assert "hunter2-secret" not in json.dumps(body), ref
