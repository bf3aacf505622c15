"""Cluster credentials through ``kubeclient.api_client`` against the simulator, with the real exec
plugin ``tests/execplugin.py``: tokens renewed before they expire (one plugin run for many waiting
requests), the plugin's contract (cluster info, never interactive, a time limit, clear failures),
token files re-read when they change, and certificates that leave no copy behind."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import kubeclient
from kubeclient import KubeConfigError, credentials
from kubeclient.tls import client_tls
from kubesim import Simulator
from kubesim.http import tls
from tests.kubecreds_support import (
    ACCOUNT,
    Plugin,
    exec_kubeconfig,
    exec_user,
    plugin,
    sim,
    sim_request,
    status_of,
)

__all__ = ["plugin", "sim"]


@contextlib.asynccontextmanager
async def client_for(sim: Simulator, tmp_path: Path, user: dict[str, Any]) -> AsyncIterator[Any]:
    """A cluster client of ``sim`` with ``user``'s credentials, closed on the way out."""
    path = exec_kubeconfig(sim, tmp_path / "kubeconfig", user)
    config = kubeclient.load([path])
    assert config is not None
    client = await kubeclient.api_client(config, sim.context, workdir=tmp_path / "credentials")
    try:
        yield client
    finally:
        await client.close()


#: What the test account may read (``grant``).
CREDS = "/api/v1/namespaces/creds"


async def refused_then_renewed(client: Any) -> None:
    """A request is refused with 401; the credentials renew once; the request then succeeds."""
    renewal = credentials.Renewal.before(client)
    assert await status_of(client, CREDS) == 401
    assert await renewal.renewed()
    assert await status_of(client, CREDS) == 200


async def test_an_expiring_plugin_token_is_renewed_before_it_expires(
    sim: Simulator, tmp_path: Path, plugin: Plugin
) -> None:
    async with client_for(
        sim, tmp_path, exec_user(sim, plugin, account=ACCOUNT, seconds=2)
    ) as client:
        assert plugin.runs() == 1  # fetched when the client is made
        deadline = time.monotonic() + 7
        while time.monotonic() < deadline:  # crosses three expiries of 2 s tokens
            assert await status_of(client, CREDS) == 200
            await asyncio.sleep(0.3)
        assert 3 <= plugin.runs() <= 8
        info = plugin.info()
        assert info["apiVersion"] == credentials.EXEC_VERSIONS[0]
        assert info["spec"]["interactive"] is False
        assert info["spec"]["cluster"]["server"] == sim.url  # provideClusterInfo
        assert info["stdin_is_terminal"] is False


async def test_many_requests_waiting_for_a_renewal_share_one_plugin_run(
    sim: Simulator, tmp_path: Path, plugin: Plugin
) -> None:
    async with client_for(
        sim, tmp_path, exec_user(sim, plugin, account=ACCOUNT, seconds=2)
    ) as client:
        await asyncio.sleep(2.2)  # the token has expired
        before = plugin.runs()
        statuses = await asyncio.gather(*(status_of(client, CREDS) for _ in range(20)))
        assert statuses == [200] * 20
        assert plugin.runs() == before + 1


async def test_a_refused_token_is_renewed_once_per_refusal_never_in_a_loop(
    sim: Simulator, tmp_path: Path, plugin: Plugin
) -> None:
    user = exec_user(sim, plugin, account=ACCOUNT, mode="bad", claim=3600)
    async with client_for(sim, tmp_path, user) as client:
        creds = credentials.of_client(client)
        assert creds is not None
        seen = creds.generation
        assert await status_of(client, CREDS) == 401
        assert await creds.renew(seen)
        assert await creds.renew(seen)  # a second caller refused by the same token: no new run
        assert plugin.runs() == 2


@pytest.mark.parametrize(
    ("user", "message"),
    [
        ({"interactive_mode": "Always"}, "needs interaction"),
        ({"interactive_mode": None}, "interactiveMode must be"),  # v1 requires it
        ({"api_version": "client.authentication.k8s.io/v1alpha1"}, "apiVersion"),
        ({"mode": "fail"}, "failed with exit status 1"),
    ],
)
async def test_a_plugin_that_cannot_work_fails_clearly(
    sim: Simulator, tmp_path: Path, user: dict[str, Any], message: str, plugin: Plugin
) -> None:
    with pytest.raises(KubeConfigError) as caught:
        async with client_for(sim, tmp_path, exec_user(sim, plugin, account=ACCOUNT, **user)):
            pass
    assert message in caught.value.detail
    assert "login required" not in caught.value.detail  # the plugin's stderr is not echoed
    if "mode" not in user:
        assert plugin.runs() == 0  # refused before running it


