"""The Simulator and CLI entry points: TLS and tokens, plain HTTP, several clusters at once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client import ApiClient

from kubesim import Simulator, cli
from tests.kubesim.conftest import KUBECTL, Raw, api_client

ROOT = Path(__file__).resolve().parents[2]


async def test_kubeconfig_and_token(tmp_path: Path) -> None:
    async with Simulator(tmp_path, token="s3cret", context="alpha") as sim:
        doc = yaml.safe_load(sim.kubeconfig_path.read_text())
        assert doc["current-context"] == "alpha"
        assert doc["users"][0]["user"]["token"] == "s3cret"
        assert doc["clusters"][0]["cluster"]["server"] == sim.url
        assert "certificate-authority-data" in doc["clusters"][0]["cluster"]
        assert oct(sim.kubeconfig_path.stat().st_mode & 0o777) == "0o600"
        async with aiohttp.ClientSession() as session:
            raw = Raw(sim, session)
            assert (await raw("GET", "/api/v1/namespaces"))[0] == 200
            assert (await raw("GET", "/api/v1/namespaces", token="nope"))[0] == 401
            assert (await raw("GET", "/version", token="nope"))[0] == 200
    assert repr(sim).startswith("Simulator(")
    assert "s3cret" not in repr(sim)


async def test_two_clusters_are_independent(tmp_path: Path) -> None:
    async with Simulator(tmp_path / "a") as a, Simulator(tmp_path / "b") as b:
        assert a.port != b.port
        async with api_client(a, ApiClient) as api_a, api_client(b, ApiClient) as api_b:
            only_a = client.V1Namespace(metadata=client.V1ObjectMeta(name="only-a"))
            await client.CoreV1Api(api_a).create_namespace(only_a)
            names = await client.CoreV1Api(api_b).list_namespace()
            assert "only-a" not in {n.metadata.name for n in names.items}


async def test_plain_http_for_benchmarks(tmp_path: Path) -> None:
    async with Simulator(tmp_path, tls=False) as sim, aiohttp.ClientSession() as session:
        assert sim.url.startswith("http://")
        async with session.get(sim.url + "/api/v1/namespaces") as resp:
            assert resp.status == 200
        doc = yaml.safe_load(sim.kubeconfig_path.read_text())
        assert "certificate-authority-data" not in doc["clusters"][0]["cluster"]


async def test_runs_on_the_event_loop_it_is_given(tmp_path: Path) -> None:
    async with Simulator(tmp_path, event_loop="uvloop") as sim:
        assert sim.call(lambda _: type(asyncio.get_running_loop()).__module__).startswith("uvloop")


async def test_cli_serves_until_interrupted(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc" / "config"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kubesim",
        "--port",
        "0",
        "--kubeconfig",
        str(kubeconfig),
        "--context",
        "demo",
        "--token",
        "tok",
        "--user",
        "jane",
        "--user",
        "ops=team-ops,auditors",
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(20):
            line = (await proc.stdout.readline()).decode()
        assert line.startswith("kubesim serving https://127.0.0.1:"), line
        assert line.endswith(" (uvloop event loop)\n"), line
        printed = [(await proc.stdout.readline()).decode() for _ in range(3)]
        assert printed[1:] == ["user jane: context demo-jane\n", "user ops: context demo-ops\n"]
        doc = yaml.safe_load(kubeconfig.read_text())
        assert doc["current-context"] == "demo"
        assert [c["name"] for c in doc["contexts"]] == ["demo", "demo-jane", "demo-ops"]
        assert "tok" not in line + "".join(printed)
        # Each user is who its context says, in its groups, and RBAC refuses what nobody granted.
        assert _kubectl(kubeconfig, "demo-ops", "auth", "whoami", "-o", "json")["status"][
            "userInfo"
        ]["groups"] == ["team-ops", "auditors", "system:authenticated"]
        denied = subprocess.run(
            [KUBECTL, f"--kubeconfig={kubeconfig}", "--context=demo-jane", "get", "pods"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert denied.returncode == 1
        assert 'User "jane" cannot list resource "pods"' in denied.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        async with asyncio.timeout(20):
            code = await proc.wait()
    assert code == 0, (await proc.stderr.read()).decode() if proc.stderr else ""


def _kubectl(kubeconfig: Path, context: str, *args: str) -> Any:
    done = subprocess.run(
        [KUBECTL, f"--kubeconfig={kubeconfig}", f"--context={context}", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return yaml.safe_load(done.stdout)


@pytest.mark.parametrize("given", ["system:admin", "eve=system:masters", "=nogroup", "a,b"])
def test_cli_refuses_a_user_it_cannot_make(given: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(["--user", given])
    assert stopped.value.code == 2
    assert f"--user: {given!r}" in capsys.readouterr().err
