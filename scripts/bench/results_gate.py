"""Benchmark: ``GET /api/v1/gate`` latency with 100,000 runs in the database.

Seeds a database through the store's own schema (``open_store``) with ``--runs`` runs spread over
20 projects, 50 branches each, two flags, each run with a few test cases (some failing) and line
totals; then serves it with ``wharf serve results`` in a child process and times sequential gate
calls over real HTTP: by commit (with a baseline on main), by branch, and with ``baseSha``.
The baseline, measured in the same run against the same server, is ``GET
/actuator/health/liveness``: the cost of an aiohttp round trip that does no work.

Target: gate p50 under 10 ms, on SQLite and on PostgreSQL (``--postgresql``: a server started
for the run, as the test suite starts one). Exits 1 when missed. Usage:
``.venv/bin/python scripts/bench/results_gate.py [--runs 100000 --calls 600] [--postgresql]``.
This script must not be imported by the service.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the suite's PostgreSQL launcher, tests.pgserver, is not installed

from harness import percentile, running_results, timed_get  # noqa: E402 - sibling
from report import Report, options  # noqa: E402 - sibling

from results.store import open_store  # noqa: E402 - after the path set-up above
from tests import pgserver  # noqa: E402 - the suite's PostgreSQL launcher

P50_TARGET_MS = 10.0
PROJECTS, BRANCHES, FLAGS, CASES = 20, 50, ("default", "unit"), 4


def commit_of(n: int) -> str:
    return f"{n * 2654435761 % (1 << 64):016x}{n:024x}"


def run_rows(runs: int, rng: random.Random) -> list[tuple[Any, ...]]:
    rows = []
    for n in range(runs):
        project = n % PROJECTS + 1
        branch = "main" if rng.random() < 0.3 else f"feature/{rng.randrange(BRANCHES)}"
        failures = 1 if rng.random() < 0.2 else 0
        valid = 10_000
        covered = rng.randrange(6000, 9000)
        status = "FAILED" if failures else "PASSED"
        stamp = f"2026-01-01T00:00:{n % 60:02d}Z"
        rows.append(
            (project, branch, commit_of(n), FLAGS[n % 2], stamp, stamp, status, CASES,
             CASES - failures, failures, covered, valid, 1)
        )  # fmt: skip
    return rows


Run = tuple[int, str, str, str]  # project number, branch, commit, flag


async def seed(url: str | Path, runs: int) -> list[Run]:
    """Returns every run's identity, for picking queries."""
    rng = random.Random(11)
    rows = run_rows(runs, rng)
    async with open_store(url) as store:
        async with store.db.transaction() as conn:
            padded = (
                "printf('%064d', id)" if store.db.backend == "sqlite" else "lpad(id::text, 64, '0')"
            )
            await conn.executemany(
                "INSERT INTO projects (name, created_at) VALUES (?, 'now')",
                [(f"project-{p}",) for p in range(1, PROJECTS + 1)],
            )
            columns = ("project_id", "branch", "commit_sha", "flag", "created_at", "updated_at",
                       "status", "tests", "passed", "failures", "lines_covered", "lines_valid",
                       "uploads")  # fmt: skip
            await conn.copy_rows("runs", columns, rows)
            uploads = f"SELECT id, 'junit', {padded}, 'generic', 1, 'now' FROM runs"  # noqa: S608
            await conn.execute(
                f"INSERT INTO uploads (run_id, kind, sha256, format, size, created_at) {uploads}"
            )
            await conn.execute(
                "INSERT INTO tests (project_id, key, suite, classname, name, first_run_id)"
                " SELECT p.id, 'C t' || c.n, 's', 'C', 't' || c.n, 1 FROM projects p,"
                " (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) c"
            )
            await conn.execute(
                "INSERT INTO test_cases (run_id, upload_id, test_id, status)"
                " SELECT r.id, r.id, t.id,"
                " CASE WHEN t.name = 't0' AND r.failures > 0 THEN 'failed' ELSE 'passed' END"
                " FROM runs r JOIN tests t ON t.project_id = r.project_id"
            )
        if store.db.backend == "postgresql":  # what autovacuum does soon after a bulk load
            await store.db.write("ANALYZE")
    return [(row[0], row[1], row[2], row[3]) for row in rows]


def queries(runs: list[Run], calls: int) -> list[dict[str, str]]:
    """Every third call each: by commit, by branch, by commit with a baseSha on main."""
    rng = random.Random(5)
    mains = [r for r in runs if r[1] == "main"]
    out = []
    for k in range(calls):
        project, branch, commit, flag = rng.choice(runs)
        params = {"project": f"project-{project}", "flag": flag}
        if k % 3 == 1:
            params["branch"] = branch
        else:
            params["commit"] = commit
        if k % 3 == 2:
            params["baseSha"] = rng.choice(mains)[2]
        out.append(params)
    return out


async def measure(
    data_dir: Path, runs: list[Run], calls: int, db_url: str | None
) -> dict[str, Any]:
    async with (
        running_results(data_dir, db_url=db_url) as server,
        aiohttp.ClientSession() as session,
    ):
        base = server.base
        plan = queries(runs, calls)
        for params in plan[:50]:  # warm-up: imports, page cache, prepared statements
            await timed_get(session, f"{base}/api/v1/gate", params)
        gate = [await timed_get(session, f"{base}/api/v1/gate", q) for q in plan]
        live = [await timed_get(session, f"{base}/actuator/health/liveness", {}) for _ in plan]
    return {"gate": gate, "liveness": live}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument(
        "--postgresql", action="store_true", help="on a PostgreSQL server started for the run"
    )
    args = options(parser, quick={"runs": 5000, "calls": 200}, smoke={"runs": 50, "calls": 10})
    out = Report.of("results_gate", args)
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        data_dir = Path(tmp, "data")
        db_url: str | None = None
        if args.postgresql:
            server = pgserver.start()
            stack.callback(server.stop)
            db_url = server.new_database()
        started = time.perf_counter()
        runs = asyncio.run(seed(db_url or data_dir / "results.db", args.runs))
        print(f"seeded {args.runs} runs ({args.runs * CASES} test cases) on "
              f"{'PostgreSQL' if db_url else 'SQLite'} in "
              f"{time.perf_counter() - started:.1f} s")  # fmt: skip
        figures = asyncio.run(measure(data_dir, runs, args.calls, db_url))
    gate, live = figures["gate"], figures["liveness"]
    p50, p95 = statistics.median(gate), percentile(gate, 0.95)
    base50 = statistics.median(live)
    print(f"  gate       p50 {p50:6.2f} ms   p95 {p95:6.2f} ms   ({len(gate)} calls)")
    print(f"  liveness   p50 {base50:6.2f} ms   (baseline: a round trip doing no work)")
    print(f"ratio gate / liveness p50: {p50 / base50:.2f}x")
    print(f"gate p50: {p50:.2f} ms (target < {P50_TARGET_MS} ms)")
    out.figure(f"gate p50 over {args.runs} runs", p50, "ms", at_most=P50_TARGET_MS)
    out.figure("gate / liveness p50", p50 / base50, "x", baseline="liveness round trip")
    return out.emit()


if __name__ == "__main__":
    sys.exit(main())
