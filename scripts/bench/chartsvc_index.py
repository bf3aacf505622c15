"""Benchmark: a generated 15,000-entry (~15 MB) repository index through the chart service.

Prints, with baselines measured in the same run:
- update time (full download + prepare + atomic store) against ``json.loads`` of the same bytes
  (target: within 2x);
- ``GET /repos/{name}/charts`` and ``.../versions`` p50 after the update (target: under 50 ms);
- the service process's RSS growth over the update against the index size (target: under 3x).

The service runs in a child process (this script with ``--serve``) so its RSS is its own; it reaches
the loopback repository through the explicit allow-list, as the tests do.
Run: ``.venv/bin/python scripts/bench/chartsvc_index.py [--charts 300 --versions 50]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from aiohttp import web
from harness import as_wharf_serves, bench_main, rss_kib, running_child
from report import Report

KEY = "bench-key"


def generate_index(charts: int, versions: int, seed: int = 7) -> bytes:
    """A bitnami-like index: every entry carries the fields real indexes carry."""
    rng = random.Random(seed)
    entries: dict[str, list[dict[str, Any]]] = {}
    for c in range(charts):
        name = f"chart-{c:04d}"
        listed = []
        for v in range(versions):
            version = f"{v // 10}.{v % 10}.{rng.randint(0, 20)}"
            listed.append(
                {
                    "annotations": {
                        "category": rng.choice(["Database", "Infrastructure", "Analytics"]),
                        "images": f"- name: {name}\n  image: docker.io/bitnami/{name}:{version}\n",
                        "licenses": "Apache-2.0",
                    },
                    "apiVersion": "v2",
                    "appVersion": f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
                    "created": f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:00:00.0Z",
                    "dependencies": [
                        {
                            "name": "common",
                            "repository": "oci://registry-1.docker.io/bitnamicharts",
                            "tags": ["bitnami-common"],
                            "version": "2.x.x",
                        }
                    ],
                    "description": f"{name} is a generated chart for benchmarking index handling.",
                    "digest": hashlib.sha256(f"{name}{version}{v}".encode()).hexdigest(),
                    "home": f"https://bitnami.com/stack/{name}",
                    "icon": f"https://bitnami.com/assets/stacks/{name}/img/{name}-stack-220x234.png",
                    "keywords": [name, "database", "sql", "replication", "cluster"],
                    "maintainers": [
                        {"name": "Broadcom, Inc.", "url": "https://github.com/bitnami/charts"}
                    ],
                    "name": name,
                    "sources": [f"https://github.com/bitnami/charts/tree/main/bitnami/{name}"],
                    "urls": [f"https://charts.example.com/{name}-{version}.tgz"],
                    "version": version,
                }
            )
        entries[name] = listed
    document = {"apiVersion": "v1", "entries": entries, "generated": "2024-06-01T00:00:00Z"}
    return json.dumps(document, separators=(",", ":")).encode()


def serve(port: int, data_dir: Path) -> None:
    import ipaddress

    from chartsvc.app import create_app
    from chartsvc.settings import Settings
    from common.config import load_settings

    settings = load_settings(
        Settings,
        overrides=[
            f"chartsvc.data-dir={data_dir}",
            "chartsvc.security.mode=FULL",
            f"chartsvc.security.api-key={KEY}",
        ],
    )
    app = create_app(settings, address_allow=(ipaddress.ip_network("127.0.0.0/8"),))
    as_wharf_serves(app)
    web.run_app(app, host="127.0.0.1", port=port, print=lambda _: print("ready", flush=True))


async def timed(session: aiohttp.ClientSession, method: str, url: str, **kw: Any) -> float:
    start = time.perf_counter()
    async with session.request(method, url, **kw) as resp:
        await resp.read()
        assert resp.status < 300, (resp.status, await resp.text())
    return time.perf_counter() - start


async def add_repo(session: aiohttp.ClientSession, base: str, name: str, url: str) -> float:
    """Seconds to add repository ``name`` (download, prepare and store its index)."""
    body = {"name": name, "url": url}
    return await timed(session, "POST", f"{base}/repos", headers={"X-API-Key": KEY}, json=body)


async def bench(args: argparse.Namespace) -> None:
    raw = generate_index(args.charts, args.versions)
    state = {"etag": '"1"'}
    # The same index as Helm-style YAML, for the YAML path's time (shown only).
    as_yaml = yaml.dump(json.loads(raw), Dumper=yaml.CSafeDumper).encode() if args.yaml else b""

    async def index(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == state["etag"]:
            return web.Response(status=304)
        return web.Response(body=raw, headers={"ETag": state["etag"]})

    async def yaml_index(request: web.Request) -> web.Response:
        return web.Response(body=as_yaml)

    repo_app = web.Application()
    repo_app.router.add_get("/index.yaml", index)
    repo_app.router.add_get("/yaml/index.yaml", yaml_index)
    runner = web.AppRunner(repo_app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    repo_port = runner.addresses[0][1]
    with (
        tempfile.TemporaryDirectory() as data,
        running_child(__file__, "--serve", str(args.port), data) as (child, _),
    ):
        await _measure(args, child.pid, repo_port, raw, state)
    await runner.cleanup()


async def _measure(
    args: argparse.Namespace,
    pid: int,
    repo_port: int,
    raw: bytes,
    state: dict[str, str],
) -> None:
    size_mb = len(raw) / 1e6
    base = f"http://127.0.0.1:{args.port}/api/v1"
    async with aiohttp.ClientSession() as s:
        await timed(s, "GET", f"{base}/repos")
        before = rss_kib(pid)
        add = await add_repo(s, base, "big", f"http://127.0.0.1:{repo_port}")
        after_add = rss_kib(pid)
        updates: list[float] = []
        loads_times: list[float] = []
        for i in range(args.rounds):
            state["etag"] = f'"v{i + 2}"'  # a changed index: full download and prepare every time
            updates.append(await timed(s, "POST", f"{base}/repos/big/update"))
            # json.loads right after each update, so both see the same machine load.
            loads_times.append(_time(lambda: json.loads(raw)))
        not_modified = await timed(s, "POST", f"{base}/repos/big/update")
        charts = [await timed(s, "GET", f"{base}/repos/big/charts") for _ in range(30)]
        versions = [
            await timed(s, "GET", f"{base}/repos/big/charts/chart-{i % args.charts:04d}/versions")
            for i in range(30)
        ]
        after = rss_kib(pid)
        yaml_add: float | None = None
        if args.yaml:
            yaml_add = await add_repo(s, base, "big-yaml", f"http://127.0.0.1:{repo_port}/yaml")
    update, loads = statistics.median(updates), statistics.median(loads_times)
    growth_mb = (after["VmRSS"] - before["VmRSS"]) / 1024
    peak_mb = (after["VmHWM"] - before["VmRSS"]) / 1024
    print(f"index: {args.charts * args.versions} entries, {size_mb:.1f} MB JSON")
    print(f"baseline json.loads p50:      {loads * 1000:7.1f} ms")
    print(f"add (download+prepare+store): {add * 1000:7.1f} ms")
    print(
        f"update p50:                   {update * 1000:7.1f} ms   ratio {update / loads:.2f}x (target <= 2x)"
    )
    print(f"update, 304 not modified:     {not_modified * 1000:7.1f} ms")
    if yaml_add is not None:
        print(f"add of the same index as YAML: {yaml_add * 1000:6.1f} ms (fast Helm-shape reader)")
    print(
        f"GET charts p50:               {statistics.median(charts) * 1000:7.2f} ms (target < 50 ms)"
    )
    print(
        f"GET versions p50:             {statistics.median(versions) * 1000:7.2f} ms (target < 50 ms)"
    )
    print(
        f"RSS before {before['VmRSS'] / 1024:.0f} MB, after add {after_add['VmRSS'] / 1024:.0f} MB, "
        f"after all {after['VmRSS'] / 1024:.0f} MB"
    )
    print(
        f"RSS growth:                   {growth_mb:7.1f} MB   ratio {growth_mb / size_mb:.2f}x file size (target < 3x)"
    )
    print(
        f"peak RSS over start:          {peak_mb:7.1f} MB   ratio {peak_mb / size_mb:.2f}x file size"
    )
    out: Report = args.report
    out.figure("index update / json.loads", update / loads, "x", at_most=2, baseline="json.loads")
    out.figure("GET charts p50", statistics.median(charts) * 1000, "ms", at_most=50)
    out.figure("GET versions p50", statistics.median(versions) * 1000, "ms", at_most=50)
    out.figure("RSS growth / index size", growth_mb / size_mb, "x", at_most=3)


def _time(func: Any) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), Path(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--charts", type=int, default=300)
    parser.add_argument("--versions", type=int, default=50)
    parser.add_argument("--port", type=int, default=0, help="chartsvc's port (default: a free one)")
    parser.add_argument("--rounds", type=int, default=5, help="updates (each after a json.loads)")
    parser.add_argument(
        "--no-yaml",
        dest="yaml",
        action="store_false",
        help="skip adding the same index as YAML (its time is shown only, never judged)",
    )
    return bench_main(
        "chartsvc_index",
        parser,
        bench,
        # Quick: no YAML copy of the index (shown only); the smoke run still adds one.
        quick={"charts": 150, "rounds": 3, "yaml": False},
        smoke={"charts": 10, "versions": 5, "rounds": 1, "yaml": True},
    )


if __name__ == "__main__":
    raise SystemExit(main())
