"""Benchmark: the console's Helm install + uninstall of the ``helm create`` scaffold against the
same cycle through chartsvc.

Prints, measured in the same run against the same simulated cluster and the same chart repository:
the median (and p95) of install + uninstall through the console
(``POST /api/v1/clusters/{id}/helm/releases`` then ``…/{namespace}/{name}/uninstall``) and through
chartsvc (``POST /api/v1/releases`` then ``DELETE /api/v1/releases/{name}``), and their ratio
(target: the console within 1.2x). Both install ``bench/bench`` by reference from one loopback chart
repository the script serves, added to each through its own API (the console's
``POST /api/v1/helm/repos``), so both pull, cache and render the chart alike.

The simulator (``wharf kubesim``), chartsvc and the console run as child processes, each service
with loopback allowed to its chart fetches (the address guard refuses loopback otherwise) and with
``KUBECACHEDIR`` under the run's temporary directory.
Run: ``.venv/bin/python scripts/bench/console_helm.py [--rounds 15]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import ipaddress
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import helm_python as helm
from aiohttp import web
from harness import (
    as_wharf_serves,
    child,
    cpu_seconds,
    free_port,
    percentile,
    wait_ready,
    wait_until,
)
from report import Report, options

KEY = "bench-key"
ADMIN = {"Authorization": aiohttp.encode_basic_auth("admin", "bench")}
NAMESPACE = "default"
CONTEXT = "bench"
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


def serve(kind: str, kubeconfig: str, port: int, data_dir: str) -> None:
    """Child side: chartsvc or the console on loopback, loopback chart fetches allowed."""
    from common.config import load_settings

    if kind == "chartsvc":
        from chartsvc.app import create_app as chartsvc_app
        from chartsvc.settings import Settings as ChartsvcSettings

        given = [
            f"chartsvc.data-dir={data_dir}",
            f"chartsvc.kube.kubeconfig={kubeconfig}",
            "chartsvc.security.mode=FULL",
            f"chartsvc.security.api-key={KEY}",
        ]
        app = chartsvc_app(load_settings(ChartsvcSettings, overrides=given), address_allow=LOOPBACK)
    else:
        from console.app import create_app as console_app
        from console.keys import OUTBOUND_ALLOW
        from console.settings import Settings as ConsoleSettings

        given = [f"console.data-dir={data_dir}", "console.security.admin.password=bench"]
        given.append("console.clusters.impersonate=off")  # the console's own rights
        settings = load_settings(ConsoleSettings, overrides=given)
        app = console_app(settings, environ={"KUBECONFIG": kubeconfig})
        app[OUTBOUND_ALLOW] = LOOPBACK
    as_wharf_serves(app)
    web.run_app(app, host="127.0.0.1", port=port, print=lambda _: None, access_log=None)


def scaffold(work: Path) -> bytes:
    helm.Chart.create("bench", work).close()
    return Path(helm.package(work / "bench", destination=work)).read_bytes()


async def chart_repository(archive: bytes) -> web.AppRunner:
    """A chart repository on loopback holding ``archive`` as ``bench`` 0.1.0."""
    entry = {
        "apiVersion": "v2",
        "name": "bench",
        "version": "0.1.0",
        "urls": ["charts/bench-0.1.0.tgz"],
        "digest": hashlib.sha256(archive).hexdigest(),
    }
    index = json.dumps({"apiVersion": "v1", "entries": {"bench": [entry]}}).encode()
    app = web.Application()
    app.router.add_get("/index.yaml", lambda _: _body(index, "application/x-yaml"))
    app.router.add_get("/charts/bench-0.1.0.tgz", lambda _: _body(archive, "application/gzip"))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    return runner


async def _body(data: bytes, media: str) -> web.Response:
    return web.Response(body=data, content_type=media)


class Console:
    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session, self.base = session, base
        self.releases = f"{base}/api/v1/clusters/{CONTEXT}/helm/releases"

    async def add_repo(self, url: str) -> None:
        body = {"name": "bench", "url": url}
        async with self.session.post(
            f"{self.base}/api/v1/helm/repos", json=body, headers=ADMIN
        ) as r:
            assert r.status == 201, await r.text()

    async def install(self, name: str) -> None:
        body = {"releaseName": name, "namespace": NAMESPACE, "chartRef": "bench/bench"}
        async with self.session.post(self.releases, json=body, headers=ADMIN) as resp:
            assert resp.status == 201, await resp.text()

    async def uninstall(self, name: str) -> None:
        url = f"{self.releases}/{NAMESPACE}/{name}/uninstall"
        async with self.session.post(url, headers=ADMIN) as resp:
            assert resp.status == 200, await resp.text()


class Chartsvc:
    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session, self.base = session, f"{base}/api/v1"
        self.headers = {"X-API-Key": KEY}

    async def add_repo(self, url: str) -> None:
        body = {"name": "bench", "url": url}
        async with self.session.post(f"{self.base}/repos", json=body, headers=self.headers) as r:
            assert r.status == 201, await r.text()

    async def install(self, name: str) -> None:
        body = {"releaseName": name, "namespace": NAMESPACE, "chartRef": "bench/bench"}
        url = f"{self.base}/releases"
        async with self.session.post(url, json=body, headers=self.headers) as resp:
            assert resp.status == 201, await resp.text()

    async def uninstall(self, name: str) -> None:
        url = f"{self.base}/releases/{name}"
        params = {"namespace": NAMESPACE}
        async with self.session.delete(url, params=params, headers=self.headers) as resp:
            assert resp.status == 200, await resp.text()


Side = Console | Chartsvc


async def cycle(side: Side, name: str) -> tuple[float, float]:
    """Milliseconds of the install and of the uninstall."""
    start = time.perf_counter()
    await side.install(name)
    installed = time.perf_counter()
    await side.uninstall(name)
    return (installed - start) * 1000, (time.perf_counter() - installed) * 1000


async def measure(
    sides: dict[str, Side], pids: dict[str, int], rounds: int, warm_ups: int, out: Report
) -> None:
    for i in range(
        warm_ups
    ):  # warm both: cluster clients, discovery, the chart's archive and handle
        for key, side in sides.items():
            await cycle(side, f"warm-{key}-{i}")
    times: dict[str, list[tuple[float, float]]] = {key: [] for key in sides}
    cpu = dict.fromkeys(sides, 0.0)
    for i in range(rounds):  # interleaved, each first in turn, so drift hits both alike
        for key, side in sorted(sides.items(), reverse=i % 2 == 1):
            before = cpu_seconds(pids[key])
            times[key].append(await cycle(side, f"{key}-{i}"))
            cpu[key] += cpu_seconds(pids[key]) - before
    p50: dict[str, float] = {}
    for key, pairs in times.items():
        both = [a + b for a, b in pairs]
        p50[key] = statistics.median(both)
        print(
            f"install+uninstall through {key:8s} p50 {p50[key]:7.1f} ms"
            f"   p95 {percentile(both, 0.95):7.1f} ms   (install p50 "
            f"{statistics.median(a for a, _ in pairs):6.1f}, uninstall p50 "
            f"{statistics.median(b for _, b in pairs):6.1f}; service CPU "
            f"{cpu[key] / rounds * 1000:5.1f} ms a cycle)"
        )
    print(f"console p50 / chartsvc p50 = {p50['console'] / p50['chartsvc']:.2f}x (target <= 1.2x)")
    out.figure(
        "install+uninstall, console / chartsvc p50",
        p50["console"] / p50["chartsvc"],
        "x",
        at_most=1.2,
        baseline=f"chartsvc: {p50['chartsvc']:.0f} ms",
    )


async def bench(rounds: int, warm_ups: int, out: Report) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-console-helm-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "KUBECACHEDIR": str(work / "kubecache"), "HOME": str(work)}
        kubeconfig = work / "kubeconfig"
        repo = await chart_repository(await asyncio.to_thread(scaffold, work))
        repo_port, sim_port, svc_port, console_port = (free_port() for _ in range(4))
        site = web.TCPSite(repo, "127.0.0.1", repo_port)
        await site.start()
        sim = [sys.executable, "-m", "wharf", "kubesim", "--port", str(sim_port)]
        sim += ["--context", CONTEXT, "--kubeconfig", str(kubeconfig)]
        me = [sys.executable, __file__, "--serve"]
        try:
            with contextlib.ExitStack() as stack:
                stack.enter_context(child(sim, env, work / "kubesim.log"))
                await wait_until(lambda: asyncio.to_thread(kubeconfig.exists), "wharf kubesim")
                pids = {}
                for kind, port in (("chartsvc", svc_port), ("console", console_port)):
                    args = [*me, kind, str(kubeconfig), str(port), str(work / kind)]
                    pids[kind] = stack.enter_context(child(args, env, work / f"{kind}.log")).pid
                async with aiohttp.ClientSession() as session:
                    bases = {
                        "chartsvc": f"http://127.0.0.1:{svc_port}",
                        "console": f"http://127.0.0.1:{console_port}",
                    }
                    for base in bases.values():
                        await wait_ready(session, base)
                    sides: dict[str, Side] = {
                        "console": Console(session, bases["console"]),
                        "chartsvc": Chartsvc(session, bases["chartsvc"]),
                    }
                    for side in sides.values():
                        await side.add_repo(f"http://127.0.0.1:{repo_port}")
                    await measure(sides, pids, rounds, warm_ups, out)
        finally:
            await repo.cleanup()


def main() -> int:
    if len(sys.argv) == 6 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warm-ups", type=int, default=3, help="cycles of each side not timed")
    # Smoke: no warm-up cycles; its one timed cycle is cold, and its figure is not judged.
    args = options(parser, quick={"rounds": 6, "warm_ups": 1}, smoke={"rounds": 1, "warm_ups": 0})
    out = Report.of("console_helm", args)
    asyncio.run(bench(args.rounds, args.warm_ups, out))
    return out.emit()


if __name__ == "__main__":
    raise SystemExit(main())
