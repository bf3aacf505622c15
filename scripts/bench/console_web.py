"""Benchmark: the console's pages in headless Chromium — a list of 1,000 pods, a followed log.

Targets (issue 34), measured in the browser with the Performance API:

1. **List page.** A static simulator holds ``--pods`` pods; the page ``#/c/list/r/pods`` is loaded
   ``--rounds`` times. Per load: from the end of the rows' answer (the resource timing's
   ``responseEnd`` of ``…/resources/pods``) to the mark ``wharf:list-interactive`` that the list
   page sets once its rows are painted and the main thread takes input again. Target: median
   < 1,000 ms.
2. **Followed log.** A live simulator runs the Deployment of ``console_logs_multi`` (24 pods at
   1,000 lines/s in all); the page follows its logs, and once the start-up tails are drawn
   (``SETTLE_S``), for ``--seconds`` more, every 250 ms the benchmark
   reads how many lines the page has drawn and the timestamp of the newest one. Figures: the rate
   drawn over the window (target: at least 90 % of the simulator's rate), the lag of the newest
   line drawn behind the wall clock (p99 < 1,000 ms, including the stream's own quarter-second
   ordering window), and the lines kept in the page (at most the page's cap, 5,000).

Chromium is the OS package's (``/usr/bin/chromium``, or ``WHARF_CHROMIUM``), driven by Playwright.
Run: ``.venv/bin/python scripts/bench/console_web.py [--pods 1000] [--rounds 5] [--seconds 15]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from console_logs_multi import NAMESPACE, PODS, RATE, seed, stamp_seconds
from harness import console_bench_main, free_port, kube_api, percentile, running_console
from playwright.async_api import Browser, Page, async_playwright
from report import Report

from kubesim import Simulator
from kubesim.machinery.timings import Timings

CHROMIUM = os.environ.get("WHARF_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
#: The logs page's cap on the lines it keeps (``LIMIT`` in console/web/static/logs.js).
LOG_LIMIT = 5000
#: Seconds of the log run not measured: the 24 sources connect and their tails (100 lines each)
#: are drawn; on a loaded machine that catch-up took up to 5 s (``--settle``).
SETTLE_S = 6.0


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield browser
        finally:
            await browser.close()


async def signed_in_page(browser: Browser, base: str) -> Page:
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    answer = await page.request.post(
        f"{base}/api/v1/auth/session", headers={"Authorization": "Basic YWRtaW46YmVuY2g="}
    )  # admin:bench, the harness's admin
    if answer.status != 200:
        raise SystemExit(f"signing in answered {answer.status}")
    return page


async def create_pods(api: Any, count: int) -> None:
    from kubernetes_asyncio import client

    core: Any = client.CoreV1Api(api)
    await core.create_namespace({"metadata": {"name": "list"}})
    container = {"name": "main", "image": "busybox:1.36"}
    semaphore = asyncio.Semaphore(16)

    async def one(index: int) -> None:
        body = {"metadata": {"name": f"pod-{index:05d}", "labels": {"app": f"a{index % 7}"}},
                "spec": {"containers": [container]}}  # fmt: skip
        async with semaphore:
            await core.create_namespaced_pod("list", body)

    await asyncio.gather(*(one(i) for i in range(count)))


INTERACTIVE = """async () => {
  const mark = "wharf:list-interactive";
  while (!performance.getEntriesByName(mark).length) await new Promise(r => setTimeout(r, 20));
  const rows = performance.getEntriesByType("resource")
    .filter(e => new URL(e.name).pathname.endsWith("/resources/pods"));
  return [rows[0].responseEnd, performance.getEntriesByName(mark)[0].startTime,
          document.querySelectorAll("#rows tbody tr").length];
}"""


async def list_page(args: argparse.Namespace, browser: Browser, out: Report) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp, Simulator(Path(tmp), context="list") as sim:
        async with kube_api(sim.kubeconfig_path) as api:
            print(f"creating {args.pods} pods", file=sys.stderr, flush=True)
            await create_pods(api, args.pods)
        with running_console(__file__, sim.kubeconfig_path, port, f"{tmp}/console"):
            page = await signed_in_page(browser, base)
            times: list[float] = []
            for _ in range(args.rounds):
                await page.goto(f"{base}/#/c/list/r/pods")
                answered, interactive, shown = await page.evaluate(INTERACTIVE)
                if shown < args.pods:
                    raise SystemExit(f"the page showed {shown} rows of {args.pods}")
                times.append(interactive - answered)
                await page.goto("about:blank")
            await page.context.close()
    median = statistics.median(times)
    print(f"list of {args.pods} pods: interactive {median:.0f} ms after the answer (median of "
          f"{len(times)}: {', '.join(f'{t:.0f}' for t in times)})")  # fmt: skip
    out.figure(f"list page of {args.pods} pods, answer to interactive, median", median, "ms",
               at_most=1000)  # fmt: skip


PROGRESS = """() => {
  const log = document.getElementById("log");
  return log ? [Number(log.dataset.received || 0), log.dataset.latest || "",
                log.querySelectorAll("div").length, Date.now()] : [0, "", 0, Date.now()];
}"""


async def followed_log(args: argparse.Namespace, browser: Browser, out: Report) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    timings = Timings(log_interval=PODS / RATE)
    with (
        tempfile.TemporaryDirectory() as tmp,
        Simulator(Path(tmp), context="logs", nodes=1, timings=timings) as sim,
    ):
        async with kube_api(sim.kubeconfig_path) as api:
            print("starting the logging pods", file=sys.stderr, flush=True)
            await seed(api)
        with running_console(__file__, sim.kubeconfig_path, port, f"{tmp}/console"):
            page = await signed_in_page(browser, base)
            await page.goto(f"{base}/#/c/logs/logs/{NAMESPACE}/deployments/logger")
            await page.wait_for_function(
                "() => Number(document.getElementById('log')?.dataset.received) > 0"
            )
            await asyncio.sleep(args.settle)
            deadline = time.monotonic() + args.seconds
            samples = [await page.evaluate(PROGRESS)]
            while time.monotonic() < deadline or len(samples) < 2:  # a rate needs two, however slow
                await asyncio.sleep(0.25)
                samples.append(await page.evaluate(PROGRESS))
            await page.context.close()
    first, _, _, started = samples[0]
    last, _, _, ended = samples[-1]
    rate = (last - first) / ((ended - started) / 1000)
    series = [now - stamp_seconds(latest) * 1000 for _, latest, _, now in samples if latest]
    third = max(1, len(series) // 3)
    print(f"lag over the run: first third mean {statistics.mean(series[:third]):.0f} ms, last "
          f"third mean {statistics.mean(series[-third:]):.0f} ms")  # fmt: skip
    lags = sorted(series)
    kept = max(sample[2] for sample in samples)
    print(f"followed log at {RATE} lines/s: drawn {rate:.0f} lines/s; lag of the newest line p50 "
          f"{percentile(lags, 0.5):.0f} ms, p99 {percentile(lags, 0.99):.0f} ms; at most "
          f"{kept} lines kept (cap {LOG_LIMIT})")  # fmt: skip
    out.figure(f"followed log at {RATE} lines/s, lines drawn per second", rate, "lines/s",
               at_least=0.9 * RATE)  # fmt: skip
    out.figure("followed log, newest line's lag p99", percentile(lags, 0.99), "ms", at_most=1000)
    out.figure("followed log, lines kept in the page", kept, "", at_most=LOG_LIMIT)


async def bench(args: argparse.Namespace) -> None:
    async with chromium() as browser:  # one browser; each page has a context of its own
        await list_page(args, browser, args.report)
        await followed_log(args, browser, args.report)


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--settle", type=float, default=SETTLE_S, help="seconds not measured")


if __name__ == "__main__":
    console_bench_main(
        __doc__,
        bench,
        options,
        name="console_web",
        # The settling seconds and 5 s more at 1,000 lines/s still pass the page's 5,000-line cap,
        # which the quick run judges.
        quick={"pods": 1000, "rounds": 3, "seconds": 5.0},
        # Smoke: the log drawn for a second once the first line is; its figures mean nothing.
        smoke={"pods": 50, "rounds": 1, "seconds": 1.0, "settle": 0.5},
    )
