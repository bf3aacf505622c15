"""Benchmark: install + uninstall of the ``helm create`` scaffold through the service, against Helm.

Prints, measured in the same run against the same simulated cluster:
- the median time and CPU of install + uninstall through the service (``POST /releases/upload``
  then ``DELETE /releases/{name}``) and calling ``helm_python`` directly, once with helm_python's
  defaults and once with the Helm options the service uses (``chartsvc.helm.writes``: Helm's
  client-side OpenAPI pass off, which changes no outcome); the target, service within 1.2x, is
  against the latter, so it measures the service's own overhead (the former is shown only, and
  left out with ``--no-defaults`` and in quick and smoke runs);
- 8 concurrent installs of different releases against one install, through the service (target:
  under 2x) and, next to it, through helm_python with the same options.

Each is measured twice. Against the bare simulator an install is pure CPU, in this process or the
service and in the simulator, so on a machine with two cores eight installs cannot finish in under
2x one, whoever runs them: the helm_python figure shows that floor. Then through a proxy that
delays each client write by ``--latency-ms`` (20 by default, a real API server's round trip with an
etcd write), where an install waits on the cluster as it does in practice, and concurrency shows
whether writes to different releases overlap.

The simulator (``wharf kubesim``) and the service (``wharf serve chartsvc``) run as child processes,
so neither shares this process's interpreter; both get ``KUBECACHEDIR`` under the run's temporary
directory (Helm reads its environment at process start).
Run: ``.venv/bin/python scripts/bench/chartsvc_releases.py [--rounds 15 --concurrency 8]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import aiohttp
import helm_python as helm
from harness import bench_main, child, cpu_seconds, free_port, wait_ready, wait_until
from report import Report

from chartsvc.helm import MAX_CALLS, writes
from chartsvc.helm.releases import BURST, QPS

KEY = "bench-key"
NAMESPACE = "default"
WHARF = str(Path(sys.executable).parent / "wharf")


def scaffold(work: Path) -> bytes:
    helm.Chart.create("bench", work).close()
    return Path(helm.package(work / "bench", destination=work)).read_bytes()


class Direct:
    """helm_python on the same cluster, each call on a worker thread of its own pool, as the
    service does; ``as_service`` installs with the Helm options the service uses
    (``chartsvc.helm.writes``: Helm's client-side OpenAPI pass off), else with helm_python's
    defaults."""

    def __init__(self, kubeconfig: Path, archive: bytes, *, as_service: bool) -> None:
        self.pool = ThreadPoolExecutor(MAX_CALLS)
        # The service's own client limits, so both sides wait on the cluster, not on themselves.
        self.config = helm.Config(
            kubeconfig_path=str(kubeconfig), namespace=NAMESPACE, qps=QPS, burst_limit=BURST
        )
        self.chart = helm.Chart.load_archive(archive)
        self.as_service = as_service

    def _install(self, name: str) -> None:
        if self.as_service:
            writes.write(
                "install",
                self.config,
                self.chart,
                name,
                {},
                namespace=NAMESPACE,
                options=writes.WriteOptions(),
            )
        else:
            self.config.install(self.chart, name, namespace=NAMESPACE)

    async def install(self, name: str) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self.pool, self._install, name)

    async def uninstall(self, name: str) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self.pool, self.config.uninstall, name)

    def close(self) -> None:
        self.pool.shutdown()
        self.chart.close()
        self.config.close()


class Service:
    def __init__(self, session: aiohttp.ClientSession, base: str, archive: bytes) -> None:
        self.session, self.base, self.archive = session, base, archive

    async def install(self, name: str) -> None:
        form = aiohttp.FormData()
        form.add_field("chart", self.archive, filename="bench.tgz", content_type="application/gzip")
        form.add_field(
            "request", json.dumps({"releaseName": name}), content_type="application/json"
        )
        url = f"{self.base}/releases/upload"
        async with self.session.post(url, data=form, headers={"X-API-Key": KEY}) as resp:
            assert resp.status == 201, await resp.text()

    async def uninstall(self, name: str) -> None:
        url = f"{self.base}/releases/{name}"
        async with self.session.delete(url, headers={"X-API-Key": KEY}) as resp:
            assert resp.status == 200, await resp.text()


Side = Direct | Service


async def cycle(side: Side, name: str) -> float:
    start = time.perf_counter()
    await side.install(name)
    await side.uninstall(name)
    return time.perf_counter() - start


async def concurrent_installs(side: Side, prefix: str, n: int) -> tuple[float, float]:
    """(seconds for one install, seconds for ``n`` concurrent installs); uninstalls not timed."""
    start = time.perf_counter()
    await side.install(f"{prefix}-one")
    one = time.perf_counter() - start
    names = [f"{prefix}-{i}" for i in range(n)]
    start = time.perf_counter()
    await asyncio.gather(*(side.install(name) for name in names))
    many = time.perf_counter() - start
    await asyncio.gather(*(side.uninstall(name) for name in [*names, f"{prefix}-one"]))
    return one, many


async def measure(args: argparse.Namespace, sides: dict[str, Side], service_pid: int) -> None:
    repeats = args.repeats
    warm_ups = repeats if args.warm_ups is None else args.warm_ups
    for i in range(warm_ups):  # warm every side: clients, discovery, chart caches
        for key, side in sides.items():
            await cycle(side, f"warm-{key}{i}")
    times: dict[str, list[float]] = {key: [] for key in sides}
    cpu = dict.fromkeys(sides, 0.0)
    for i in range(args.rounds):  # interleaved, so drift hits every side alike
        for key, side in sides.items():
            before = cpu_seconds(service_pid) if key == "service" else time.process_time()
            times[key].append(await cycle(side, f"{key}{i}"))
            after = cpu_seconds(service_pid) if key == "service" else time.process_time()
            cpu[key] += after - before
    for key in sides:
        print(f"install+uninstall  {LABELS[key]:36s} {statistics.median(times[key]) * 1000:7.1f} ms"
              f"   CPU {cpu[key] / args.rounds * 1000:6.1f} ms (Helm included)")  # fmt: skip
    ratio = statistics.median(times["service"]) / statistics.median(times["same"])
    print(f"  service / helm_python with the same options = {ratio:.2f}x   (target <= 1.2x)")
    out: Report = args.report
    where = "bare simulator" if args.latency == 0 else f"{args.latency_ms:g} ms latency"
    out.figure(
        f"install+uninstall, service / helm_python ({where})",
        ratio,
        "x",
        at_most=1.2,
        baseline="helm_python, the service's options",
    )

    ratios = {}
    for key in ("same", "service"):
        runs = [
            await concurrent_installs(sides[key], f"c{key[0]}{r}", args.concurrency)
            for r in range(repeats)
        ]
        one = statistics.median(r[0] for r in runs)
        many = statistics.median(r[1] for r in runs)
        ratios[key] = many / one
        print(
            f"{args.concurrency} concurrent installs  {LABELS[key]:36s} one {one * 1000:7.1f} ms"
            f"   {args.concurrency} {many * 1000:7.1f} ms   = {many / one:.2f}x"
        )
    print(
        f"  service: {args.concurrency} concurrent / one = {ratios['service']:.2f}x (target < 2x)"
    )
    # On the bare simulator an install is CPU alone: the floor is helm_python's own ratio, and the
    # service is judged against it; with the cluster's latency, concurrency must overlap the waits.
    n = args.concurrency
    if args.latency == 0:
        out.figure(
            f"{n} concurrent / one install, service over helm_python's ({where})",
            ratios["service"] / ratios["same"],
            "x",
            at_most=1.1,
            baseline=f"helm_python: {ratios['same']:.2f}x",
        )
    else:
        out.figure(
            f"{n} concurrent / one install, service ({where})", ratios["service"], "x", at_most=2
        )


LABELS = {
    "defaults": "helm_python, its defaults",
    "same": "helm_python, the service's options",
    "service": "service",
}


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-releases-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "KUBECACHEDIR": str(work / "kubecache"), "HOME": str(work)}
        kubeconfig, sim_port = work / "kubeconfig", free_port()
        sim_args = [WHARF, "kubesim", "--port", str(sim_port), "--kubeconfig", str(kubeconfig)]
        archive = scaffold(work)
        with child(sim_args, env, work / "kubesim.log"):
            await wait_until(lambda: asyncio.to_thread(kubeconfig.exists), "wharf kubesim")
            print("== the bare simulator")
            args.latency = 0
            await scenario(args, work, env, kubeconfig, archive)
            proxy_port = free_port()
            proxy = await asyncio.start_server(
                _delaying(sim_port, args.latency_ms / 1000), "127.0.0.1", proxy_port
            )
            async with proxy:
                delayed = _pointed_at(kubeconfig, proxy_port, work / "kubeconfig-delayed")
                print(f"== through {args.latency_ms:g} ms of latency per client write")
                args.latency = 1
                await scenario(args, work, env, delayed, archive)


async def scenario(
    args: argparse.Namespace, work: Path, env: dict[str, str], kubeconfig: Path, archive: bytes
) -> None:
    svc_port = free_port()
    svc_args = [WHARF, "serve", "chartsvc", "--port", str(svc_port), "--log-level", "WARNING"]
    for setting in (
        f"chartsvc.data-dir={work / 'data'}",
        f"chartsvc.kube.kubeconfig={kubeconfig}",
        "chartsvc.security.mode=FULL",
        f"chartsvc.security.api-key={KEY}",
    ):
        svc_args += ["--set", setting]
    with child(svc_args, env, work / f"chartsvc-{svc_port}.log") as svc:
        async with aiohttp.ClientSession() as session:
            base = f"http://127.0.0.1:{svc_port}"
            await wait_ready(session, base)
            direct = {"same": Direct(kubeconfig, archive, as_service=True)}
            if args.defaults:
                direct = {"defaults": Direct(kubeconfig, archive, as_service=False), **direct}
            try:
                sides: dict[str, Side] = {
                    **direct,
                    "service": Service(session, f"{base}/api/v1", archive),
                }
                await measure(args, sides, svc.pid)
            finally:
                for side in direct.values():
                    side.close()


def _pointed_at(kubeconfig: Path, port: int, target: Path) -> Path:
    text = kubeconfig.read_text()
    server = next(line for line in text.splitlines() if "server:" in line)
    target.write_text(text.replace(server, server.rsplit(":", 1)[0] + f":{port}"))
    return target


def _delaying(upstream_port: int, delay: float) -> Callable[..., Awaitable[None]]:
    """A TCP proxy to the simulator that holds each client write for ``delay`` seconds."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, wait: float) -> None:
        try:
            while data := await reader.read(65536):
                if wait:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream_port)
        with contextlib.suppress(asyncio.CancelledError):  # the proxy closing at the end
            await asyncio.gather(pipe(reader, up_writer, delay), pipe(up_reader, writer, 0))

    return handle


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs of the concurrent installs (and warm-ups)"
    )
    parser.add_argument("--warm-ups", type=int, help="cycles of each side not timed (--repeats)")
    parser.add_argument(
        "--no-defaults",
        dest="defaults",
        action="store_false",
        help="skip helm_python with its own defaults (shown only, never judged)",
    )
    return bench_main(
        "chartsvc_releases",
        parser,
        bench,
        # Quick: without helm_python's own defaults, a side that is shown and never judged.
        quick={"rounds": 5, "repeats": 2, "defaults": False},
        # Smoke: 5 ms of latency, not 20: the delayed scenario still runs, its waits shorter; no
        # warm-up cycles (the one timed cycle is cold, and nothing is judged).
        smoke={"rounds": 1, "concurrency": 2, "repeats": 1, "warm_ups": 0, "latency_ms": 5.0},
    )


if __name__ == "__main__":
    raise SystemExit(main())
