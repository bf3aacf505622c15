"""Benchmark: trends, test history and flaky tests of a project with 10,000 runs, over real HTTP.

Seeds a database through the store's own schema (``open_store``): a project ``big`` with
``--runs`` runs (main and feature branches, two flags, 5 % CI retries of a commit) of ``--tests``
test cases each, a few failing, flaky on a rerun, or failing then passing on a retry of the same
commit, and 20 coverage files per run; and a project ``small`` with 100 such runs. Then
``wharf serve results`` in a child process serves it, three more runs of ``big`` are ingested over
HTTP (the real write path), and sequential requests are timed:

- the trends page and ``GET /api/v1/projects/{id}/trends`` (100 runs);
- a test's history: ``GET .../tests/{id}/history`` (its newest 100 runs) and its page;
- the flaky tests page (newest 100 runs) and a run's page (its place in the trend).

Baselines, measured in the same run against the same server: the same requests on ``small``
(each request reads at most its newest 100 runs, so the ratio shows what the other 9,900 runs
cost: nothing, when the queries stay on their indexes), and ``GET /actuator/health/liveness`` (a round
trip doing no work). Targets: trends page p50 < 50 ms, history (API) p50 < 20 ms, with 10,000 runs.
Exits 1 when missed. Usage:
``.venv/bin/python scripts/bench/results_history.py [--runs 10000 --tests 200 --calls 200]``.
This script must not be imported by the service.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from harness import percentile, running_results, timed_get
from report import Report, options

from results.store import open_store

TRENDS_TARGET_MS = 50.0
HISTORY_TARGET_MS = 20.0
SMALL_RUNS = 100
FILES = 20


class Seeder:
    """Rows of one project's runs, as the ingest would have written them."""

    def __init__(self, project_id: int, tests: int, first_test_id: int, seed: int) -> None:
        self.project_id = project_id
        self.tests = tests
        self.first_test_id = first_test_id
        self.rng = random.Random(seed)
        self.runs: list[tuple[Any, ...]] = []
        self.uploads: list[tuple[Any, ...]] = []
        self.cases: list[tuple[Any, ...]] = []
        self.files: list[tuple[Any, ...]] = []
        self.commit = ""

    def test_rows(self) -> list[tuple[Any, ...]]:
        return [
            (self.first_test_id + t, self.project_id, f"com.example.pkg{t % 20}.Class{t % 50} "
             f"test{t}", "suite", f"com.example.pkg{t % 20}.Class{t % 50}", f"test{t}", 1)
            for t in range(self.tests)
        ]  # fmt: skip

    def add_run(self, run_id: int) -> None:
        rng = self.rng
        retry = bool(self.commit) and rng.random() < 0.05
        if not retry:
            self.commit = f"{rng.getrandbits(160):040x}"
        branch = "main" if rng.random() < 0.8 else f"feature/{rng.randrange(40)}"
        flag = "default" if rng.random() < 0.9 else "integration"
        counts = dict.fromkeys(("passed", "failed", "error", "skipped", "flaky"), 0)
        total_ms = 0
        for t in range(self.tests):
            roll = rng.random()
            status = (
                "failed" if roll < 0.004 or (retry is False and t == 7 and roll < 0.3) else
                "flaky" if roll < 0.01 else "skipped" if roll < 0.02 else "passed"
            )  # fmt: skip
            counts[status] += 1
            ms = rng.randrange(5, 400)
            total_ms += ms
            self.cases.append(
                (run_id, run_id * 2, self.first_test_id + t, status, ms,
                 "boom" if status in ("failed", "flaky") else None,
                 1 if status == "flaky" else 0)
            )  # fmt: skip
        covered = 0
        for f in range(FILES):
            hit = rng.randrange(60, 100)
            covered += hit
            self.files.append(
                (run_id, f"src/module{f}.py", hit, 100, 0, 0, f"1-{hit}", f"{hit + 1}-100", "")
            )
        passed = counts["passed"] + counts["flaky"]
        status = "FAILED" if counts["failed"] else "PASSED"
        self.runs.append(
            (run_id, self.project_id, branch, self.commit, flag, "2026-01-01T00:00:00Z",
             "2026-01-01T00:00:00Z", status, self.tests, passed, counts["failed"], 0,
             counts["skipped"], counts["flaky"], total_ms, covered, FILES * 100, 2)
        )  # fmt: skip
        for kind, number in (("junit", run_id * 2), ("coverage", run_id * 2 + 1)):
            self.uploads.append((number, run_id, kind, f"{number:064x}", "generic", 1, "now"))


async def seed(path: Path, runs: int, tests: int) -> None:
    big = Seeder(1, tests, 1, seed=3)
    small = Seeder(2, tests, tests + 1, seed=4)
    for run_id in range(1, runs + 1):
        big.add_run(run_id)
    for run_id in range(runs + 1, runs + SMALL_RUNS + 1):
        small.add_run(run_id)
    async with open_store(path) as store, store.db.transaction() as conn:
        await conn.execute(
            "INSERT INTO projects (id, name, created_at) VALUES (1, 'big', 'now'), (2, 'small', 'now')"
        )
        for s in (big, small):
            await conn.executemany(
                "INSERT INTO tests (id, project_id, key, suite, classname, name, first_run_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                s.test_rows(),
            )
            await conn.executemany(
                "INSERT INTO runs (id, project_id, branch, commit_sha, flag, created_at,"
                " updated_at, status, tests, passed, failures, errors, skipped, flaky, duration_ms,"
                " lines_covered, lines_valid, uploads)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                s.runs,
            )
            await conn.executemany(
                "INSERT INTO uploads (id, run_id, kind, sha256, format, size, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                s.uploads,
            )
            await conn.executemany(
                "INSERT INTO test_cases (run_id, upload_id, test_id, status, duration_ms, message,"
                " reruns) VALUES (?, ?, ?, ?, ?, ?, ?)",
                s.cases,
            )
            await conn.executemany(
                "INSERT INTO coverage_files (run_id, path, lines_covered, lines_valid,"
                " branches_covered, branches_valid, covered, uncovered, branches)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                s.files,
            )


