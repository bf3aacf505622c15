"""Upgrade preview over HTTP against the simulator: a real server-side dry run, three-way values
and a unified diff per object, nothing stored; and the diff functions on their own."""

from __future__ import annotations

from chartsvc.helm import WriteOptions
from chartsvc.releases.preview import diff_manifests, next_values
from tests.chartsvc.conftest import KEY
from tests.chartsvc.fixtures_cluster import API, namespace, releases, sim
from tests.guards import assert_json
from tests.typing_support import Client

__all__ = ["namespace", "releases", "sim"]


async def test_preview_shows_values_and_manifest_changes_and_stores_nothing(
    releases: Client, namespace: str
) -> None:
    body = {
        "chartRef": "r/demo",
        "version": "0.1.0",
        "releaseName": "web",
        "namespace": namespace,
        "values": {"replicaCount": 1, "service": {"port": 80}},
    }
    await assert_json(await releases.post(f"{API}/releases", json=body, headers=KEY), 201)
    where = f"{API}/releases/web/upgrade/preview?namespace={namespace}"
    change = {"chartRef": "r/demo", "version": "0.2.0", "values": {"replicaCount": 3}}
    preview = await assert_json(await releases.post(where, json=change | {"reuseValues": True}))

    values = preview["values"]
    assert values["previous"] == {"replicaCount": 1, "service": {"port": 80}}
    assert values["next"] == {"replicaCount": 3, "service": {"port": 80}}
    assert values["computed"]["replicaCount"] == 3
    assert values["computed"]["image"]["repository"] == "nginx"  # the chart's defaults
    assert "-replicaCount: 1\n+replicaCount: 3\n" in values["diff"]
    assert values["diff"].startswith("--- a/values.yaml\n+++ b/values.yaml\n")
    assert "+replicaCount: 3" in values["computedDiff"]

    by_kind = {m["kind"]: m for m in preview["manifests"]}
    deployment = by_kind["Deployment"]
    assert (deployment["name"], deployment["change"]) == ("web-demo", "changed")
    assert deployment["diff"].startswith(f"--- a/{namespace}/Deployment/web-demo\n")
    assert "-  replicas: 1\n+  replicas: 3\n" in deployment["diff"]
    assert "+    helm.sh/chart: demo-0.2.0" in deployment["diff"]
    assert preview["release"]["version"] == 2
    assert preview["release"]["chart"]["metadata"]["version"] == "0.2.0"

    history = await assert_json(
        await releases.get(f"{API}/releases/web/history?namespace={namespace}")
    )
    assert [h["version"] for h in history] == [1]  # a preview stores nothing

    without_reuse = await assert_json(await releases.post(where, json=change))
    assert without_reuse["values"]["next"] == {"replicaCount": 3}
    assert "-service:\n-  port: 80\n" in without_reuse["values"]["diff"]

    missing = await releases.post(
        f"{API}/releases/nope/upgrade/preview?namespace={namespace}", json=change
    )
    assert missing.status == 404


def test_values_follow_helms_reset_and_reuse_rules() -> None:
    old = {"a": 1, "nested": {"x": 1, "y": 2}}
    assert next_values(old, None, WriteOptions()) == old  # no values: Helm reuses
    assert next_values(old, {"b": 2}, WriteOptions()) == {"b": 2}
    assert next_values(old, {"nested": {"x": 9}}, WriteOptions(reuse_values=True)) == {
        "a": 1,
        "nested": {"x": 9, "y": 2},
    }
    assert next_values(old, {"a": None}, WriteOptions(reset_then_reuse_values=True)) == {
        "nested": {"x": 1, "y": 2}
    }
    assert next_values(old, None, WriteOptions(reset_values=True)) == {}


def test_manifest_diff_per_object() -> None:
    before = (
        "---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
        "  name: a\ndata:\n  k: v1\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: gone\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n"
    )
    after = (
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v2\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n---\napiVersion: v1\n"
        "kind: Service\nmetadata:\n  name: new\n  namespace: other\n"
    )
    diffs, unchanged = diff_manifests(before, after, "ns")
    assert [(d.kind, d.name, d.namespace, d.change) for d in diffs] == [
        ("ConfigMap", "a", "ns", "changed"),
        ("Service", "new", "other", "added"),
        ("Secret", "gone", "ns", "removed"),
    ]
    assert "-  k: v1\n+  k: v2\n" in diffs[0].diff
    assert unchanged == 1
