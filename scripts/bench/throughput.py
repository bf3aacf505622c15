"""Benchmark: requests per second of each service's cheapest API endpoint under ``wrk`` with 50
connections, against a bare aiohttp hello-world (no access log) measured in the same run; and what
each part of Wharf's request path costs, added to the hello-world one at a time (the access log,
the metrics, the request id and the problem middlewares).

Each service runs as ``wharf serve`` in a child process, as deployed: access log on (written to a
file, as journald would take it), metrics on. Endpoints: chartsvc ``GET /api/v1/repos``, console
``GET /api/v1/clusters``, results ``GET /api/v1/gate`` on a database with one run, and chartsvc's
liveness probe. ``wrk`` comes from the Debian package; the script installs it when missing (as
root) or says how to.

Target: every endpoint at least 50% of the hello-world's requests/s. Exits 1 when missed. Usage:
``.venv/bin/python scripts/bench/throughput.py [--seconds 5 --connections 50]``.
This script must not be imported by the service.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

import aiohttp
from aiohttp import web

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from harness import free_port, wait_ready  # noqa: E402 - sibling

TARGET = 0.5
JUNIT = b'<testsuite name="s" tests="1"><testcase classname="c" name="t"/></testsuite>'


def ensure_wrk() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() != 0:
        sys.exit("wrk is missing: install it with `sudo apt-get install wrk`")
    print("installing wrk from the Debian package ...", flush=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True)
    return shutil.which("wrk") or sys.exit("apt-get installed no wrk")


#: What the hello-world gets, one more at a time, to price each part of Wharf's request path.
LAYERS = ("access-log", "metrics", "request-id", "problems")


def hello_world(port: int, layers: Sequence[str], log: Path | None) -> None:
    """The baseline server: one handler; with ``layers``, Wharf's own middlewares and access log."""
    sys.path.insert(0, str(ROOT))
    from common.app import problem_middleware, request_id_middleware
    from common.logs import AccessLogger, configure_logging
    from common.metrics import Metrics, metrics_middleware

    async def hello(request: web.Request) -> web.Response:
        return web.Response(text="Hello, world")

    middlewares = {
        "metrics": metrics_middleware(Metrics("bench")),
        "request-id": request_id_middleware,
        "problems": problem_middleware,
    }
    app = web.Application(middlewares=[middlewares[m] for m in LAYERS if m in layers[1:]])
    app.router.add_get("/", hello)
    app.router.add_get("/actuator/health/readiness", hello)  # for wait_ready
    logged = "access-log" in layers
    if logged:
        configure_logging("INFO", stream=(log or Path(os.devnull)).open("a"))
    access = {"access_log_class": AccessLogger} if logged else {"access_log": None}
    web.run_app(app, host="127.0.0.1", port=port, print=None, **access)


@contextmanager
def process(command: Sequence[str], log: Path) -> Iterator[None]:
    with log.open("ab") as out:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=out)
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(30)


def serve(service: str, port: int, *settings: str) -> list[str]:
    command = [sys.executable, "-m", "wharf", "serve", service, "--port", str(port)]
    for setting in settings:
        command += ["--set", setting]
    return command


def wrk(binary: str, url: str, *, seconds: int, connections: int) -> float:
    """Requests per second over ``seconds`` with ``connections`` (after a one-second warm-up)."""
    run = [binary, "-t2", f"-c{connections}"]
    subprocess.run([*run, "-d1s", url], check=True, capture_output=True)
    out = subprocess.run(
        [*run, f"-d{seconds}s", url], check=True, capture_output=True, text=True
    ).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise RuntimeError(f"{url}: {errors.group(1)} answers were not 2xx")
    found = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    if not found:
        raise RuntimeError(f"no Requests/sec in wrk's output:\n{out}")
    return float(found.group(1))


