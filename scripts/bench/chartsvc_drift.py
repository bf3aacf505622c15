"""Benchmark: a release's drift through the service against reading its objects straight from the
cluster.

A chart of ``--objects`` objects (ConfigMaps, Secrets, Services and Deployments in equal parts) is
installed through the service into the simulator. Then, interleaved round by round, measured in the
same run:
- ``GET /releases/{name}/drift`` through the service (its first call, which also asks the server's
  dry run for each object's defaults, is timed apart: later calls reuse them);
- the same objects read directly with kubernetes_asyncio: each fetched by name, 16 at a time (as the
  service bounds its own concurrency), and, the cheaper of the two, one labelled list per kind.

The target is drift within 2x of the cheaper direct read. The simulator (``wharf kubesim``) and the
service (``wharf serve chartsvc``) run as child processes.
Run: ``.venv/bin/python scripts/bench/chartsvc_drift.py [--objects 50 --rounds 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import helm_python as helm
import yaml
from harness import bench_main, child, free_port, kube_api, wait_ready, wait_until
from report import Report

if TYPE_CHECKING:
    from kubernetes_asyncio.client import ApiClient

KEY = "bench-key"
NAMESPACE = "default"
RELEASE = "drifty"
WHARF = str(Path(sys.executable).parent / "wharf")
#: kind: (collection path, template); a quarter of the objects each.
KINDS = {
    "ConfigMap": (
        "/api/v1/namespaces/default/configmaps",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata: {{key: value-{i}}}\n",
    ),
    "Secret": (
        "/api/v1/namespaces/default/secrets",
        "apiVersion: v1\nkind: Secret\nmetadata: {{name: {name}}}\nstringData: {{pw: p-{i}}}\n",
    ),
    "Service": (
        "/api/v1/namespaces/default/services",
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\n"
        "spec: {{selector: {{app: {name}}}, ports: [{{port: 80}}]}}\n",
    ),
    "Deployment": (
        "/apis/apps/v1/namespaces/default/deployments",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n"
        "  replicas: 0\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n"
        "    metadata: {{labels: {{app: {name}}}}}\n"
        "    spec: {{containers: [{{name: c, image: nginx}}]}}\n",
    ),
}


def chart(work: Path, objects: int) -> tuple[bytes, list[str]]:
    """The packaged chart and the API path of each of its objects."""
    root = work / "drifty"
    (root / "templates").mkdir(parents=True)
    meta = {"apiVersion": "v2", "name": "drifty", "version": "0.1.0"}
    (root / "Chart.yaml").write_text(yaml.safe_dump(meta))
    docs, paths = [], []
    for i in range(objects):
        kind = list(KINDS)[i % len(KINDS)]
        collection, template = KINDS[kind]
        name = f"{kind.lower()}-{i}"
        docs.append(template.format(name=name, i=i))
        paths.append(f"{collection}/{name}")
    (root / "templates" / "all.yaml").write_text("---\n".join(docs))
    return Path(helm.package(root, destination=work)).read_bytes(), paths


async def fetch_each(api: ApiClient, paths: list[str]) -> None:
    gate = asyncio.Semaphore(16)

    async def one(path: str) -> None:
        async with gate:
            await _get(api, path)

    await asyncio.gather(*(one(p) for p in paths))


async def list_kinds(api: ApiClient) -> None:
    query = [("labelSelector", "app.kubernetes.io/managed-by=Helm")]
    await asyncio.gather(*(_get(api, collection, query) for collection, _ in KINDS.values()))


async def _get(api: ApiClient, path: str, query: list[tuple[str, str]] | None = None) -> None:
    resp = await api.call_api(
        path,
        "GET",
        query_params=query or [],
        auth_settings=["BearerToken"],
        _preload_content=False,
    )
    try:
        await resp.read()
        assert resp.status == 200, resp.status
    finally:
        resp.release()


async def timed(work: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await work()
    return (time.perf_counter() - start) * 1000


async def measure(
    args: argparse.Namespace, session: aiohttp.ClientSession, base: str, kubeconfig: Path
) -> None:
    out: Report = args.report
    url = f"{base}/releases/{RELEASE}/drift"

    async def drift() -> None:
        async with session.get(url) as resp:
            body = await resp.json()
            assert resp.status == 200, body
            assert body["summary"]["in_sync"] == args.objects, body["summary"]

    async def status() -> None:
        async with session.get(f"{base}/releases/{RELEASE}") as resp:
            await resp.read()
            assert resp.status == 200

    first = await timed(drift)
    times: dict[str, list[float]] = {"drift": [], "each": [], "lists": [], "status": []}
    async with kube_api(kubeconfig) as api:
        await list_kinds(api)  # warm the direct client's connections
        for _ in range(args.rounds):
            times["drift"].append(await timed(drift))
            times["each"].append(await timed(lambda: fetch_each(api, args.paths)))
            times["lists"].append(await timed(lambda: list_kinds(api)))
            times["status"].append(await timed(status))
    median = {k: statistics.median(v) for k, v in times.items()}
    n = args.objects
    print(f"drift of {n} objects, first call (dry runs included)  {first:8.1f} ms")
    print(f"drift of {n} objects, median                          {median['drift']:8.1f} ms")
    print(f"{n} objects fetched by name, 16 at a time, median     {median['each']:8.1f} ms")
    print(
        f"one labelled list per kind ({len(KINDS)}), median                {median['lists']:8.1f} ms"
    )
    print(f"the release's status through the service, median      {median['status']:8.1f} ms")
    cheaper = min(median["each"], median["lists"])
    ratio = median["drift"] / cheaper
    print(f"  drift / the cheaper direct read = {ratio:.2f}x   (target <= 2x)")
    out.figure(f"drift of {n} objects, first call", first, "ms")
    out.figure(
        f"drift of {n} objects / reading them directly, median",
        ratio,
        "x",
        at_most=2,
        baseline=f"kubernetes_asyncio: {cheaper:.1f} ms",
    )


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-drift-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "KUBECACHEDIR": str(work / "kubecache"), "HOME": str(work)}
        kubeconfig, sim_port, svc_port = work / "kubeconfig", free_port(), free_port()
        archive, args.paths = chart(work, args.objects)
        sim_args = [WHARF, "kubesim", "--port", str(sim_port), "--kubeconfig", str(kubeconfig)]
        svc_args = [WHARF, "serve", "chartsvc", "--port", str(svc_port), "--log-level", "WARNING"]
        for setting in (
            f"chartsvc.data-dir={work / 'data'}",
            f"chartsvc.kube.kubeconfig={kubeconfig}",
            "chartsvc.security.mode=FULL",
            f"chartsvc.security.api-key={KEY}",
        ):
            svc_args += ["--set", setting]
        with child(sim_args, env, work / "kubesim.log"):
            await wait_until(lambda: asyncio.to_thread(kubeconfig.exists), "wharf kubesim")
            with child(svc_args, env, work / "chartsvc.log"):
                async with aiohttp.ClientSession() as session:
                    base = f"http://127.0.0.1:{svc_port}"
                    await wait_ready(session, base)
                    await install(session, f"{base}/api/v1", archive)
                    await measure(args, session, f"{base}/api/v1", kubeconfig)


async def install(session: aiohttp.ClientSession, base: str, archive: bytes) -> None:
    form = aiohttp.FormData()
    form.add_field("chart", archive, filename="drifty.tgz", content_type="application/gzip")
    form.add_field("request", json.dumps({"releaseName": RELEASE}), content_type="application/json")
    async with session.post(f"{base}/releases/upload", data=form, headers={"X-API-Key": KEY}) as r:
        assert r.status == 201, await r.text()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=20)
    return bench_main(
        "chartsvc_drift", parser, bench, quick={"rounds": 8}, smoke={"rounds": 1, "objects": 8}
    )


if __name__ == "__main__":
    raise SystemExit(main())
