"""Benchmark: ``GET …/counts`` for every kind of the demo cluster (target: under 300 ms).

The simulator runs the ``demo`` scenario in a child process (this script with ``--serve-sim``), the
console in others (``--serve-console``); the driver times the endpoint over HTTP. Printed: the first
call on a console started afresh and called the moment it is ready (discovery, client and TLS
connections all cold), with the start-up warm-up on and off, ``--starts`` consoles each; the median
and worst of warm calls; how many kinds were counted; and as a baseline from the same run, one
``limit=1`` list of pods timed directly with kubernetes_asyncio (the floor a single count request
has) and that floor times the number of kinds.
Run: ``.venv/bin/python scripts/bench/console_counts.py [--rounds 20] [--starts 3]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from harness import bench_main, kube_api, running_child, running_console, serve_console
from report import Report


def serve_sim(directory: str, settle: float) -> None:
    """Child: a simulator running the demo scenario; prints its kubeconfig path once ``settle``
    seconds have passed, then waits."""
    from kubesim import Simulator

    sim = Simulator(Path(directory), context="demo", scenario="demo", nodes=3)
    sim.start()
    time.sleep(settle)  # let the controllers bring the demo's workloads up
    print(f"ready {sim.kubeconfig_path}", flush=True)
    sys.stdin.read()
    sim.stop()


async def one_count_request(kubeconfig: str, rounds: int) -> float:
    from kubernetes_asyncio import client

    times = []
    async with kube_api(kubeconfig) as api:
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


async def first_call(kubeconfig: str, port: int, data_dir: str, warm_up: str) -> float:
    """A console started afresh, called the moment it says it is ready."""
    with running_console(__file__, kubeconfig, port, data_dir, _warm_up(warm_up)):
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{port}/api/v1/clusters/demo/counts"
            return (await timed_counts(session, url))[0]


def _warm_up(on: str) -> str:
    return f"console.clusters.warm-up={on}"


async def bench(args: argparse.Namespace) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_child(__file__, "--serve-sim", f"{tmp}/sim", str(args.settle)) as (_, kubeconfig),
    ):
        cold = {
            warm_up: [
                await first_call(kubeconfig, args.port, f"{tmp}/c{warm_up}{i}", warm_up)
                for i in range(args.starts)
            ]
            for warm_up in ("true", "false")[: 1 if args.only_warmed else 2]
        }
        with running_console(__file__, kubeconfig, args.port, f"{tmp}/c", _warm_up("true")):
            url = f"http://127.0.0.1:{args.port}/api/v1/clusters/demo/counts"
            async with aiohttp.ClientSession() as session:
                _, body = await timed_counts(session, url)
                warm = [(await timed_counts(session, url))[0] for _ in range(args.rounds)]
        floor = await one_count_request(kubeconfig, args.rounds)
    kinds = len(body["counts"])
    total = sum(int(str(c["count"])) for c in body["counts"])
    print(f"kinds counted: {kinds} ({total} objects), failed: {len(body['failed'])}")
    for warm_up, label in (("true", "with start-up warm-up"), ("false", "warm-up off")):
        times = cold.get(warm_up)
        if not times:
            continue
        print(f"first call on a fresh console ({label}, {len(times)} starts): "
              f"median {statistics.median(times) * 1000:.0f} ms, "
              f"worst {max(times) * 1000:.0f} ms (target < 300 ms)")  # fmt: skip
    print(f"warm calls: median {statistics.median(warm) * 1000:.0f} ms, "
          f"worst {max(warm) * 1000:.0f} ms (target < 300 ms)")  # fmt: skip
    print(f"baseline: one limit=1 pod list via kubernetes_asyncio: {floor * 1000:.1f} ms; "
          f"{kinds} of them one after another: {floor * kinds * 1000:.0f} ms")  # fmt: skip
    out: Report = args.report
    first = max(cold["true"])
    out.figure("counts, first call on a fresh console (worst)", first * 1000, "ms", at_most=300)
    out.figure("counts, warm call (worst)", max(warm) * 1000, "ms", at_most=300)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-sim":
        serve_sim(sys.argv[2], float(sys.argv[3]))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-console":
        serve_console(sys.argv[2], int(sys.argv[3]), sys.argv[4], *sys.argv[5:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--starts", type=int, default=3, help="fresh consoles per variant")
    parser.add_argument(
        "--only-warmed",
        action="store_true",
        help="start no consoles with the warm-up off (shown only, never judged)",
    )
    parser.add_argument("--port", type=int, default=0, help="the console's (default: a free one)")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds the demo runs first")
    return bench_main(
        "console_counts",
        parser,
        bench,
        quick={"rounds": 10, "starts": 2, "only_warmed": True},
        # Smoke: the demo counted as it starts (its workloads still coming up).
        smoke={"rounds": 2, "starts": 1, "only_warmed": True, "settle": 0},
    )


if __name__ == "__main__":
    raise SystemExit(main())
