"""Benchmark: requests per second of each service's cheapest API endpoint under ``wrk`` with 50
connections, against a bare aiohttp hello-world (no access log) measured in the same run; the service
process's CPU time per request (``/proc/<pid>/stat``, user + system, over the measured requests),
which is the steady figure on a shared machine where req/s swing with the neighbours' load; and what
each part of Wharf's request path costs, added to the hello-world one at a time (the access log, then
the envelope middleware every service has outermost: request id, problem details and metrics).

Each service runs as ``wharf serve`` in a child process, as deployed: access log on (written to a
file, as journald would take it), metrics on. Endpoints: chartsvc ``GET /api/v1/repos``, console
``GET /api/v1/clusters``, results ``GET /api/v1/gate`` on a database with one run, and chartsvc's
liveness probe. The hello-world runs on the event loop ``wharf serve`` chooses
(``common.eventloop``), and the loop of every process is printed. ``wrk`` comes from the Debian
package; the script installs it when missing (as root) or says how to.

The neighbours' load comes and goes within seconds, so an endpoint and the hello-world are measured
in turns: ``--pairs`` rounds, each measuring every endpoint in a short slice beside a slice of the
hello-world, hello first in one round and second in the next (so a load that grows or fades during
a pair weighs on both sides alike); and every round takes every endpoint (so a noisy minute weighs
on all of them, not on the one measured then). An endpoint's share is the median of its shares of
the hello-world slice next to it, and its CPU time per request the least of its slices (the one the
neighbours disturbed least). Every server is warmed up once before. Twelve rounds take about five
minutes; with six, the same tree's shares moved by up to eight points from run to run.

Target: every endpoint at least 60% of the hello-world's requests/s (issue 38; it was 50%); the CPU
time per request against the hello-world's is printed beside it, the steadier figure. Exits 1 when
missed. Usage:
``.venv/bin/python scripts/bench/throughput.py [--seconds 2 --pairs 12 --connections 50] [--quick|--smoke]``.
This script must not be imported by the service.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path

import aiohttp
import attrs
from aiohttp import web
from harness import cpu_seconds, free_port, wait_ready
from report import Report, options

ROOT = Path(__file__).resolve().parents[2]

TARGET = 0.6
JUNIT = b'<testsuite name="s" tests="1"><testcase classname="c" name="t"/></testsuite>'
#: The line each server writes to its stderr at start-up naming its event loop.
LOOP_LINE = re.compile(r"event loop: (\S+)")


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
LAYERS = ("access-log", "envelope")


def hello_world(port: int, layers: Sequence[str]) -> None:
    """The baseline server: one handler, on ``wharf serve``'s event loop; with ``layers``, Wharf's
    own middlewares and access log (to stderr, as ``wharf serve`` writes it)."""
    sys.path.insert(0, str(ROOT))
    from common import eventloop
    from common.app import envelope_middleware
    from common.logs import AccessLogger, configure_logging
    from common.metrics import Metrics

    async def hello(request: web.Request) -> web.Response:
        return web.Response(text="Hello, world")

    middlewares = {"envelope": envelope_middleware(Metrics("bench"))}
    app = web.Application(middlewares=[middlewares[m] for m in LAYERS if m in layers[1:]])
    app.router.add_get("/", hello)
    app.router.add_get("/actuator/health/readiness", hello)  # for wait_ready
    chosen = eventloop.chosen(os.environ)  # the loop `wharf serve` would run on
    loop = eventloop.new_event_loop(chosen)
    print(f"event loop: {chosen}", file=sys.stderr, flush=True)
    logged = "access-log" in layers
    if logged:
        configure_logging("INFO")
    access = {"access_log_class": AccessLogger} if logged else {"access_log": None}
    web.run_app(app, host="127.0.0.1", port=port, print=None, loop=loop, **access)


@attrs.frozen
class Server:
    """A server under test: its process and the file its stderr (and access log) goes to."""

    pid: int
    log: Path

    def event_loop(self) -> str:
        found = LOOP_LINE.search(self.log.read_text("utf-8", "replace"))
        return found.group(1) if found else "?"


@contextmanager
def process(command: Sequence[str], log: Path) -> Iterator[Server]:
    with log.open("ab") as out:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=out)
    try:
        yield Server(proc.pid, log)
    finally:
        proc.terminate()
        proc.wait(30)


def serve(service: str, port: int, *settings: str) -> list[str]:
    command = [sys.executable, "-m", "wharf", "serve", service, "--port", str(port)]
    for setting in settings:
        command += ["--set", setting]
    return command


@attrs.frozen
class Measured:
    rate: float  # requests per second
    cpu_us: float  # the server's CPU time per request, microseconds

    def line(self, name: str) -> str:
        return f"{name:40} {self.rate:9.0f} req/s {self.cpu_us:7.0f} us CPU/request"


def summary(runs: Sequence[Measured]) -> Measured:
    """The median rate and the least CPU per request of ``runs``."""
    return Measured(statistics.median(r.rate for r in runs), min(r.cpu_us for r in runs))


def spread(shares: Sequence[float]) -> str:
    """The median share and the range of the slices' shares."""
    median = statistics.median(shares)
    return f"{median:6.1%} (slices {min(shares):.0%}-{max(shares):.0%})"


