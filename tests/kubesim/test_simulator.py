"""The Simulator and CLI entry points: TLS and tokens, plain HTTP, several clusters at once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client import ApiClient

from common.kubesim import Simulator
from tests.kubesim.conftest import Raw, api_client

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
            await client.CoreV1Api(api_a).create_namespace({"metadata": {"name": "only-a"}})
            names = await client.CoreV1Api(api_b).list_namespace()
            assert "only-a" not in {n.metadata.name for n in names.items}


async def test_plain_http_for_benchmarks(tmp_path: Path) -> None:
    async with Simulator(tmp_path, tls=False) as sim, aiohttp.ClientSession() as session:
        assert sim.url.startswith("http://")
        async with session.get(sim.url + "/api/v1/namespaces") as resp:
            assert resp.status == 200
        doc = yaml.safe_load(sim.kubeconfig_path.read_text())
        assert "certificate-authority-data" not in doc["clusters"][0]["cluster"]


async def test_cli_serves_until_interrupted(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc" / "config"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "common.kubesim",
        "--port",
        "0",
        "--kubeconfig",
        str(kubeconfig),
        "--context",
        "demo",
        "--token",
        "tok",
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
        doc = yaml.safe_load(kubeconfig.read_text())
        assert doc["current-context"] == "demo"
        assert "tok" not in line
    finally:
        proc.send_signal(signal.SIGINT)
        async with asyncio.timeout(20):
            code = await proc.wait()
    assert code == 0, (await proc.stderr.read()).decode() if proc.stderr else ""
