"""Benchmark: ``GET …/resources/pods/objects`` over 10,000 pods in a simulated cluster.

Prints, with baselines measured in the same run against the same pods:
- the console's streamed, projected list (time until the whole array has arrived) against a direct
  kubernetes_asyncio list, ``CoreV1Api.list_pod_for_all_namespaces()`` (target: within 1.5x); the
  raw variant of the direct list (one request, ``_preload_content=False`` + ``json.loads``) is
  printed too, as the stricter comparison;
- the console process's peak RSS growth over the request (target: under 100 MB), against the size
  of the JSON it streamed.

Three processes: the simulator (this script with ``--serve-sim``; pods are written straight into
its store, realistic in size, with a scheduler name no scheduler serves, so no controller touches
them), the console (``--serve-console``; its RSS is its own), and this driver, which runs the
baselines. Run: ``.venv/bin/python scripts/bench/console_objects.py [--pods 10000 --rounds 3]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import aiohttp
from harness import bench_main, kube_api, rss_kib, running_child, running_console, serve_console
from report import Report

NAMESPACES = 20


def fat_pod(i: int) -> dict[str, Any]:
    """About 3 KB of JSON once the store adds its metadata, like a real pod of a Deployment."""
    app = f"app-{i % 50}"
    return {
        "metadata": {
            "name": f"{app}-7c9f8b6d4-{i:05d}",
            "labels": {"app": app, "pod-template-hash": "7c9f8b6d4", "tier": "backend"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
        },
        "spec": {
            "schedulerName": "bench-no-scheduler",
            "containers": [
                {
                    "name": "app",
                    "image": f"registry.example.com/team/{app}:1.{i % 9}.3",
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                    "env": [{"name": f"SETTING_{k}", "value": f"value-{k}-{i}"} for k in range(8)],
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                        "limits": {"cpu": "500m", "memory": "256Mi"},
                    },
                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
                    "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
                }
            ],
            "volumes": [{"name": "config", "configMap": {"name": f"{app}-config"}}],
        },
    }


def serve_sim(directory: str, pods: int, scenario: str) -> None:
    """Child: a simulator holding ``pods`` pods; prints its kubeconfig path, then waits."""
    from kubesim import Simulator
    from kubesim.http.state import State
    from kubesim.machinery.meta import WriteOptions

    sim = Simulator(Path(directory), context="bench", scenario=scenario)
    sim.start()

    def seed(state: State) -> None:
        pods_rt = state.objects.registry.get("", "v1", "pods")
        namespaces = state.objects.registry.get("", "v1", "namespaces")
        assert pods_rt is not None
        assert namespaces is not None
        opts = WriteOptions(manager="bench")
        for n in range(NAMESPACES if pods else 0):
            state.objects.create(namespaces, "", {"metadata": {"name": f"bench-{n}"}}, opts)
        for i in range(pods):
            state.objects.create(pods_rt, f"bench-{i % NAMESPACES}", fat_pod(i), opts)

    sim.call(seed)
    print(f"ready {sim.kubeconfig_path}", flush=True)
    sys.stdin.read()  # until the driver closes our stdin
    sim.stop()


async def direct_typed(kubeconfig: str) -> tuple[float, int]:
    from kubernetes_asyncio import client

    async with kube_api(kubeconfig) as api:
        start_t = time.perf_counter()
        pods = await client.CoreV1Api(api).list_pod_for_all_namespaces()
        return time.perf_counter() - start_t, len(pods.items)


async def direct_raw(kubeconfig: str) -> tuple[float, int]:
    from kubernetes_asyncio import client

    async with kube_api(kubeconfig) as api:
        start_t = time.perf_counter()
        # Without preloading, the client hands back its raw aiohttp response, not a V1PodList.
        raw = await client.CoreV1Api(api).list_pod_for_all_namespaces(_preload_content=False)
        resp = cast(aiohttp.ClientResponse, raw)
        items = json.loads(await resp.read())["items"]
        resp.release()
        return time.perf_counter() - start_t, len(items)


async def console_stream(url: str) -> tuple[float, int, int]:
    async with aiohttp.ClientSession() as session:
        start_t = time.perf_counter()
        async with session.get(url) as resp:
            assert resp.status == 200, await resp.text()
            body = await resp.read()
        elapsed = time.perf_counter() - start_t
    return elapsed, len(json.loads(body)), len(body)


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sim_args = ("--serve-sim", f"{tmp}/sim", str(args.pods), "empty")
        with (
            running_child(__file__, *sim_args) as (_, kubeconfig),
            running_console(__file__, kubeconfig, args.port, f"{tmp}/console") as console,
        ):
            await _measure(args, kubeconfig, console.pid)


async def _measure(args: argparse.Namespace, kubeconfig: str, console_pid: int) -> None:
    base = f"http://127.0.0.1:{args.port}/api/v1/clusters/bench"
    url = f"{base}/resources/pods/objects"
    # Warm up: discovery and the cluster's client, so only the lists themselves are measured.
    async with aiohttp.ClientSession() as session, session.get(f"{base}/nav") as resp:
        assert resp.status == 200, await resp.text()
    start_rss = rss_kib(console_pid)["VmRSS"]
    typed, raw, ours, growth = [], [], [], []
    size = 0
    for _ in range(args.rounds):
        t, n = await direct_typed(kubeconfig)
        assert n == args.pods, n
        typed.append(t)
        t, n = await direct_raw(kubeconfig)
        raw.append(t)
        t, n, size = await console_stream(url)
        assert n == args.pods, n
        ours.append(t)
        growth.append(max(0, rss_kib(console_pid)["VmHWM"] - start_rss) / 1024)
    m_typed, m_raw, m_ours = (statistics.median(x) for x in (typed, raw, ours))
    print(f"pods: {args.pods}; streamed JSON: {size / 1e6:.1f} MB (projected)")
    print(f"direct kubernetes_asyncio list (typed models): {m_typed:.2f} s")
    print(f"direct kubernetes_asyncio list (raw JSON):     {m_raw:.2f} s")
    print(f"console …/resources/pods/objects (streamed):   {m_ours:.2f} s")
    print(f"ratio vs typed list: {m_ours / m_typed:.2f}x (target <= 1.5x)")
    print(f"ratio vs raw list:   {m_ours / m_raw:.2f}x")
    print(f"console peak RSS growth over its RSS before the first list: {max(growth):.1f} MB "
          "(target < 100 MB)")  # fmt: skip
    out: Report = args.report
    what = f"{args.pods} pods streamed"
    out.figure(
        f"{what} / typed list",
        m_ours / m_typed,
        "x",
        at_most=1.5,
        baseline="kubernetes_asyncio typed list",
    )
    out.figure(
        f"{what} / raw list", m_ours / m_raw, "x", baseline="kubernetes_asyncio raw JSON list"
    )
    out.figure(f"{what}, console peak RSS growth", max(growth), "MB", at_most=100)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-sim":
        serve_sim(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-console":
        serve_console(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--port", type=int, default=0, help="the console's (default: a free one)")
    return bench_main(
        "console_objects",
        parser,
        bench,
        # Quick: the typed list the ratio is taken to costs 3 ms a pod, the console's stream under
        # 1 ms: 1,000 pods twice give the same ratio (about 0.3x against 1.5x) as 10,000 thrice.
        quick={"pods": 1000, "rounds": 2},
        smoke={"pods": 100, "rounds": 1},
    )


if __name__ == "__main__":
    raise SystemExit(main())