async def test_v1beta1_without_interactive_mode_runs_never_interactively(
    sim: Simulator, tmp_path: Path, plugin: Plugin
) -> None:
    user = exec_user(
        sim,
        plugin,
        account=ACCOUNT,
        api_version="client.authentication.k8s.io/v1beta1",
        interactive_mode=None,
    )
    async with client_for(sim, tmp_path, user) as client:
        assert await status_of(client, CREDS) == 200
        assert plugin.info()["spec"]["interactive"] is False


async def test_a_plugin_that_never_answers_is_stopped(
    sim: Simulator, tmp_path: Path, plugin: Plugin
) -> None:
    entry = exec_user(sim, plugin, account=ACCOUNT, mode="hang")["exec"]
    runner = credentials.ExecPlugin.from_kubeconfig(entry, {"server": sim.url})
    runner.timeout_s = 0.5
    started = time.monotonic()
    with pytest.raises(credentials.CredentialError, match=r"did not answer within 0\.5s"):
        await runner.fetch()
    assert time.monotonic() - started < 5


async def test_a_token_file_is_read_again_when_it_changes(sim: Simulator, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(sim.token + "\n")
    async with client_for(sim, tmp_path, {"tokenFile": str(token_file)}) as client:
        assert await status_of(client, CREDS) == 200
        token_file.write_text("revoked\n")
        os.utime(token_file, (time.time() + 5, time.time() + 5))
        await asyncio.sleep(credentials.TOKEN_FILE_CHECK_S + 0.1)
        assert await status_of(client, CREDS) == 401  # the new content is what is sent
        token_file.write_text(sim.token)
        os.utime(token_file, (time.time() + 10, time.time() + 10))
        await asyncio.sleep(credentials.TOKEN_FILE_CHECK_S + 0.1)
        assert await status_of(client, CREDS) == 200


async def test_an_in_cluster_token_rotated_by_the_kubelet_is_read_again_on_a_401(
    sim: Simulator, tmp_path: Path
) -> None:
    folder = tmp_path / "serviceaccount"  # as the kubelet mounts it: token -> ..data/token
    folder.mkdir()
    (folder / "ca.crt").write_bytes(sim.ca_path.read_bytes())
    (folder / "namespace").write_text("creds")
    _rotate(folder, await _mint(sim, seconds=2))
    env = {"KUBERNETES_SERVICE_HOST": sim.host, "KUBERNETES_SERVICE_PORT": str(sim.port)}
    config = kubeclient.in_cluster_config(env, folder)
    assert config is not None
    assert config.contexts()[0].namespace == "creds"
    async with await kubeclient.api_client(
        config, kubeclient.IN_CLUSTER_CONTEXT, workdir=tmp_path / "creds"
    ) as client:
        assert await status_of(client, CREDS) == 200
        # A new bound token of the same size and time: nothing but the server's 401 tells.
        _rotate(folder, await _mint(sim, seconds=5), like=(folder / "token").stat())
        await asyncio.sleep(2.2)  # the first token has expired
        await refused_then_renewed(client)  # the file was read again at once, not in 60 s


def test_outside_a_pod_there_is_no_in_cluster_config(tmp_path: Path) -> None:
    env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    assert kubeclient.in_cluster_config(env, tmp_path) is None  # no token mounted
    (tmp_path / "token").write_text("t")
    assert kubeclient.in_cluster_config({}, tmp_path) is None  # no service address
    with pytest.raises(KubeConfigError, match=r"ca\.crt"):
        kubeclient.in_cluster_config(env, tmp_path)


async def _mint(sim: Simulator, *, seconds: int) -> str:
    namespace, name = ACCOUNT.split("/")
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"expirationSeconds": seconds}}  # fmt: skip
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"
    answer = await sim_request(sim, "POST", path, body)
    return str(answer["status"]["token"])