def wrk(binary: str, url: str, server: Server, *, seconds: int, connections: int) -> Measured:
    """Requests per second over ``seconds`` with ``connections``, and the CPU ``server`` spent per
    request meanwhile."""
    cpu = cpu_seconds(server.pid)
    out = subprocess.run(
        [binary, "-t2", f"-c{connections}", f"-d{seconds}s", url],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    cpu = cpu_seconds(server.pid) - cpu
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise RuntimeError(f"{url}: {errors.group(1)} answers were not 2xx")
    found = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    count = re.search(r"(\d+) requests in", out)
    if not found or not count:
        raise RuntimeError(f"no Requests/sec in wrk's output:\n{out}")
    return Measured(float(found.group(1)), cpu / max(1, int(count.group(1))) * 1e6)


def in_turn(
    first: Callable[[], Measured], second: Callable[[], Measured], turn: int
) -> tuple[Measured, Measured]:
    """Both measured: first then second in an even turn, second then first in an odd one."""
    if turn % 2:
        b = second()
        return first(), b
    a = first()
    return a, second()


async def wait_all(ports: Iterable[int]) -> None:
    async with aiohttp.ClientSession() as session:
        for port in ports:
            await wait_ready(session, f"http://127.0.0.1:{port}")


async def prepare(ports: dict[str, int]) -> None:
    """Wait for every server; give results one run so the gate has something to judge."""
    await wait_all(ports.values())
    await ingest_demo_run(f"http://127.0.0.1:{ports['results']}")


async def ingest_demo_run(base: str) -> None:
    """One run of project ``demo`` on ``main`` into the results service at ``base``."""
    form = aiohttp.FormData()
    for name, field in (("project", "demo"), ("branch", "main"), ("commit", "a1b2c3d")):
        form.add_field(name, field)
    form.add_field("junit", JUNIT, filename="junit.xml", content_type="text/xml")
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{base}/api/v1/ingest", data=form) as resp,
    ):
        if resp.status != 201:
            raise RuntimeError(f"ingest answered {resp.status}: {await resp.text()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--hello", type=int, help=argparse.SUPPRESS)  # run the baseline server
    parser.add_argument("--layers", default="", help=argparse.SUPPRESS)
    parser.add_argument(
        "--no-price-layers",
        dest="price_layers",
        action="store_false",
        help="skip what each layer of the request path costs (shown only, never judged)",
    )
    # Quick: one-second slices (each still thousands of requests) in more turns, and no layer
    # prices (a third of the full run's time, and not a target): about 50 s instead of 110 s.
    args = options(
        parser,
        quick={"seconds": 1, "pairs": 5, "price_layers": False},
        smoke={"seconds": 1, "pairs": 1, "connections": 10},
    )
    out = Report.of("throughput", args)
    if args.seconds < 1 or args.pairs < 1:
        parser.error("--seconds and --pairs must be at least 1")
    if args.hello:
        hello_world(args.hello, [layer for layer in args.layers.split(",") if layer])
        return 0
    binary = ensure_wrk()
    ports = {name: free_port() for name in ("hello", "chartsvc", "results", "console")}
    layered = {layer: free_port() for layer in LAYERS} if args.price_layers else {}
    with tempfile.TemporaryDirectory(prefix="wharf-bench-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        hello = [sys.executable, __file__, "--hello", str(ports["hello"])]
        commands = {
            "hello": hello,
            "chartsvc": serve("chartsvc", ports["chartsvc"], f"chartsvc.data-dir={work / 'c'}"),
            "results": serve("results", ports["results"], f"results.data-dir={work / 'r'}"),
            "console": serve(
                "console",
                ports["console"],
                f"console.data-dir={work / 'console'}",
                "console.clusters.warm-up=false",
            ),
        }
        for count, layer in enumerate(layered, start=1):
            on = ",".join(LAYERS[:count])
            commands[layer] = [*hello[:-1], str(layered[layer]), "--layers", on]
        servers = {
            name: stack.enter_context(process(command, work / f"{name}.log"))
            for name, command in commands.items()
        }
        asyncio.run(prepare(ports))
        asyncio.run(wait_all(layered.values()))
        for name, server in servers.items():
            print(f"{name:12} event loop {server.event_loop()}")
        base = "http://127.0.0.1:{}"
        targets = [
            ("chartsvc GET /api/v1/repos", "chartsvc", "/api/v1/repos"),
            ("console GET /api/v1/clusters", "console", "/api/v1/clusters"),
            ("results GET /api/v1/gate", "results", "/api/v1/gate?project=demo&branch=main"),
            ("chartsvc liveness probe", "chartsvc", "/actuator/health/liveness"),
        ]
        urls = {"hello": base.format(ports["hello"]) + "/"}
        urls |= {layer: base.format(port) + "/" for layer, port in layered.items()}
        urls |= {name: base.format(ports[service]) + path for name, service, path in targets}
        owner = {name: servers[service] for name, service, _ in targets}

        def measure(name: str, seconds: int = args.seconds) -> Measured:
            server = owner.get(name) or servers[name]
            return wrk(binary, urls[name], server, seconds=seconds, connections=args.connections)

        for name in urls if not args.smoke else ():  # warm-up: caches, code paths taken once
            measure(name, seconds=1)
        runs: dict[str, list[Measured]] = {name: [] for name in urls}
        shares: dict[str, list[float]] = {name: [] for name in urls}
        hello_slice = partial(measure, "hello")
        if args.smoke:  # one hello-world slice for every endpoint: nothing is judged
            hello_slice = partial(lambda measured: measured, measure("hello"))
        for turn in range(args.pairs):
            for name in [name for name in urls if name != "hello"]:
                before, got = in_turn(hello_slice, partial(measure, name), turn)
                runs["hello"].append(before)
                runs[name].append(got)
                shares[name].append(got.rate / before.rate)
        baseline = summary(runs["hello"])
        print(baseline.line("aiohttp hello-world (no access log)"))
        previous = baseline
        for layer in layered:  # what each part of the request path costs
            got = summary(runs[layer])
            cost = got.cpu_us - previous.cpu_us
            line = got.line("  + " + layer) + f"  {spread(shares[layer])}  {cost:+5.0f} us CPU"
            print(line, flush=True)
            previous = got
        floor = f"hello-world: {baseline.rate:.0f} req/s, {baseline.cpu_us:.0f} us CPU"
        for name, _, _ in targets:
            share = statistics.median(shares[name])
            verdict = "ok" if share >= TARGET else f"below {TARGET:.0%}"
            print(
                f"{summary(runs[name]).line(name)}  {spread(shares[name])}  {verdict}", flush=True
            )
            out.figure(
                f"{name}, req/s share", share * 100, "%", at_least=TARGET * 100, baseline=floor
            )
            cpu = summary(runs[name]).cpu_us
            out.figure(f"{name}, CPU per request", cpu / baseline.cpu_us, "x", baseline=floor)
        written = sum(s.log.read_bytes().count(b" aiohttp.access ") for s in servers.values())
        print(f"access log lines written: {written}")
    return out.emit()


if __name__ == "__main__":
    sys.exit(main())
