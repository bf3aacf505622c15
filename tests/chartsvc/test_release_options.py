"""Helm CLI write options over HTTP against the simulator: createNamespace, wait and timeout,
description and labels, dry runs, rollback on failure, force, the values modes and maxHistory;
misspelled fields refused."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio.client import CoreV1Api

from chartsvc.releases.model import parse_timeout
from common.errors import ValidationFailed
from kubesim import Simulator
from tests.chartsvc.conftest import KEY
from tests.chartsvc.fixtures_cluster import (
    API,
    INVALID_SERVICE,
    build_chart,
    install,
    install_upload,
    kube_api,
    namespace,
    releases,
    sim,
    upgrade_upload,
)
from tests.guards import assert_json
from tests.typing_support import Client

__all__ = ["namespace", "releases", "sim"]


async def test_install_creates_its_namespace_waits_and_keeps_description_and_labels(
    releases: Client, sim: Simulator
) -> None:
    fresh = f"new-{uuid.uuid4().hex[:6]}"
    missing = await install(releases, fresh)
    assert missing.status == 404, await missing.text()
    options: dict[str, Any] = {
        "createNamespace": True,
        "wait": "watcher",
        "timeout": "2m",
        "description": "first rollout",
        "labels": {"team": "payments"},
    }
    installed = await assert_json(await install(releases, fresh, **options), 201)
    assert installed["info"]["status"] == "deployed"
    assert installed["info"]["description"] == "first rollout"
    async with kube_api(sim) as api:
        await CoreV1Api(api).read_namespace(fresh)
        secrets = await CoreV1Api(api).list_namespaced_secret(fresh, label_selector="owner=helm")
    (stored,) = secrets.items
    assert stored.metadata.labels["team"] == "payments"
    # waited for: the Deployment's pods are ready when the install answers
    resources = await assert_json(
        await releases.get(f"{API}/releases/web/resources?namespace={fresh}")
    )
    assert {(r["kind"], r["status"]) for r in resources} >= {("Deployment", "Current")}


async def test_a_misspelled_or_misplaced_field_is_a_400_naming_it(
    releases: Client, namespace: str
) -> None:
    body = {"chartRef": "r/demo", "releaseName": "web", "namespace": namespace}
    for extra, field in (
        ({"creatNamespace": True}, "creatNamespace"),
        ({"maxHistory": 3}, "maxHistory"),  # an upgrade option: helm install has none
        ({"wait": "forever"}, "wait"),
        ({"timeout": "soon"}, "timeout"),
    ):
        resp = await releases.post(f"{API}/releases", json=body | extra, headers=KEY)
        problem = await assert_json(resp, 400)
        assert [e["field"] for e in problem["errors"]] == [field], problem
    upgrade = {"chartRef": "r/demo", "reuseValues": True, "resetValues": True}
    resp = await releases.put(
        f"{API}/releases/web?namespace={namespace}", json=upgrade, headers=KEY
    )
    assert {e["field"] for e in (await assert_json(resp, 400))["errors"]} == {
        "reuseValues",
        "resetValues",
    }
    listed = await assert_json(await releases.get(f"{API}/releases?namespace={namespace}"))
    assert listed == []


async def test_values_modes_and_max_history_on_upgrade(releases: Client, namespace: str) -> None:
    where = f"{API}/releases/web?namespace={namespace}"
    body = {"chartRef": "r/demo", "releaseName": "web", "namespace": namespace}
    await assert_json(
        await releases.post(
            f"{API}/releases", json=body | {"values": {"a": 1, "b": 1}}, headers=KEY
        ),
        201,
    )

    async def upgrade(**fields: Any) -> Any:
        resp = await releases.put(where, json={"chartRef": "r/demo", **fields}, headers=KEY)
        return await assert_json(resp)

    assert (await upgrade(values={"b": 2}, reuseValues=True))["config"] == {"a": 1, "b": 2}
    assert (await upgrade(values={"c": 3}))["config"] == {"c": 3}
    assert (await upgrade(values={"d": 4}, resetThenReuseValues=True))["config"] == {
        "c": 3,
        "d": 4,
    }
    assert (await upgrade(resetValues=True))["config"] == {}
    await upgrade(values={"e": 5}, maxHistory=2)
    history = await assert_json(
        await releases.get(f"{API}/releases/web/history?namespace={namespace}")
    )
    assert [h["version"] for h in history] == [5, 6]


async def test_force_replaces_objects(releases: Client, namespace: str, tmp_path: Path) -> None:
    archive = build_chart(tmp_path)  # a ConfigMap: replaceable, unlike a Service's clusterIP
    resp = await install_upload(releases, archive, namespace, "cm")
    await assert_json(resp, 201)
    request = {"force": True, "values": {"greeting": "forced"}}
    resp = await upgrade_upload(releases, archive, namespace, "cm", request)
    forced = await assert_json(resp)
    assert (forced["version"], forced["config"]) == (2, {"greeting": "forced"})


async def test_client_dry_run_stores_nothing(releases: Client, namespace: str) -> None:
    body = {"chartRef": "r/demo", "releaseName": "web", "namespace": namespace, "dryRun": "client"}
    dry = await assert_json(await releases.post(f"{API}/releases", json=body, headers=KEY), 200)
    assert "kind: Deployment" in dry["manifest"]
    assert dry["info"]["description"] == "Dry run complete"
    assert await assert_json(await releases.get(f"{API}/releases?namespace={namespace}")) == []


@pytest.mark.parametrize("undo", [False, True])
async def test_rollback_on_failure_leaves_no_failed_release(
    releases: Client, namespace: str, tmp_path: Path, undo: bool
) -> None:
    archive = build_chart(tmp_path, "broken", templates={"svc.yaml": INVALID_SERVICE})
    resp = await install_upload(releases, archive, namespace, "bad", rollbackOnFailure=undo)
    assert resp.status >= 400, await resp.text()
    listed = await assert_json(await releases.get(f"{API}/releases?namespace={namespace}"))
    assert [(r["name"], r["info"]["status"]) for r in listed] == (
        [] if undo else [("bad", "failed")]
    )


async def test_upload_options_are_checked_against_the_spec(
    releases: Client, namespace: str, tmp_path: Path
) -> None:
    archive = build_chart(tmp_path)
    resp = await install_upload(releases, archive, namespace, "up", dryRun="maybe", atomik=True)
    fields = {e["field"] for e in (await assert_json(resp, 400))["errors"]}
    assert fields == {"request.dryRun", "request.atomik"}


async def test_whole_number_floats_are_integers_on_every_write_door(
    releases: Client, namespace: str, tmp_path: Path
) -> None:
    body = {"chartRef": "r/demo", "releaseName": "web", "namespace": namespace, "timeout": 440.0}
    await assert_json(await releases.post(f"{API}/releases", json=body, headers=KEY), 201)
    where = f"{API}/releases/web?namespace={namespace}"
    upgrade = {"chartRef": "r/demo", "timeout": 440.0, "maxHistory": 2.0}
    for _ in range(2):
        await assert_json(await releases.put(where, json=upgrade, headers=KEY))
    history = await assert_json(
        await releases.get(f"{API}/releases/web/history?namespace={namespace}")
    )
    assert [h["version"] for h in history] == [2, 3]  # maxHistory 2.0 kept two
    resp = await install_upload(releases, build_chart(tmp_path), namespace, "up", timeout=440.0)
    await assert_json(resp, 201)
    resp = await releases.put(where, json=upgrade | {"timeout": 440.5}, headers=KEY)
    assert (await assert_json(resp, 400))["errors"][0]["field"] == "timeout"


def test_timeouts_read_as_the_helm_cli_reads_them() -> None:
    assert [parse_timeout(v) for v in (None, 90, "90s", "5m", "1h30m", "2m5s")] == [
        None,
        90,
        90,
        300,
        5400,
        125,
    ]
    for bad in ("", "5", "m", 0, 86401, "25h"):
        with pytest.raises(ValidationFailed):
            parse_timeout(bad)
