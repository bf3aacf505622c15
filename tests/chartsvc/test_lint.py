"""``helm lint`` over HTTP on the real engine: by reference and by upload, severities and strict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.chartsvc.fixtures_cluster import build_chart, upload_form
from tests.typing_support import Client

API = "/api/v1"
DEPRECATED_PDB = """apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: {{ .Release.Name }}-pdb
spec:
  minAvailable: 1
"""


async def report_of(resp: Any) -> Any:
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def test_lint_by_reference(repo_client: Client) -> None:
    body = {"chartRef": "r/demo", "version": "0.1.0"}
    report = await report_of(await repo_client.post(f"{API}/charts/lint", json=body))
    assert report["chartsLinted"] == 1
    assert report["passed"] is True
    assert {"severity": "INFO", "path": "Chart.yaml", "message": "icon is recommended"} in report[
        "messages"
    ]
    missing = await repo_client.post(f"{API}/charts/lint", json={"chartRef": "r/nope"})
    assert missing.status == 404


async def test_a_known_warning_fails_only_under_strict(client: Client, tmp_path: Path) -> None:
    archive = build_chart(tmp_path, "old", templates={"pdb.yaml": DEPRECATED_PDB})
    lenient = await report_of(
        await client.post(f"{API}/charts/lint/upload", data=upload_form(archive))
    )
    (warning,) = [m for m in lenient["messages"] if m["severity"] == "WARNING"]
    assert warning["path"] == "templates/pdb.yaml"
    assert "policy/v1beta1 PodDisruptionBudget is deprecated" in warning["message"]
    assert lenient["passed"] is True
    options = {"strict": True, "kubeVersion": "v1.30.0"}
    resp = await client.post(f"{API}/charts/lint/upload", data=upload_form(archive, options))
    strict = await report_of(resp)
    assert strict["passed"] is False
    assert strict["errors"]
    resp = await client.post(f"{API}/charts/lint/upload", data=upload_form(archive, {"strikt": 1}))
    assert resp.status == 400
    assert [e["field"] for e in (await resp.json())["errors"]] == ["request.strikt"]
