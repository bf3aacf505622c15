"""Dependency resolution over HTTP: a chart in the loopback repository whose dependency lives there."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from pathlib import Path

import yaml

from tests.chartsvc.conftest import KEY, ChartRepo, index_document
from tests.chartsvc.fixtures_charts import chart_yaml, tgz_bytes
from tests.guards import assert_problem
from tests.typing_support import Client

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"


def app_chart(tmp_path: Path, repo_url: str, constraint: str) -> Path:
    """A chart depending on ``demo``, gzip'd the way Helm writes archives (with a FEXTRA field)."""
    meta = yaml.safe_load(chart_yaml("shop", "0.1.0"))
    meta["dependencies"] = [{"name": "demo", "version": constraint, "repository": repo_url}]
    files = {"shop/Chart.yaml": yaml.safe_dump(meta), "shop/templates/cm.yaml": CONFIGMAP}
    plain = gzip.decompress(tgz_bytes(files))
    path = tmp_path / "shop-0.1.0.tgz"
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz:
        gz.write(plain)
    data = bytearray(out.getvalue())
    data[3] |= 0x04  # FEXTRA, with Helm's two-byte length and payload, as `helm package` writes
    extra = b"+aHR0cHM6Ly95b3V0dS5iZS96OVV6MWljandyTQo=Helm"
    path.write_bytes(bytes(data[:10]) + len(extra).to_bytes(2, "little") + extra + bytes(data[10:]))
    return path


async def test_resolve_locks_against_the_repository(
    client: Client, chart_repo: ChartRepo, chart_archives: dict[str, Path], tmp_path: Path
) -> None:
    shop = app_chart(tmp_path, chart_repo.url, "~0.1.0")
    chart_repo.archives["shop-0.1.0"] = shop
    chart_repo.set_index(index_document(chart_repo.archives), etag='"with-shop"')
    resp = await client.post(
        "/api/v1/repos", json={"name": "r", "url": chart_repo.url}, headers=KEY
    )
    assert resp.status == 201
    resp = await client.post("/api/v1/dependencies/resolve", json={"chartRef": "r/shop"})
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"] == "text/yaml"
    lock = yaml.safe_load(await resp.text())
    locked = [{"name": "demo", "repository": chart_repo.url, "version": "0.1.0"}]
    assert lock["dependencies"] == locked
    requested = [{"name": "demo", "version": "~0.1.0", "repository": chart_repo.url}]
    go_json = json.dumps(
        [requested, [{"name": "demo", "version": "0.1.0", "repository": chart_repo.url}]],
        separators=(",", ":"),
    )
    assert lock["digest"] == "sha256:" + hashlib.sha256(go_json.encode()).hexdigest()


async def test_resolve_errors(client: Client) -> None:
    body = await assert_problem(await client.post("/api/v1/dependencies/resolve", json={}), 400)
    assert "chartRef" in body["detail"]
    resp = await client.post("/api/v1/dependencies/resolve", json={"chartRef": "nope/x"})
    await assert_problem(resp, 404)
