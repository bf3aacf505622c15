"""Benchmark: ``GET …/counts`` for every kind of the demo cluster (target: under 300 ms).

The simulator runs the ``demo`` scenario in a child process (this script with ``--serve-sim``), the
console in another (``--serve-console``); the driver times the endpoint over HTTP. Printed: the
first call (discovery included, cold connections), the median and worst of the warm calls, how many
kinds were counted, and as a baseline from the same run, one ``limit=1`` list of pods timed
directly with kubernetes_asyncio (the floor a single count request has), plus the number of
requests a full count costs against the per-kind floor.
Run: ``.venv/bin/python scripts/bench/console_counts.py [--rounds 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp


def serve_sim(directory: str) -> None:
    """Child: a simulator running the demo scenario; prints its kubeconfig path, then waits."""
    from common.kubesim import Simulator

    sim = Simulator(Path(directory), context="demo", scenario="demo", nodes=3)
    sim.start()
    time.sleep(2.0)  # let the controllers bring the demo's workloads up
    print(f"ready {sim.kubeconfig_path}", flush=True)
    sys.stdin.read()
    sim.stop()


def serve_console(kubeconfig: str, port: int, data_dir: str) -> None:
    from aiohttp import web

    from common.config import load_settings
    from console.app import create_app
    from console.settings import Settings

    settings = load_settings(
        Settings,
        overrides=[f"console.data-dir={data_dir}", "console.security.admin.password=bench"],
    )
    app = create_app(settings, environ={"KUBECONFIG": kubeconfig})
    web.run_app(app, host="127.0.0.1", port=port, print=lambda _: print("ready", flush=True),
                access_log=None)  # fmt: skip


def start(*args: str) -> tuple[subprocess.Popen[str], str]:
    child = subprocess.Popen(
        [sys.executable, __file__, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    if not line.startswith("ready"):
        child.kill()
        raise SystemExit(f"child {args[0]} did not start: {line!r}")
    return child, line.removeprefix("ready").strip()


async def one_count_request(kubeconfig: str, rounds: int) -> float:
    from kubernetes_asyncio import client, config

    cfg = client.Configuration()
    await config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    times = []
    async with client.ApiClient(cfg) as api:
        core = client.CoreV1Api(api)
        await core.list_pod_for_all_namespaces(limit=1)
        for _ in range(rounds):
            start_t = time.perf_counter()
            await core.list_pod_for_all_namespaces(limit=1)
            times.append(time.perf_counter() - start_t)
    return statistics.median(times)


async def timed_counts(
    session: aiohttp.ClientSession, url: str
) -> tuple[float, dict[str, list[dict[str, object]]]]:
    start_t = time.perf_counter()
    async with session.get(url) as resp:
        assert resp.status == 200, await resp.text()
        body = await resp.json()
    return time.perf_counter() - start_t, body


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sim, kubeconfig = start("--serve-sim", f"{tmp}/sim")
        console, _ = start("--serve-console", kubeconfig, str(args.port), f"{tmp}/console")
        try:
            url = f"http://127.0.0.1:{args.port}/api/v1/clusters/demo/counts"
            async with aiohttp.ClientSession() as session:
                first, body = await timed_counts(session, url)
                warm = [(await timed_counts(session, url))[0] for _ in range(args.rounds)]
            floor = await one_count_request(kubeconfig, args.rounds)
        finally:
            for child in (console, sim):
                if child.stdin:
                    child.stdin.close()
                child.terminate()
                child.wait(timeout=30)
    kinds = len(body["counts"])
    total = sum(int(str(c["count"])) for c in body["counts"])
    print(f"kinds counted: {kinds} ({total} objects), failed: {len(body['failed'])}")
    print(f"first call (discovery, cold connections): {first * 1000:.0f} ms")
    print(f"warm calls: median {statistics.median(warm) * 1000:.0f} ms, "
          f"worst {max(warm) * 1000:.0f} ms (target < 300 ms)")  # fmt: skip
    print(f"baseline: one limit=1 pod list via kubernetes_asyncio: {floor * 1000:.1f} ms; "
          f"{kinds} of them one after another: {floor * kinds * 1000:.0f} ms")  # fmt: skip


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-sim":
        serve_sim(sys.argv[2])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-console":
        serve_console(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--port", type=int, default=18932)
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
