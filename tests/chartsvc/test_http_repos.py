"""The repositories group over HTTP against a real loopback chart repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from chartsvc.app import create_app
from chartsvc.repos import config
from common.config import ConfigError
from tests.chartsvc.conftest import FULL, KEY, ChartRepo, MakeClient, MakeSettings
from tests.chartsvc.test_http_oci import push_form
from tests.guards import assert_problem
from tests.typing_support import Client


async def test_add_list_remove(client: Client, chart_repo: ChartRepo, tmp_path: Path) -> None:
    resp = await client.post(
        "/api/v1/repos", json={"name": "r", "url": chart_repo.url}, headers=KEY
    )
    assert resp.status == 201
    assert await resp.json() == {"name": "r", "url": chart_repo.url}
    resp = await client.post(
        "/api/v1/repos", json={"name": "r", "url": chart_repo.url}, headers=KEY
    )
    assert resp.status == 200
    resp = await client.get("/api/v1/repos")
    assert await resp.json() == [{"name": "r", "url": chart_repo.url}]
    state = yaml.safe_load((tmp_path / "data" / "repositories.yaml").read_text())
    assert state["repositories"][0]["name"] == "r"
    assert (tmp_path / "data" / "repository" / "r-index.yaml").exists()
    resp = await client.delete("/api/v1/repos/r", headers=KEY)
    assert resp.status == 204
    assert await (await client.get("/api/v1/repos")).json() == []
    await assert_problem(await client.delete("/api/v1/repos/r", headers=KEY), 404)


async def test_the_listing_follows_every_change_as_json_dumps_writes_it(
    client: Client, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    """The listing's bytes are made once per configured state: an add and a removal through the
    API and an add by the helm CLI each show in them."""

    async def listing() -> bytes:
        resp = await client.get("/api/v1/repos")
        assert resp.headers["Content-Type"] == "application/json; charset=utf-8"
        return await resp.read()

    def listed(*names: str) -> bytes:
        return json.dumps([{"name": n, "url": chart_repo.url} for n in names]).encode()

    assert await listing() == b"[]"
    resp = await client.post(
        "/api/v1/repos", json={"name": "r", "url": chart_repo.url}, headers=KEY
    )
    assert resp.status == 201
    assert await listing() == listed("r")
    added = config.new_entry("s", chart_repo.url)
    config.change_entries(tmp_path / "data" / "repositories.yaml", lambda e: [*e, added])
    assert (await client.get("/api/v1/repos/s/charts")).status == 200  # found at once by name
    assert await listing() == listed("r", "s")
    assert (await client.delete("/api/v1/repos/r", headers=KEY)).status == 204
    assert await listing() == listed("s")


async def test_add_bad_input(client: Client, make_client: MakeClient) -> None:
    resp = await client.post(
        "/api/v1/repos", json={"name": "..", "url": "https://x.example"}, headers=KEY
    )
    await assert_problem(resp, 400)
    resp = await client.post("/api/v1/repos", json={"name": "a"}, headers=KEY)
    body = await assert_problem(resp, 400)
    assert "url" in body["detail"]
    strict = await make_client(*FULL, allow=())
    for url, refused in [
        ("http://127.0.0.1:8080/", "loopback"),
        ("http://169.254.169.254/latest/", "metadata"),
        ("http://localhost/", "loopback"),
    ]:
        resp = await strict.post("/api/v1/repos", json={"name": "a", "url": url}, headers=KEY)
        body = await assert_problem(resp, 400, code="address-refused")
        assert body["addressClass"] == refused, url
    for url in ("file:///etc/passwd", "oci://registry.example/charts", "https:///x"):
        resp = await strict.post("/api/v1/repos", json={"name": "a", "url": url}, headers=KEY)
        body = await assert_problem(resp, 400, code="invalid-request")  # the spec's pattern
        assert [e["field"] for e in body["errors"]] == ["url"], url


async def test_unreachable_repository_is_502(client: Client, chart_repo: ChartRepo) -> None:
    chart_repo.status = 404
    resp = await client.post(
        "/api/v1/repos", json={"name": "a", "url": chart_repo.url}, headers=KEY
    )
    await assert_problem(resp, 502)
    assert await (await client.get("/api/v1/repos")).json() == []


async def test_update_and_update_all(repo_client: Client, chart_repo: ChartRepo) -> None:
    resp = await repo_client.post("/api/v1/repos/r/update")
    assert await resp.json() == {
        "name": "r",
        "updated": False,
        "charts": 2,
        "versions": 4,
        "skipped": 1,
    }
    chart_repo.etag = '"changed"'
    resp = await repo_client.post("/api/v1/repos/update-all")
    [result] = await resp.json()
    assert result["updated"] is True
    await assert_problem(await repo_client.post("/api/v1/repos/nope/update"), 404)


async def test_update_all_reports_a_failing_repository(
    repo_client: Client, chart_repo: ChartRepo
) -> None:
    chart_repo.status = 500
    chart_repo.etag = '"other"'
    resp = await repo_client.post("/api/v1/repos/update-all")
    assert resp.status == 200
    [result] = await resp.json()
    assert "HTTP 500" in result["error"]


async def test_chart_and_version_listings(repo_client: Client) -> None:
    resp = await repo_client.get("/api/v1/repos/r/charts")
    assert await resp.json() == [
        {
            "name": "r/demo",
            "chartVersion": "0.2.0",
            "appVersion": "1.0",
            "description": "demo chart 0.2.0",
        },
        {
            "name": "r/other",
            "chartVersion": "2.3.4",
            "appVersion": "1.0",
            "description": "other chart 2.3.4",
        },
    ]
    resp = await repo_client.get("/api/v1/repos/r/charts/demo/versions")
    listed = await resp.json()
    assert [v["chartVersion"] for v in listed] == ["1.0.0-rc.1", "0.2.0", "0.1.0"]
    assert {v["name"] for v in listed} == {"demo"}
    await assert_problem(await repo_client.get("/api/v1/repos/r/charts/nope/versions"), 404)
    await assert_problem(await repo_client.get("/api/v1/repos/nope/charts"), 404)


async def test_pull_repository_chart(repo_client: Client, chart_archives: dict[str, Path]) -> None:
    resp = await repo_client.post("/api/v1/repos/pull", json={"chart": "r/demo"})
    assert resp.status == 200
    assert resp.content_type == "application/gzip"
    assert resp.headers["Content-Disposition"] == 'attachment; filename="demo-0.2.0.tgz"'
    assert await resp.read() == chart_archives["demo-0.2.0"].read_bytes()
    resp = await repo_client.post("/api/v1/repos/pull", json={"chart": "r/demo:0.1.0"})
    assert resp.headers["Content-Disposition"].endswith('"demo-0.1.0.tgz"')
    resp = await repo_client.post(
        "/api/v1/repos/pull", json={"chart": "r/demo", "version": "0.1.0"}
    )
    assert await resp.read() == chart_archives["demo-0.1.0"].read_bytes()


async def test_pull_errors(repo_client: Client) -> None:
    await assert_problem(await repo_client.post("/api/v1/repos/pull", json={}), 400)
    resp = await repo_client.post("/api/v1/repos/pull", json={"chart": "r/demo", "version": "5"})
    await assert_problem(resp, 404)
    resp = await repo_client.post("/api/v1/repos/pull", json={"chart": "oci://169.254.169.254/x"})
    body = await assert_problem(resp, 400, code="address-refused")
    assert body["addressClass"] == "metadata"


async def test_index_pointing_at_metadata_address_is_refused(
    repo_client: Client, chart_repo: ChartRepo, chart_archives: dict[str, Path]
) -> None:
    from tests.chartsvc.conftest import index_document

    document = index_document(chart_archives)
    for entry in document["entries"]["demo"]:
        entry["urls"] = ["http://169.254.169.254/latest/meta-data/chart.tgz"]
    chart_repo.set_index(document, etag='"evil"')
    await repo_client.post("/api/v1/repos/r/update")
    resp = await repo_client.post("/api/v1/repos/pull", json={"chart": "r/demo"})
    body = await assert_problem(resp, 400, code="address-refused")
    assert body["addressClass"] == "metadata"


async def test_push_requires_oci_remote_and_archive(client: Client) -> None:
    from aiohttp import FormData

    form = FormData()
    form.add_field("chart", b"x", filename="c.tgz", content_type="application/gzip")
    form.add_field("remote", "https://example.com/charts")
    body = await assert_problem(
        await client.post("/api/v1/repos/push", data=form, headers=KEY), 400
    )
    assert "remote" in body["detail"]
    form = FormData()
    form.add_field("chart", b"x", filename="c.tgz", content_type="application/gzip")
    body = await assert_problem(
        await client.post("/api/v1/repos/push", data=form, headers=KEY), 400
    )
    assert "remote" in body["detail"]


async def test_a_push_remote_is_an_oci_repository_without_tag_or_digest(client: Client) -> None:
    """The spec's ``OciDestination`` is the check: a tag, a digest, a blank or an uppercase path
    is refused naming ``remote`` before the archive is read; the form alone goes on to it."""
    for remote in (
        "oci://r.example/charts:1.0",
        "oci://r.example/c@sha256:" + "a" * 64,
        " oci://r.example/charts",
        "oci://r.example/Charts",
        "oci://r.example",
    ):
        resp = await client.post("/api/v1/repos/push", data=push_form(b"x", remote), headers=KEY)
        body = await assert_problem(resp, 400, code="invalid-request")
        assert [e["field"] for e in body["errors"]] == ["remote"], remote
    resp = await client.post(
        "/api/v1/repos/push", data=push_form(b"x", "oci://r.example/charts/"), headers=KEY
    )
    await assert_problem(resp, 400, code="invalid-chart")  # past the remote: the archive is none


async def test_a_repository_on_the_jump_host_needs_an_allow_list_entry(
    make_client: MakeClient, make_settings: MakeSettings, chart_repo: ChartRepo
) -> None:
    # A ChartMuseum next to the service, as docs/chartsvc-charts-and-repositories.md shows.
    assert chart_repo.server is not None
    port = chart_repo.server.port
    assert port is not None
    url = f"http://localhost:{port}"
    closed = await make_client(*FULL, allow=())
    resp = await closed.post("/api/v1/repos", json={"name": "local", "url": url}, headers=KEY)
    body = await assert_problem(resp, 400, code="address-refused")
    assert body["addressClass"] == "loopback"
    other_port = await make_client(
        *FULL, f"chartsvc.security.allow-outbound=localhost:{port + 1}", allow=()
    )
    resp = await other_port.post("/api/v1/repos", json={"name": "local", "url": url}, headers=KEY)
    await assert_problem(resp, 400, code="address-refused")
    listed = f"chartsvc.security.allow-outbound=10.9.0.0/16,localhost:{port}"
    opened = await make_client(*FULL, listed, allow=())
    resp = await opened.post("/api/v1/repos", json={"name": "local", "url": url}, headers=KEY)
    assert resp.status == 201, await resp.text()
    charts = await (await opened.get("/api/v1/repos/local/charts")).json()
    assert {c["name"] for c in charts} == {"local/demo", "local/other"}


@pytest.mark.parametrize("entry", ["169.254.169.254", "127.0.0.1:99999", "http://localhost"])
def test_a_bad_allow_list_entry_stops_start_up(make_settings: MakeSettings, entry: str) -> None:
    with pytest.raises(ConfigError, match=r"chartsvc\.security\.allow-outbound"):
        create_app(make_settings(f"chartsvc.security.allow-outbound={entry}"))