def report_xml(tests: int, seed: int) -> bytes:
    rng = random.Random(seed)
    rows = []
    for t in range(tests):
        body = '<failure message="boom">trace</failure>' if rng.random() < 0.01 else ""
        rows.append(
            f'<testcase classname="com.example.pkg{t % 20}.Class{t % 50}" name="test{t}" '
            f'time="0.{rng.randrange(10, 99)}">{body}</testcase>'
        )
    return f'<testsuite name="suite">{"".join(rows)}</testsuite>'.encode()


async def ingest(session: aiohttp.ClientSession, base: str, tests: int, n: int) -> None:
    form = aiohttp.FormData()
    for name, value in (("project", "big"), ("branch", "main"), ("commit", f"{n:040x}")):
        form.add_field(name, value)
    form.add_field("junit", report_xml(tests, n), filename="r.xml", content_type="text/xml")
    async with session.post(f"{base}/api/v1/ingest", data=form) as resp:
        if resp.status != 201:
            raise RuntimeError(f"ingest answered {resp.status}: {await resp.text()}")


def targets(project: int, test: int, run: int) -> dict[str, str]:
    return {
        "trends page": f"/projects/{project}/trends",
        "trends API": f"/api/v1/projects/{project}/trends?branch=main",
        "history API": f"/api/v1/projects/{project}/tests/{test}/history",
        "history 1000": f"/api/v1/projects/{project}/tests/{test}/history?limit=1000",
        "history page": f"/projects/{project}/tests/{test}",
        "flaky page": f"/projects/{project}/flaky",
        "run page": f"/runs/{run}",
    }


async def measure(data_dir: Path, runs: int, tests: int, calls: int) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {}
    async with running_results(data_dir) as server, aiohttp.ClientSession() as session:
        base = server.base
        for n in range(3):
            await ingest(session, base, tests, n)
        plans = {
            "big": targets(1, 8, runs // 2),
            "small": targets(2, tests + 8, runs + SMALL_RUNS // 2),
        }
        plans["base"] = {"liveness": "/actuator/health/liveness"}
        for plan in plans.values():  # warm-up: imports, templates, the page cache
            for path in plan.values():
                for _ in range(5):
                    await timed_get(session, base + path)
        for _ in range(calls):  # interleaved, so machine load weighs on all alike
            for size, plan in plans.items():
                for name, path in plan.items():
                    figures.setdefault(f"{size}:{name}", []).append(
                        await timed_get(session, base + path)
                    )
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--calls", type=int, default=200)
    args = options(
        parser,
        # Quick: seeding takes half the run; the targets hold by half or more at 1,000 runs.
        quick={"runs": 1000, "calls": 40},
        smoke={"runs": 100, "tests": 20, "calls": 2},
    )
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp, "data")
        started = time.perf_counter()
        asyncio.run(seed(data_dir / "results.db", args.runs, args.tests))
        print(
            f"seeded {args.runs} runs of {args.tests} tests ({args.runs * args.tests} test cases),"
            f" and {SMALL_RUNS} runs of another, in {time.perf_counter() - started:.1f} s"
        )
        figures = asyncio.run(measure(data_dir, args.runs, args.tests, args.calls))
    return summary(figures, args.runs, Report.of("results_history", args))


def summary(figures: dict[str, list[float]], runs: int, out: Report) -> int:
    live = statistics.median(figures["base:liveness"])
    print(f"p50 / p95 over {len(figures['base:liveness'])} calls each, sequential:")
    print(f"  {'':14} {runs:>6} runs            {SMALL_RUNS:>3} runs       ratio")
    for name in targets(0, 0, 0):
        big, small = figures[f"big:{name}"], figures[f"small:{name}"]
        print(
            f"  {name:14} {statistics.median(big):6.2f} / {percentile(big, 0.95):6.2f} ms"
            f"   {statistics.median(small):6.2f} ms   {statistics.median(big) / statistics.median(small):5.2f}x"
        )
    print(f"  liveness       {live:6.2f} ms (a round trip doing no work)")
    trends = statistics.median(figures["big:trends page"])
    history = statistics.median(figures["big:history API"])
    print(f"trends page p50 {trends:.2f} ms (target < {TRENDS_TARGET_MS} ms), "
          f"{trends / live:.1f}x liveness")  # fmt: skip
    print(f"history p50 {history:.2f} ms (target < {HISTORY_TARGET_MS} ms), "
          f"{history / live:.1f}x liveness")  # fmt: skip
    out.figure(f"trends page p50, {runs} runs", trends, "ms", at_most=TRENDS_TARGET_MS)
    out.figure(f"history API p50, {runs} runs", history, "ms", at_most=HISTORY_TARGET_MS)
    out.figure("trends page / liveness p50", trends / live, "x", baseline="liveness round trip")
    return out.emit()


if __name__ == "__main__":
    sys.exit(main())
