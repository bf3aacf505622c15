"""The charts group over HTTP: template (reference and upload), create, show."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import yaml
from aiohttp import FormData

from chartsvc.charts import SPEC_PATTERNS
from tests.chartsvc.conftest import ChartRepo, MakeClient
from tests.chartsvc.fixtures_cluster import upload_form
from tests.guards import assert_problem
from tests.typing_support import Client


async def test_template_from_repository_reference(repo_client: Client) -> None:
    body = {"chartRef": "r/demo", "releaseName": "web", "values": {"replicaCount": 3}}
    resp = await repo_client.post("/api/v1/charts/template", json=body)
    assert resp.status == 200, await resp.text()
    assert resp.content_type == "text/plain"
    docs = {d["kind"]: d for d in yaml.safe_load_all(await resp.text()) if d}
    assert docs["Deployment"]["spec"]["replicas"] == 3
    assert docs["Deployment"]["metadata"]["labels"]["helm.sh/chart"] == "demo-0.2.0"  # latest


async def test_template_with_version_and_defaults(repo_client: Client) -> None:
    resp = await repo_client.post(
        "/api/v1/charts/template", json={"chartRef": "r/demo", "version": "0.1.0"}
    )
    text = await resp.text()
    assert "helm.sh/chart: demo-0.1.0" in text
    assert "name: release-name-demo" in text


async def test_template_missing_chart_ref_names_it(repo_client: Client) -> None:
    resp = await repo_client.post("/api/v1/charts/template", json={"version": "1"})
    body = await assert_problem(resp, 400)
    assert "chartRef" in body["message"]


async def test_template_with_values_nested_a_thousand_deep_is_400(repo_client: Client) -> None:
    deep = "[" * 1_000 + "]" * 1_000
    body = '{"chartRef": "r/demo", "values": {"a": ' + deep + "}}"
    resp = await repo_client.post(
        "/api/v1/charts/template", data=body, headers={"Content-Type": "application/json"}
    )
    problem = await assert_problem(resp, 400)
    assert "nested deeper than the limit of 100 levels" in json.dumps(problem["errors"])


async def test_template_unknown_repo_chart_version_are_404(repo_client: Client) -> None:
    for ref, version in [("nope/demo", None), ("r/nope", None), ("r/demo", "9.9.9")]:
        resp = await repo_client.post(
            "/api/v1/charts/template", json={"chartRef": ref, "version": version}
        )
        await assert_problem(resp, 404)


CHART_REF_TITLE = "<repo>/<chart>[:<version>] or oci://<registry>/<path>[:<tag>][@sha256:<digest>]"


async def test_template_bad_chart_ref_is_400(repo_client: Client) -> None:
    """The spec's ChartRef pattern is the server's own check: refused before anything is fetched,
    named by its title rather than its (long) pattern."""
    for ref in ("no-slash", "../up", "r/a/b", "r/demo:", "r/de mo", "oci://h/UPPER", "oci://h"):
        resp = await repo_client.post("/api/v1/charts/template", json={"chartRef": ref})
        body = await assert_problem(resp, 400, code="invalid-request")
        assert body["errors"] == [
            {"in": "body", "field": "chartRef", "message": f"must be {CHART_REF_TITLE}"}
        ], ref


async def test_a_version_is_a_helm_constraint_or_a_400_naming_it(repo_client: Client) -> None:
    """``version`` takes what ``helm --version`` takes (the spec's ``VersionConstraint``, the
    parser's own pattern); anything else is refused before a repository is read."""
    resp = await repo_client.post(
        "/api/v1/charts/template", json={"chartRef": "r/demo", "version": "~0.1 || >=9"}
    )
    assert "helm.sh/chart: demo-0.1.0" in await resp.text()
    for version in ("latest", "1 2 - 3", ">=0.1\u2003<1", "0." + "1" * 20):
        resp = await repo_client.post(
            "/api/v1/charts/template", json={"chartRef": "r/demo", "version": version}
        )
        body = await assert_problem(resp, 400, code="invalid-request")
        assert [e["field"] for e in body["errors"]] == ["version"], version
        resp = await repo_client.get(
            "/api/v1/charts/show", params={"chartRef": "r/demo", "version": version}
        )
        body = await assert_problem(resp, 400, code="invalid-request")
        assert [e["field"] for e in body["errors"]] == ["version"], version


async def test_the_served_spec_states_the_servers_own_patterns(repo_client: Client) -> None:
    served = await (await repo_client.get("/v3/api-docs")).json()
    assert {
        name: served["components"]["schemas"][name]["pattern"] for name in SPEC_PATTERNS
    } == SPEC_PATTERNS


async def test_template_upload(client: Client, chart_archives: dict[str, Path]) -> None:
    archive = chart_archives["demo-0.1.0"].read_bytes()
    request = {"releaseName": "up", "namespace": "ns1", "values": {"service": {"type": "NodePort"}}}
    resp = await client.post("/api/v1/charts/template/upload", data=upload_form(archive, request))
    assert resp.status == 200, await resp.text()
    docs = {d["kind"]: d for d in yaml.safe_load_all(await resp.text()) if d}
    assert docs["Service"]["spec"]["type"] == "NodePort"
    assert docs["Service"]["metadata"]["name"] == "up-demo"


async def test_template_upload_without_request_part_uses_defaults(
    client: Client, chart_archives: dict[str, Path]
) -> None:
    resp = await client.post(
        "/api/v1/charts/template/upload",
        data=upload_form(chart_archives["demo-0.1.0"].read_bytes()),
    )
    assert "release-name-demo" in await resp.text()


async def test_template_upload_bad_input(client: Client) -> None:
    resp = await client.post("/api/v1/charts/template/upload", data=upload_form(b"not a tgz"))
    await assert_problem(resp, 400, code="invalid-chart")
    form = FormData()
    form.add_field("request", "{}", content_type="application/json")
    resp = await client.post("/api/v1/charts/template/upload", data=form)
    body = await assert_problem(resp, 400)
    assert "chart" in body["detail"]
    resp = await client.post(
        "/api/v1/charts/template/upload", data=upload_form(b"x", {"values": [1]})
    )
    body = await assert_problem(resp, 400)
    assert "request.values" in body["detail"]


async def test_oversized_upload_is_413_and_temp_dir_is_cleaned(
    make_client: MakeClient, tmp_path: Path
) -> None:
    client = await make_client("chartsvc.rest.max-upload-size=1000")
    resp = await client.post("/api/v1/charts/template/upload", data=upload_form(b"x" * 5000))
    await assert_problem(resp, 413)
    assert list((tmp_path / "tmp").iterdir()) == []


async def test_zip_bomb_upload_is_413(make_client: MakeClient) -> None:
    client = await make_client("chartsvc.charts.max-decompressed-size=10000")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("c/Chart.yaml")
        info.size = 100_000
        tar.addfile(info, io.BytesIO(b"0" * info.size))
    resp = await client.post("/api/v1/charts/template/upload", data=upload_form(out.getvalue()))
    await assert_problem(resp, 413)


async def test_create_returns_a_scaffold_archive(client: Client) -> None:
    resp = await client.post("/api/v1/charts/create", json={"name": "shop"})
    assert resp.status == 200
    assert resp.content_type == "application/gzip"
    assert resp.headers["Content-Disposition"] == 'attachment; filename="shop.tgz"'
    with tarfile.open(fileobj=io.BytesIO(await resp.read()), mode="r:gz") as tar:
        assert "shop/templates/deployment.yaml" in tar.getnames()
    resp = await client.post("/api/v1/charts/create", json={"name": "../x"})
    await assert_problem(resp, 400)
    resp = await client.post("/api/v1/charts/create", json={})
    await assert_problem(resp, 400)


async def test_show_endpoints(repo_client: Client) -> None:
    base = "/api/v1/charts/show"
    resp = await repo_client.get(f"{base}/chart", params={"chartRef": "r/demo"})
    assert yaml.safe_load(await resp.text())["version"] == "0.2.0"  # no version: latest, not 500
    resp = await repo_client.get(f"{base}/chart", params={"chartRef": "r/demo", "version": "0.1.0"})
    assert yaml.safe_load(await resp.text())["version"] == "0.1.0"
    resp = await repo_client.get(f"{base}/values", params={"chartRef": "r/demo"})
    assert "replicaCount" in yaml.safe_load(await resp.text())
    resp = await repo_client.get(f"{base}/readme", params={"chartRef": "r/demo"})
    assert (await resp.text()).startswith("# demo")
    resp = await repo_client.get(f"{base}/crds", params={"chartRef": "r/demo"})
    assert "CustomResourceDefinition" in await resp.text()
    resp = await repo_client.get(base, params={"chartRef": "r/demo"})
    assert "replicaCount" in await resp.text()


async def test_show_errors(repo_client: Client) -> None:
    resp = await repo_client.get("/api/v1/charts/show/values")
    body = await assert_problem(resp, 400)
    assert "chartRef" in body["detail"]
    resp = await repo_client.get(
        "/api/v1/charts/show", params={"chartRef": "r/demo", "version": "7"}
    )
    await assert_problem(resp, 404)


async def test_oci_chart_ref_to_metadata_address_is_400(client: Client) -> None:
    resp = await client.post(
        "/api/v1/charts/template", json={"chartRef": "oci://169.254.169.254/charts/x"}
    )
    body = await assert_problem(resp, 400)
    assert body["addressClass"] == "metadata"


async def test_temp_dir_is_used_and_left_clean(repo_client: Client, tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    assert temp.is_dir()  # created at start-up from chartsvc.rest.temp-dir
    for what in ("", "/values", "/crds"):
        resp = await repo_client.get(f"/api/v1/charts/show{what}", params={"chartRef": "r/demo"})
        assert resp.status == 200
    assert (await repo_client.post("/api/v1/charts/create", json={"name": "tidy"})).status == 200
    resp = await repo_client.post("/api/v1/dependencies/resolve", json={"chartRef": "r/demo"})
    assert resp.status == 200
    assert list(temp.iterdir()) == []


async def test_json_bodies_over_their_cap_are_413(make_client: MakeClient) -> None:
    small = await make_client("chartsvc.rest.max-json-size=2000")
    values = {"blob": "x" * 5000}
    resp = await small.post(
        "/api/v1/charts/template", json={"chartRef": "r/demo", "values": values}
    )
    await assert_problem(resp, 413)


async def test_repeated_show_is_served_from_memory(
    repo_client: Client, chart_repo: ChartRepo
) -> None:
    params = {"chartRef": "r/demo", "version": "0.2.0"}
    first = await (await repo_client.get("/api/v1/charts/show/values", params=params)).text()
    fetched = len(chart_repo.requests)
    second = await (await repo_client.get("/api/v1/charts/show/values", params=params)).text()
    assert second == first
    assert len(chart_repo.requests) == fetched  # the archive cache and the show cache held


async def test_create_refuses_names_helm_cannot_package_naming_the_field(client: Client) -> None:
    """Names up to 245 characters package; longer ones are a 400 on ``name``, never a 500, and
    no answer names a path on the server."""
    ok = await client.post("/api/v1/charts/create", json={"name": "a" * 245})
    assert ok.status == 200
    for length in (246, 250, 251, 253, 260):
        resp = await client.post("/api/v1/charts/create", json={"name": "a" * length})
        body = await assert_problem(resp, 400)
        assert [e["field"] for e in body["errors"]] == ["name"], length
        shown = json.dumps(body)
        assert "/tmp" not in shown, length
        assert "chartsvc-" not in shown, length
