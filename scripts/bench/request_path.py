"""Benchmark: the CPU each endpoint of ``throughput.py`` costs inside the app, with no socket: the
request goes through the app's router, every middleware and the handler, as the HTTP server would
hand it over, and the response is made but not sent. Beside ``throughput.py``, whose requests per
second swing with the neighbours' load by ±20 %, this is the steady figure to work on the request
path with: what Wharf adds over aiohttp's routing, per endpoint, against the liveness probe in the
same run.

Each service is built with its embedded defaults (``create_app``) and started in this process (its
cleanup contexts open, as under ``wharf serve``); results gets one run so the gate has something to
judge. Each endpoint is asked ``--requests`` times per round; its figure is the least CPU time per
request over ``--rounds`` (the round the neighbours disturbed least). The access log and the
socket are not in these figures: ``throughput.py`` prices them. Usage:
``.venv/bin/python scripts/bench/request_path.py [--requests 3000 --rounds 5]``.
This script must not be imported by the service.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from aiohttp import HttpVersion11, web
from aiohttp.http_parser import RawRequestMessage
from aiohttp.test_utils import TestServer, make_mocked_request
from aiohttp.web_request import Request
from multidict import CIMultiDict, CIMultiDictProxy
from report import Report, options
from throughput import ingest_demo_run
from yarl import URL

from common.config import load_settings
from wharf.services import SERVICES

ENDPOINTS = (
    ("chartsvc liveness probe", "chartsvc", "/actuator/health/liveness"),
    ("chartsvc GET /api/v1/repos", "chartsvc", "/api/v1/repos"),
    ("console GET /api/v1/clusters", "console", "/api/v1/clusters"),
    ("results liveness probe", "results", "/actuator/health/liveness"),
    ("results GET /api/v1/gate", "results", "/api/v1/gate?project=demo&branch=main"),
)


class _Transport:
    """What a request reads of its connection: the peer's and our address."""

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        addresses = {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 8080)}
        return addresses.get(name, default)

    def is_closing(self) -> bool:
        return False


class _Protocol:
    """The connection's protocol as a request sees it (a stand-in for aiohttp's RequestHandler,
    whose socket work ``throughput.py`` measures)."""

    transport = _Transport()
    peername = ("127.0.0.1", 40000)
    sockname = ("127.0.0.1", 8080)
    ssl_context = None
    max_field_size = max_line_length = 8190
    max_headers = 128
    writer = None


def request_maker(app: web.Application, path: str) -> Callable[[], Request]:
    """A fresh request for ``GET path`` each call, as the server makes one per message."""
    template = make_mocked_request("GET", path, app=app)
    protocol = _Protocol()
    loop = asyncio.get_running_loop()

    def make() -> Request:
        message = RawRequestMessage(
            "GET",
            path,
            HttpVersion11,
            CIMultiDictProxy(CIMultiDict()),
            (),
            False,
            None,
            False,
            False,
            URL(path),
        )
        return Request(
            message,
            template._payload,
            protocol,  # type: ignore[arg-type]
            template._payload_writer,
            None,  # type: ignore[arg-type]
            loop,
            client_max_size=1024**2,
            state={},
        )

    return make


async def cpu_per_request(app: web.Application, path: str, *, requests: int, rounds: int) -> float:
    """Least CPU microseconds per request over ``rounds`` of ``requests``."""
    make = request_maker(app, path)
    handle: Callable[[Request], Awaitable[web.StreamResponse]] = app._handle

    async def one() -> None:
        response = await handle(make())
        if response.status != 200:
            raise RuntimeError(f"GET {path} answered {response.status}")

    for _ in range(200):  # warm: caches filled, code paths taken once
        await one()
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        started = time.thread_time()
        for _ in range(requests):
            await one()
        best = min(best, (time.thread_time() - started) / requests * 1e6)
    return best


@asynccontextmanager
async def started(name: str, data: Path, *overrides: str) -> AsyncIterator[TestServer]:
    """Service ``name`` built with its defaults and started in this process, on loopback."""
    service = SERVICES[name]
    settings = load_settings(
        service.settings,
        config_file=None,
        environ={},
        overrides=[f"{name}.data-dir={data / name}", *overrides],
    )
    server = TestServer(service.create_app(settings, {}))
    await server.start_server()
    try:
        yield server
    finally:
        await server.close()


async def run(requests: int, rounds: int, report: Report) -> None:
    with tempfile.TemporaryDirectory(prefix="wharf-bench-") as tmp:
        async with AsyncExitStack() as stack:
            servers = {
                "chartsvc": await stack.enter_async_context(started("chartsvc", Path(tmp))),
                "results": await stack.enter_async_context(started("results", Path(tmp))),
                "console": await stack.enter_async_context(
                    started("console", Path(tmp), "console.clusters.warm-up=false")
                ),
            }
            await ingest_demo_run(str(servers["results"].make_url("")).rstrip("/"))
            floor: float | None = None  # the first endpoint: chartsvc's liveness probe
            for label, service, path in ENDPOINTS:
                app = servers[service].app
                cost = await cpu_per_request(app, path, requests=requests, rounds=rounds)
                extra = "" if floor is None else f"   {cost - floor:+6.1f} us over the probe"
                floor = cost if floor is None else floor
                print(f"{label:32} {cost:7.1f} us CPU/request{extra}", flush=True)
                report.figure(f"{label}, CPU per request", cost, "us")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = options(
        parser, quick={"requests": 1000, "rounds": 3}, smoke={"requests": 20, "rounds": 1}
    )
    report = Report.of("request_path", args)
    if args.requests < 1 or args.rounds < 1:
        parser.error("--requests and --rounds must be at least 1")
    asyncio.run(run(args.requests, args.rounds, report))
    return report.emit()


if __name__ == "__main__":
    sys.exit(main())