async def wait_all(ports: Iterable[int]) -> None:
    async with aiohttp.ClientSession() as session:
        for port in ports:
            for attempt in range(6):  # start-up takes seconds on a busy machine
                try:
                    await wait_ready(session, f"http://127.0.0.1:{port}")
                    break
                except RuntimeError:
                    if attempt == 5:
                        raise


async def prepare(ports: dict[str, int]) -> None:
    """Wait for every server; give results one run so the gate has something to judge."""
    await wait_all(ports.values())
    async with aiohttp.ClientSession() as session:
        form = aiohttp.FormData()
        for name, field in (("project", "demo"), ("branch", "main"), ("commit", "a1b2c3d")):
            form.add_field(name, field)
        form.add_field("junit", JUNIT, filename="junit.xml", content_type="text/xml")
        url = f"http://127.0.0.1:{ports['results']}/api/v1/ingest"
        async with session.post(url, data=form) as resp:
            if resp.status != 201:
                raise RuntimeError(f"ingest answered {resp.status}: {await resp.text()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--hello", type=int, help=argparse.SUPPRESS)  # run the baseline server
    parser.add_argument("--layers", default="", help=argparse.SUPPRESS)
    parser.add_argument("--log", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.hello:
        hello_world(args.hello, [layer for layer in args.layers.split(",") if layer], args.log)
        return 0
    binary = ensure_wrk()
    ports = {name: free_port() for name in ("hello", "chartsvc", "results", "console")}
    layered = {layer: free_port() for layer in LAYERS}
    with tempfile.TemporaryDirectory(prefix="wharf-bench-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        logs = work / "access.log"
        hello = [sys.executable, __file__, "--hello", str(ports["hello"])]
        chartsvc = serve("chartsvc", ports["chartsvc"], f"chartsvc.data-dir={work / 'chartsvc'}")
        results = serve("results", ports["results"], f"results.data-dir={work / 'results'}")
        console = serve(
            "console",
            ports["console"],
            f"console.data-dir={work / 'console'}",
            "console.clusters.warm-up=false",
        )
        for command in (hello, chartsvc, results, console):
            stack.enter_context(process(command, logs))
        for count, layer in enumerate(LAYERS, start=1):
            on = ",".join(LAYERS[:count])
            command = [*hello[:-1], str(layered[layer]), "--layers", on, "--log", str(logs)]
            stack.enter_context(process(command, logs))
        asyncio.run(prepare(ports))
        for port in layered.values():
            asyncio.run(wait_all([port]))
        base = "http://127.0.0.1:{}"
        targets = [
            ("chartsvc GET /api/v1/repos", base.format(ports["chartsvc"]) + "/api/v1/repos"),
            ("console GET /api/v1/clusters", base.format(ports["console"]) + "/api/v1/clusters"),
            (
                "results GET /api/v1/gate",
                base.format(ports["results"]) + "/api/v1/gate?project=demo&branch=main",
            ),
            (
                "chartsvc liveness probe",
                base.format(ports["chartsvc"]) + "/actuator/health/liveness",
            ),
        ]
        measure = {"seconds": args.seconds, "connections": args.connections}
        baseline = wrk(binary, base.format(ports["hello"]) + "/", **measure)
        print(f"{'aiohttp hello-world (no access log)':40} {baseline:9.0f} req/s")
        previous = baseline
        for layer, port in layered.items():  # what each part of the request path costs
            rate = wrk(binary, base.format(port) + "/", **measure)
            cost_us = (1 / rate - 1 / previous) * 1e6
            print(f"{'  + ' + layer:40} {rate:9.0f} req/s  {cost_us:+6.0f} us/request", flush=True)
            previous = rate
        missed = 0
        for name, url in targets:
            rate = wrk(binary, url, **measure)
            ratio = rate / baseline
            verdict = "ok" if ratio >= TARGET else f"below {TARGET:.0%}"
            missed += ratio < TARGET
            print(f"{name:40} {rate:9.0f} req/s  {ratio:6.1%}  {verdict}", flush=True)
        lines = sum(1 for _ in logs.open("rb"))
        print(f"access log lines written: {lines}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