def _rotate(folder: Path, token: str, *, like: os.stat_result | None = None) -> None:
    """Swap the token in the kubelet's way: a new timestamped folder, ``..data`` re-pointed."""
    fresh = folder / f"..{time.time_ns()}"
    fresh.mkdir()
    (fresh / "token").write_text(token)
    if like is not None:
        assert (fresh / "token").stat().st_size == like.st_size
        os.utime(fresh / "token", ns=(like.st_atime_ns, like.st_mtime_ns))
    (folder / "..data_tmp").symlink_to(fresh.name)
    (folder / "..data_tmp").replace(folder / "..data")
    if not (folder / "token").is_symlink():
        (folder / "token").symlink_to("..data/token")


async def test_certificates_given_as_data_leave_no_copy(sim: Simulator, tmp_path: Path) -> None:
    cert, key = tls.client_certificate(sim.directory, "someone", ["team"], seconds=600)
    pair = {"client-certificate-data": base64.b64encode(cert),
            "client-key-data": base64.b64encode(key)}  # fmt: skip
    user = {"token": sim.token, **{k: v.decode() for k, v in pair.items()}}
    async with client_for(sim, tmp_path, user) as client:
        assert await status_of(client, CREDS) == 200
        workdir = tmp_path / "credentials"
        assert list(workdir.iterdir()) == []  # written while the client loaded them, then removed
        assert oct(workdir.stat().st_mode & 0o777) == oct(0o700)


async def test_a_plugin_client_certificate_is_used_and_renewed_before_it_expires(
    sim: Simulator, tmp_path: Path, plugin: Plugin
) -> None:
    user = exec_user(sim, plugin, account=ACCOUNT, seconds=2, mode="cert")
    async with client_for(sim, tmp_path, user) as client:
        creds = credentials.of_client(client)
        assert creds is not None
        contexts = set()
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:  # crosses two expiries of 2 s certificates
            assert await status_of(client, CREDS) == 200
            assert creds.tls is not None
            contexts.add(id(creds.tls))
            await asyncio.sleep(0.2)
        assert 3 <= plugin.runs() <= 6
        assert len(contexts) == plugin.runs()  # one TLS context per certificate, not per request
        assert list((tmp_path / "credentials").iterdir()) == []  # the key was only loaded


async def test_an_expired_client_certificate_is_refused_and_a_401_renews_it(
    sim: Simulator, tmp_path: Path, plugin: Plugin
) -> None:
    # The plugin claims an hour, but its certificates die after 2 s: only the server's 401 tells.
    user = exec_user(sim, plugin, account=ACCOUNT, seconds=2, claim=3600, mode="cert")
    async with client_for(sim, tmp_path, user) as client:
        assert await status_of(client, CREDS) == 200
        await asyncio.sleep(2.5)
        await refused_then_renewed(client)  # the new certificate goes on a new connection
        assert plugin.runs() == 2


@pytest.mark.parametrize(
    ("status", "message"),
    [
        ({"clientCertificateData": "PEM"}, "together"),
        ({"clientKeyData": "PEM"}, "together"),
        ({}, "no token or client certificate"),
    ],
)
def test_a_plugin_certificate_without_its_key_is_refused(
    status: dict[str, str], message: str
) -> None:
    plugin = credentials.ExecPlugin(api_version=credentials.EXEC_VERSIONS[0], command="plugin")
    doc = {"apiVersion": credentials.EXEC_VERSIONS[0], "kind": "ExecCredential", "status": status}
    with pytest.raises(credentials.CredentialError, match=message):
        plugin._parse(json.dumps(doc).encode())


async def test_a_certificate_that_does_not_match_its_key_is_refused(
    sim: Simulator, tmp_path: Path
) -> None:
    cert, _ = tls.client_certificate(sim.directory, "someone", [], seconds=600)
    _, other_key = tls.client_certificate(sim.directory, "someone", [], seconds=600)
    cluster = {"certificate-authority-data": base64.b64encode(sim.ca_path.read_bytes()).decode()}
    with pytest.raises(credentials.CredentialError, match="cannot be used together"):
        await client_tls(cluster, tmp_path / "credentials", cert, other_key)
    assert list((tmp_path / "credentials").iterdir()) == []


def test_credentials_never_show_their_token() -> None:
    creds = credentials.Credentials(credentials.StaticToken("s3cret-value"))
    assert "s3cret-value" not in repr(creds)
    assert "s3cret-value" not in repr(credentials.Token("s3cret-value", 1.0))
    held = credentials.Token("", 1.0, certificate=b"s3cret-cert", key=b"s3cret-key")
    assert "s3cret" not in repr(held)
