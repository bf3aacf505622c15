"""Where Helm's cluster credentials live (issue 39 item 7) and how long installs keep them fresh.

Helm reads its kubeconfig from a 0600 file in the service's private ``credentials`` folder, never
from the system temp folder, and the file goes when the Helm configuration closes; leftovers of a
killed run are swept when the service starts. With an exec plugin minting 2 s tokens or client
certificates, Helm's own client renews them: writes keep working across expiries; the service's
release reads renew once on a 401.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest

import kubeclient
from chartsvc.app import create_app
from chartsvc.clusters import ClusterTarget
from chartsvc.helm import Helm
from chartsvc.releases import InstallRequest, ReleaseRef, ReleaseService, UpgradeRequest
from kubesim import Simulator
from tests.chartsvc.conftest import MakeSettings
from tests.chartsvc.fixtures_cluster import API, build_chart, create_namespace
from tests.chartsvc.test_releases_clusters import LocalCharts
from tests.conftest import ApiClient
from tests.kubecreds_support import ACCOUNT, Plugin, exec_kubeconfig, exec_user, plugin, sim

__all__ = ["plugin", "sim"]


def ours_in_system_temp(sim: Simulator, before: set[Path]) -> list[Path]:
    """New files in the system temp folder naming this cluster: a kubeconfig for Helm (its server
    URL), a copy of its CA. By content, since other processes share the folder."""
    found = []
    marks = (sim.url.encode(), sim.ca_path.read_bytes().strip())
    for path in set(Path(tempfile.gettempdir()).iterdir()) - before:
        try:
            head = path.read_bytes()[: 1 << 20] if path.is_file() else b""
        except OSError:
            continue
        if any(mark in head for mark in marks):
            found.append(path)
    return found


#: The plugin gives tokens, or client certificates (``cert``), which Helm's client also renews.
MODES = pytest.mark.parametrize("mode", ["", "cert"])


@MODES
async def test_helm_reads_a_private_kubeconfig_and_renews_plugin_tokens(
    sim: Simulator, tmp_path: Path, mode: str, plugin: Plugin
) -> None:
    user = exec_user(sim, plugin, account=ACCOUNT, seconds=2, mode=mode)
    config = kubeclient.load([exec_kubeconfig(sim, tmp_path / "kubeconfig", user)])
    assert config is not None
    target = ClusterTarget.from_kubeconfig(config, sim.context)
    namespace = f"helm-creds-{mode or 'token'}"
    await create_namespace(sim, namespace)
    before = set(Path(tempfile.gettempdir()).iterdir())
    credentials = tmp_path / "credentials"
    helm = Helm(temp_dir=tmp_path / "tmp", credentials_dir=credentials)
    service = ReleaseService(engine=helm.releases, charts=LocalCharts(build_chart(tmp_path)))
    try:
        request = InstallRequest(
            release_name="rel", namespace=namespace, chart_ref="local/probe", values={"a": 1}
        )
        assert (await service.install(target, request)).status == "deployed"
        files = [p for p in credentials.rglob("*") if p.is_file()]
        assert [p.name for p in files] == ["kubeconfig"]  # the open Helm configuration's
        assert files[0].stat().st_mode & 0o777 == 0o600
        assert credentials.stat().st_mode & 0o777 == 0o700
        assert ours_in_system_temp(sim, before) == []  # not even while Helm holds it open
        runs = plugin.runs()
        await asyncio.sleep(2.5)  # every token minted so far has expired
        release = ReleaseRef(target, namespace, "rel")
        upgraded = await service.upgrade(release, UpgradeRequest(chart_ref="local/probe"))
        assert upgraded.version == 2
        assert plugin.runs() > runs  # Helm's client ran the plugin again
        await service.uninstall(release)
    finally:
        await service.close()
        await asyncio.to_thread(helm.close)
    assert list(credentials.iterdir()) == []  # removed with the configuration
    assert ours_in_system_temp(sim, before) == []


async def test_leftovers_of_a_killed_run_are_swept_at_start(
    api_client: ApiClient, make_settings: MakeSettings, sim: Simulator, tmp_path: Path
) -> None:
    credentials = tmp_path / "data" / "credentials"  # make_settings' data dir
    (credentials / "helm-abc123").mkdir(parents=True)
    (credentials / "helm-abc123" / "kubeconfig").write_text("token: left-behind")
    (credentials / "kube-def456").mkdir()
    (credentials / "stray").write_text("x")
    path = exec_kubeconfig(sim, tmp_path / "kubeconfig", {"token": sim.token})
    client = await api_client(create_app(make_settings(f"chartsvc.kube.kubeconfig={path}")))
    assert list(credentials.iterdir()) == []
    assert (await client.get(f"{API}/releases")).status == 200


@MODES
async def test_release_reads_renew_once_on_a_401(
    sim: Simulator, tmp_path: Path, mode: str, plugin: Plugin
) -> None:
    # The plugin claims an hour, but its credentials die after 2 s: only the server's 401 tells.
    user = exec_user(sim, plugin, account=ACCOUNT, seconds=2, claim=3600, mode=mode)
    config = kubeclient.load([exec_kubeconfig(sim, tmp_path / "kubeconfig", user)])
    assert config is not None
    target = ClusterTarget.from_kubeconfig(config, sim.context)
    helm = Helm(temp_dir=tmp_path / "tmp", credentials_dir=tmp_path / "credentials")
    service = ReleaseService(engine=helm.releases, charts=LocalCharts(build_chart(tmp_path)))
    try:
        assert await service.list_releases(target, "default") == []
        assert plugin.runs() == 1
        await asyncio.sleep(2.5)
        assert await service.list_releases(target, "default") == []
        assert plugin.runs() == 2
    finally:
        await service.close()
        await asyncio.to_thread(helm.close)
